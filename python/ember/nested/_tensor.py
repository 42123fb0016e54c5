"""NestedTensor: a batch of tensors of different sizes, in torch's two layouts.

A nested tensor is a Python subclass of ember.Tensor whose C++ tensor is its buffer, as torch
stores it: for ``ember.strided`` the components flattened and concatenated (1-D), for
``ember.jagged`` the components concatenated along their first (ragged) dim, ``values()``, with
``offsets()`` marking where each starts. dtype, device, requires_grad and autograd are the
buffer's own; components are views of it. Operations reach the class through
``__torch_function__`` (the subclass dispatch mode, installed when the first nested tensor is
made): elementwise ops that torch runs on the layout apply to the buffer and keep the structure;
any other op raises torch's NotImplementedError.
"""

import builtins
import math
import sys

from .. import _process
from .._C import Tensor
from ._jagged_ops import JAGGED_OPS

__all__ = ["NestedTensor", "jagged", "make"]

jagged = _process.layout("jagged")

# Elementwise ops torch 2.13 runs on both layouts; the jagged layout runs more of them.
_UNARY_BOTH = frozenset(
    "relu relu_ gelu silu sin cos tanh neg abs sqrt clone detach to float double half "
    "bfloat16 __neg__ __abs__ requires_grad_ contiguous".split()
)
_UNARY_JAGGED = frozenset("exp log sigmoid sigmoid_ exp_ log1p expm1 square rsqrt".split())
_BINARY_BOTH = frozenset(
    "add sub mul div true_divide __add__ __radd__ __sub__ __mul__ __rmul__ __truediv__ "
    "add_ sub_ mul_ div_ __iadd__ __isub__ __imul__ __itruediv__".split()
)
_BINARY_JAGGED = frozenset("rsub __rsub__ __rtruediv__ pow __pow__ maximum minimum".split())
# What reads or routes the tensor itself rather than computing on it.
_PASSTHROUGH = frozenset(
    "__get__ __set__ dtype device requires_grad grad_fn is_leaf backward retain_grad "
    "is_floating_point element_size get_device".split()
)

_ragged_ids = [0]  # torch names each new ragged size j1, j2, ... in creation order


class RaggedSize:
    """The size of a jagged tensor's ragged dim in its shape (torch's symbolic j1, j2, ...):
    equal only to itself, printed by name."""

    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name

    def __repr__(self):
        return self.name

    def __eq__(self, other):
        return isinstance(other, RaggedSize) and other.name == self.name

    def __hash__(self):
        return hash(self.name)


def _ember():
    return sys.modules["ember"]


def _plain(t):
    """The buffer under ``t`` typed a plain Tensor (the same C++ tensor, one autograd identity)."""
    out = Tensor.__new__(Tensor)
    Tensor.__init__(out, t)
    return out


def _not_supported(name):
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'NestedTensorCPU' backend. "
        "This could be because the operator doesn't exist for this backend."
    )


class NestedTensor(Tensor):
    """A nested tensor (``is_nested``), made by ember.nested.nested_tensor or
    as_nested_tensor."""

    def __new__(cls, *args, **kwargs):
        return Tensor.__new__(cls)

    def __init__(self, *args, **kwargs):
        pass

    @property
    def is_nested(self):
        return True

    @property
    def layout(self):
        return self._layout

    @property
    def shape(self):
        if self._layout is jagged:  # torch's Size with the ragged dim's symbol: (2, j1, 4)
            dims = list(self._shapes[0]) if self._shapes else [0]
            dims[self._ragged_idx - 1] = RaggedSize(self._ragged)
            return _ember().Size([len(self._shapes), *dims])
        raise RuntimeError(
            "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue."
        )

    def dim(self):
        """dim() -> int

        1 + the components' number of dims."""
        return 1 + len(self._shapes[0]) if self._shapes else 1

    ndimension = dim

    @property
    def ndim(self):
        return self.dim()

    def size(self, dim=None):
        """size(dim=None) -> int

        The size of a regular dim; a ragged dim has none (RuntimeError), as torch's."""
        if dim is None:
            return self.shape
        n = self.dim()
        if not -n <= dim < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                f"{dim})"
            )
        dim %= n
        if dim == 0:
            return len(self._shapes)
        if self._layout is jagged:
            return self.shape[dim]
        sizes = {s[dim - 1] for s in self._shapes}
        if len(sizes) != 1 or (self._layout is jagged and dim == 1):
            raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
        return sizes.pop()

    def numel(self):
        """numel() -> int

        The number of elements of all components."""
        return builtins.sum(math.prod(s) for s in self._shapes)

    def __len__(self):
        return len(self._shapes)

    def unbind(self, dim=0):
        """unbind(dim=0) -> tuple of Tensor

        The components (views of the buffer)."""
        if dim != 0:
            raise RuntimeError("unbind(): nested tensor can only be unbound along dimension 0")
        buf = _plain(self)
        if self._layout is jagged:
            d, o = self._ragged_idx - 1, self._offsets
            return tuple(buf.narrow(d, o[i], o[i + 1] - o[i]) for i in range(len(o) - 1))
        return tuple(
            buf[self._offsets[i] : self._offsets[i + 1]].view(s) for i, s in enumerate(self._shapes)
        )

    def __getitem__(self, index):
        if isinstance(index, builtins.int):
            return self.unbind()[index]
        raise _not_supported("index.Tensor")

    def __iter__(self):
        return iter(self.unbind())

    def values(self):
        """values() -> Tensor

        The buffer (jagged: the components concatenated along the ragged dim)."""
        return _plain(self)

    def offsets(self):
        """offsets() -> Tensor

        Where each component starts in values() (jagged layout), and the end."""
        if self._layout is not jagged:
            raise RuntimeError("offsets(): only nested tensors of layout torch.jagged have them")
        return _ember().tensor(self._offsets, dtype=_ember().int64)

    @property
    def grad(self):
        g = _plain(self).grad  # the buffer's gradient, structured as self (torch's is nested)
        if g is None:
            return None
        return make(g, self._shapes, self._offsets, self._layout, self._ragged, self._ragged_idx)

    @grad.setter
    def grad(self, value):
        _plain(self).grad = _plain(value) if isinstance(value, NestedTensor) else value

    def lengths(self):
        """lengths() -> None

        The components' lengths of a non-contiguous jagged view; ember's jagged tensors are
        contiguous (their offsets say it all)."""
        return None

    def is_contiguous(self, memory_format=None):
        """is_contiguous(memory_format=None) -> bool

        Whether the buffer holds the components in order (a transposed jagged tensor does not)."""
        return self._layout is not jagged or self._ragged_idx == 1

    def to_padded_tensor(self, padding, output_size=None):
        """to_padded_tensor(padding, output_size=None) -> Tensor

        The components padded with ``padding`` to one size and stacked."""
        return to_padded_tensor(self, padding, output_size)

    def __repr__(self):
        if self._layout is jagged:
            dims = ", ".join(str(d) for d in self.shape)
            contiguous = self._ragged_idx == 1
            return (
                f"NestedTensor(size=({dims}), offsets={self.offsets()!r}, contiguous={contiguous})"
            )
        parts = [repr(t).replace("\n", "\n  ") for t in self.unbind()]
        return "nested_tensor([\n" + "".join(f"  {p},\n" for p in parts)[:-2] + "\n])"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", str(func))
        nested = [a for a in (*args, *kwargs.values()) if isinstance(a, NestedTensor)]
        if not nested:  # inside a list argument (ember.cat([nt, nt]))
            inner = [a for a in args if isinstance(a, (list, tuple))]
            if name == "cat" and inner and isinstance(inner[0][0], NestedTensor):
                if inner[0][0]._layout is jagged:
                    return JAGGED_OPS["cat"](*args, **kwargs)
            raise _not_supported(name.strip("_"))
        first = nested[0]
        if name in _PASSTHROUGH:
            return _on_buffers(func, args, kwargs, None)
        jag = first._layout is jagged
        if jag and name in JAGGED_OPS:
            return JAGGED_OPS[name](*args, **kwargs)
        if name in _UNARY_BOTH or (jag and name in _UNARY_JAGGED):
            return _on_buffers(func, args, kwargs, first)
        if name in _BINARY_BOTH or (jag and name in _BINARY_JAGGED):
            _check_operands(name, args, first)
            return _on_buffers(func, args, kwargs, first)
        raise _not_supported(name.strip("_"))


def _check_operands(name, args, first):
    ember = _ember()
    for k, a in enumerate(args[:2]):
        if isinstance(a, NestedTensor):
            if a._layout is not first._layout or a._shapes != first._shapes:
                raise RuntimeError(
                    f"{name}: expected nested tensors of the same layout and component sizes"
                )
        elif isinstance(a, ember.Tensor) and a.dim() > 0:
            if first._layout is jagged and a.dim() <= first.dim() - 2:
                continue  # broadcasts over the components' regular dims, as torch's jagged
            self_nested = "a nested" if k == 1 else "a non-nested"
            other_nested = "non-nested" if k == 1 else "nested"
            raise RuntimeError(
                f"Expected both self and other to be nested, but got {self_nested} self and "
                f"{other_nested} other"
            )


def _on_buffers(func, args, kwargs, like):
    swap = lambda a: _plain(a) if isinstance(a, NestedTensor) else a  # noqa: E731
    out = func(*(swap(a) for a in args), **{k: swap(v) for k, v in kwargs.items()})
    if like is None or not isinstance(out, Tensor):
        return out
    if out is not None and args and isinstance(args[0], NestedTensor):
        name = getattr(func, "__name__", "")
        if name.endswith("_") and not name.endswith("__") or name.startswith("__i"):
            return args[0]  # in place: the buffer changed under the same nested tensor
    return make(out, like._shapes, like._offsets, like._layout, like._ragged, like._ragged_idx)


def make(buffer, shapes, offsets, layout, ragged=None, ragged_idx=1):
    """A nested tensor over ``buffer`` (no checks; the constructors check); a jagged one's
    ragged dim is dim ``ragged_idx``."""
    from .._subclass_dispatch import register_overloading_subclass

    register_overloading_subclass(NestedTensor)
    obj = NestedTensor.__new__(NestedTensor)
    Tensor.__init__(obj, buffer)
    obj._shapes = [tuple(s) for s in shapes]
    obj._offsets = list(offsets)
    obj._layout = layout
    if ragged is None and layout is jagged:
        _ragged_ids[0] += 1
        ragged = f"j{_ragged_ids[0]}"
    obj._ragged = ragged
    obj._ragged_idx = ragged_idx
    return obj


def to_padded_tensor(input, padding, output_size=None):
    """to_padded_tensor(input, padding, output_size=None) -> Tensor

    The components of the nested tensor ``input`` padded at their ends with ``padding`` to the
    largest size in each dim (or to ``output_size``), stacked."""
    ember = _ember()
    if not isinstance(input, NestedTensor):
        raise RuntimeError("to_padded_tensor: expected a nested tensor")
    comps = input.unbind()
    if not comps:
        return ember.empty(0, dtype=input.dtype)
    rank = len(input._shapes[0])
    target = [builtins.max(s[d] for s in input._shapes) for d in range(rank)]
    if output_size is not None and input._layout is jagged:
        # torch's jagged layout reads only the ragged dim's size, and cuts longer components
        target[0] = builtins.int(list(output_size)[1])
        comps = [c[: target[0]] for c in comps]
    elif output_size is not None:
        output_size = list(output_size)
        if len(output_size) != rank + 1 or output_size[0] != len(comps):
            raise RuntimeError(
                "to_padded_tensor: output_size must have one more dim than the components and "
                "the batch size first"
            )
        if any(o < t for o, t in zip(output_size[1:], target)):
            raise RuntimeError(
                "Value in output_size is less than NestedTensor padded size. Truncation is not "
                "supported."
            )
        target = output_size[1:]
    padded = []
    for c in comps:
        pad = []
        for d in reversed(range(rank)):
            pad += [0, target[d] - c.shape[d]]
        padded.append(ember.nn.functional.pad(c, pad, value=padding))
    return ember.stack(padded)
