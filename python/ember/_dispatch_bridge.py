"""How ember's calls reach TorchDispatchModes (Note [Dispatch modes]
torch runs a TorchDispatchMode below autograd, once per ATen overload the dispatcher reaches.
ember reaches the modes at two levels:

- The dispatcher's hook (Note [Python dispatch hook] in csrc/ember/dispatch/python_dispatch.h):
  while this thread has a mode on, every op C++ calls through its dispatcher entry (an op's
  C++ composite parts, the C++ backward formulas the autograd engine runs, the ops of a C++
  optimizer) is boxed and handed to ``from_dispatcher``, which names it as its overload
  (``ember.ops.aten.mul.Tensor``: the registry holds torch's ATen names), splits its arguments
  as torch does (positional, then the keyword-only ones; trailing defaults left out) and sends
  it down the modes. Past the last mode, ``func(*args)`` with the arguments the hook gave runs
  the op below the hook (the continuation ``below``); other arguments run it through its public
  function.
- A public call: while a dispatch mode is active, a function mode (``_Bridge``, on the
  interception ember.compile and make_fx already use) sees every public ember call and hands it
  on as the aten overloads torch's dispatcher would run, with make_fx's rules
  (``fx/experimental/_aten_rewrite.py``: ``linear`` as ``t`` + ``addmm``, batched ``matmul`` as
  ``bmm``, ``softmax`` as ``_softmax``) or else the registry overload whose schema the call fits
  (``proxy_tensor.find_overload``). Calls ember computes natively where torch's dispatcher
  reaches other overloads (``F.batch_norm``, ``F.dropout``, ``Tensor.item``, tensors from Python
  data) have bridge-only rules (``_dispatch_rules.py``); an ``out=`` call takes its ``.out``
  overload. A call that maps to no overload runs as it is, and the hook shows the ops its C++
  runs.

Either way the overload goes down the stack of dispatch modes, innermost first, each mode
switched off while its ``__torch_dispatch__`` runs (and the thread's hook off once none is left),
so ``func(*args)`` reaches the next mode out and, past the last, ember's kernel, whose own
internal ops no mode sees, as in torch. A direct call of ``ember.ops.aten.X.Y`` or of a custom op
goes down the same stack.

Backward: the C++ formulas' ops reach the modes through the hook. For ``mm``, ``addmm``, ``bmm``,
``baddbmm``, ``convolution`` (what torch's FlopCounterMode counts) and ``relu``,
``_log_softmax``, ``nll_loss_forward``, ``native_batch_norm`` (a training step's), whose C++
formulas call kernels directly or other ops than torch's, a call that needs a gradient is
wrapped in an autograd.Function whose backward runs torch's backward overloads (``t`` + ``mm``,
``sum.dim_IntList`` + ``view`` for a bias, ``convolution_backward``, ``threshold_backward``,
...) through the modes active when backward runs, as torch's do."""

import threading

from . import _C, _dispatch_hook, _dispatch_rules, overrides

_local = threading.local()


def modes():
    """This thread's dispatch modes, innermost last (the live list)."""
    stack = getattr(_local, "modes", None)
    if stack is None:
        stack = _local.modes = []
    return stack


def _in_handler():
    return getattr(_local, "handling", 0)


class _Bridge(overrides.TorchFunctionMode):
    """The function mode on while dispatch modes are: hands calls to them (the Note)."""

    _ember_internal = True

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if not modes():  # inside the only mode's own handler: ember computes
            return func(*args, **kwargs)
        from ._op_overloads import OpOverload

        if isinstance(func, OpOverload):
            return call_overload(func, args, kwargs)
        name, args = _aten_name(func, args)
        rule = _dispatch_rules.rule_for(func, name)
        if rule is not None:
            try:
                return rule(func, args, kwargs)
            except _dispatch_rules.Unmapped:
                pass
        if name is not None:
            done, value = _as_overloads(name, args, kwargs, func)
            if done:
                return value
        with self:  # a Python composite's parts are seen
            return func(*args, **kwargs)


def enter_bridge():
    """Turns the bridge on for this thread when its first dispatch mode is entered, under the
    function modes already on (they see a call first, as torch's run before dispatch modes)."""
    if getattr(_local, "bridge", None) is None:
        _local.bridge = _Bridge()
        overrides._enter_below(_local.bridge)


def exit_bridge():
    """Turns it off when the last mode is out. Popped inside a handler (the bridge then off
    already, _disable_current_modes), it stays on, passing calls through, until a later pop."""
    bridge = getattr(_local, "bridge", None)
    if bridge is not None and not modes() and overrides._exit_below(bridge):
        _local.bridge = None


# ---- a public call as aten overloads ------------------------------------------------------------

_COMMUTATIVE = frozenset({"__radd__", "__rmul__"})
_METADATA_ONLY = frozenset({"__len__", "__iter__", "__bool__", "__contains__", "__setitem__"})
# make_fx rules whose result is not the public call's (max.dim gives a plain tuple, not values/
# indices): those calls take the registry overload, whose call is the public function.
_NOT_LIVE = frozenset({"max", "min"})


def _aten_name(func, args):
    """(the name make_fx's rules and registry know the call by, its arguments), or (None, args)
    for a call torch's dispatcher never sees (metadata reads, properties)."""
    from ._dynamo import capture

    methods, _ = capture._tables()
    name = methods.get(id(func))
    if name is None:
        if getattr(func, "__name__", None) == "__get__":
            return None, args  # a property: metadata, or a view torch names otherwise
        name = getattr(func, "__name__", None)
        return (name if isinstance(name, str) else None), args
    if name in capture._METADATA or name in capture._SIZES or name in _METADATA_ONLY:
        return None, args
    if name in capture._BINARY:
        return capture._BINARY[name].__name__, args
    if name in _COMMUTATIVE:
        return capture._REFLECTED[name].__name__, args
    if name in capture._REFLECTED:
        return (name if name in _rules() else None), args
    if name in capture._INPLACE:
        return capture._INPLACE[name], args
    if name in capture._UNARY:
        return capture._UNARY[name].__name__, args
    return name, args


def _rules():
    from .fx.experimental import _aten_rewrite

    return _aten_rewrite._RULES


def _as_overloads(name, args, kwargs, func):
    """(True, value) once the call has run as overloads; (False, None) when none fits."""
    from .fx.experimental import _aten_rewrite, proxy_tensor

    rule = _rules().get(name) if name not in _NOT_LIVE else None
    if rule is not None:
        live = _Live()
        try:
            return True, rule(live, *args, **kwargs)
        except (_aten_rewrite._Skip, TypeError, AttributeError, ValueError, RuntimeError,
                IndexError):  # fmt: skip
            if live.calls:  # a mode saw part of it: its error is the call's
                raise
    found = proxy_tensor.find_overload(name, args, kwargs, func) if name.isidentifier() else None
    if found is None and len(args) > 1 and all(type(a) is int for a in args):
        found = proxy_tensor.find_overload(name, (list(args),), kwargs, func)  # zeros(2, 3)
    if found is None:
        return False, None
    op, fitted = found
    return True, op(*fitted, **kwargs)


def _live_builder():
    from .fx.experimental._aten_rewrite import _Builder

    class Live(_Builder):
        """make_fx's rule builder on values: each overload it emits is called, so it goes down
        the dispatch modes, instead of becoming a node."""

        def __init__(self):
            self.calls = 0

        def val(self, a):
            return a

        def emit(self, target, args, kwargs=None):
            import operator

            if target is operator.getitem:
                return args[0][args[1]]
            self.calls += 1
            return target(*args, **(kwargs or {}))

    return Live


_LIVE = []


def _Live():
    if not _LIVE:
        _LIVE.append(_live_builder())
    return _LIVE[0]()


# ---- down the modes ---------------------------------------------------------------------------


def call_overload(op, args, kwargs):
    """An overload called above the modes (autograd's level): wrapped for backward where the
    Note says, then down the modes."""
    if not _in_handler() and _C.is_grad_enabled():
        from . import _dispatch_backward

        if _dispatch_backward.has_formula(op) and _needs_grad(args):
            return _dispatch_backward.Through.apply(op, kwargs, *args)
    return dispatch(op, args, kwargs)


def _needs_grad(args):
    return any(isinstance(a, _C.Tensor) and a.requires_grad for a in args)


def dispatch(op, args, kwargs):
    """Hands ``op`` to the innermost dispatch mode, switched off while it runs; ember's kernel
    when no mode is left."""
    stack = modes()
    if not stack:
        return _dispatch_hook.kernel(op, args, kwargs)
    mode = stack.pop()
    _local.handling = _in_handler() + 1
    if not stack:
        _C._set_python_dispatch(False)
    try:
        rules = op._torch_dispatch_rules
        handler = rules.get(type(mode)) if rules else None
        if handler is None:
            handler = type(mode).__torch_dispatch__
        if stack:  # the handler's own ember calls reach the modes outside it
            with _local.bridge:
                out = handler(mode, op, (), args, kwargs)
        else:
            out = handler(mode, op, (), args, kwargs)
    finally:
        _local.handling -= 1
        stack.append(mode)
        _C._set_python_dispatch(True)
    if out is NotImplemented:
        raise TypeError(
            f"Multiple dispatch failed for '{op.__ember_qualname__}'; all __torch_dispatch__ "
            f"handlers returned NotImplemented:\n\n  - mode object {mode!r}"
        )
    return out
