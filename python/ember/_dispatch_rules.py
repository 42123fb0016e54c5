"""Public calls that TorchDispatchModes see as torch's overloads though make_fx has no rule for
them (Note [Dispatch modes] in _dispatch_bridge.py).

ember computes these in one native kernel (``F.batch_norm``, ``F.dropout``) or reads a value
(``Tensor.item``) where torch's dispatcher reaches other ATen overloads: ``native_batch_norm``
after an empty reserve buffer, ``empty_like`` + ``bernoulli_`` + ``div_`` + ``mul`` for dropout's
mask, ``_local_scalar_dense``, ``lift_fresh`` of a tensor made from Python data, the
``ones_like`` seed of ``loss.backward()``. While a dispatch mode is active the bridge runs these
calls as those overloads instead, with torch's arguments; the overloads compute what the native
call does (dropout's mask draws the generator as the native kernel does, so a seeded program
gives the same values under a mode). A case a rule does not cover (empty inputs, an integer
dropout, p of 0 or 1) raises ``Unmapped`` before any overload runs and the call runs
natively."""

from . import _C

__all__ = ["rule_for", "Unmapped"]


class Unmapped(Exception):
    """The call is outside the rule: it runs as it is."""


def _aten(name, overload):
    from ._op_overloads import ops

    return getattr(getattr(ops.aten, name), overload)


def _item(func, args, kwargs):
    if len(args) != 1 or kwargs:
        raise Unmapped
    return _aten("_local_scalar_dense", "default")(args[0])


def _batch_norm(func, args, kwargs):
    from .nn.functional import _activation

    def bind(input, running_mean, running_var, weight=None, bias=None, training=False,
             momentum=0.1, eps=1e-05):  # fmt: skip
        return input, running_mean, running_var, weight, bias, training, momentum, eps

    input, mean, var, weight, bias, training, momentum, eps = bind(*args, **kwargs)
    if not isinstance(input, _C.Tensor) or input.dim() < 2 or not input.numel():
        raise Unmapped
    # F.batch_norm's own checks first, so errors stay its
    if training:
        _activation._verify_batch_size(input.size())
    _activation._check_running_stats(input, mean, var, training)
    if training:
        mean, var = _activation._unaliased(mean), _activation._unaliased(var)
    reserve = _aten("empty", "memory_format")
    e = _e()
    reserve([0], dtype=e.uint8, layout=e.strided, device=input.device)
    momentum = 0.0 if momentum is None else momentum
    out = _aten("native_batch_norm", "default")(
        input, weight, bias, mean, var, bool(training), momentum, eps
    )
    return out[0]


def _dropout(func, args, kwargs):
    def bind(input, p=0.5, training=True, inplace=False):
        return input, p, training, inplace

    input, p, training, inplace = bind(*args, **kwargs)
    if not (training and isinstance(input, _C.Tensor) and input.numel()):
        raise Unmapped
    if not (isinstance(p, (int, float)) and 0 < p < 1 and input.dtype.is_floating_point):
        raise Unmapped
    keep = 1 - p
    mask = _aten("empty_like", "default")(input)
    _aten("bernoulli_", "float")(mask, keep)
    _aten("div_", "Scalar")(mask, keep)
    return _aten("mul_" if inplace else "mul", "Tensor")(input, mask)


def _backward(func, args, kwargs):
    """``loss.backward()`` seeds the engine with torch's ``ones_like`` of the loss; an explicit
    gradient, a non-scalar or a tensor without grad runs natively (and raises its error)."""

    def bind(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        return self, gradient, retain_graph, create_graph, inputs

    self, gradient, retain_graph, create_graph, inputs = bind(*args, **kwargs)
    if gradient is not None or not isinstance(self, _C.Tensor):
        raise Unmapped
    if not self.requires_grad or self.numel() != 1:
        raise Unmapped
    seed = _aten("ones_like", "default")(self, pin_memory=False, memory_format=_e().preserve_format)
    return func(self, seed, retain_graph, create_graph, inputs)


def _lift_fresh(func, args, kwargs):
    """A tensor made from Python data (``ember.tensor([1.0])``) reaches modes as torch's
    ``lift_fresh`` of the new tensor; one made from a tensor does not."""
    if not args or isinstance(args[0], _C.Tensor):
        raise Unmapped
    return _aten("lift_fresh", "default")(func(*args, **kwargs))


def _e():
    import sys

    return sys.modules["ember"]


_BY_FUNCTION = []  # {id(public function): rule}, built on first use


def rule_for(func, name):
    """The rule for ``func`` (the original public function called, or a Tensor method by
    ``name``), or None."""
    if name == "item":
        return _item
    if name == "backward":
        return _backward
    if not _BY_FUNCTION:
        from .overrides import original

        e = _e()
        F = e.nn.functional
        rules = {
            F.batch_norm: _batch_norm,
            F.dropout: _dropout,
            e.tensor: _lift_fresh,
            e.as_tensor: _lift_fresh,
        }  # while a mode is on, the namespaces hold routing wrappers: keyed by the originals
        _BY_FUNCTION.append({id(original(f)): rule for f, rule in rules.items()})
    return _BY_FUNCTION[0].get(id(func))
