"""Marking tensor dimensions dynamic or static for ember.compile's capture (torch._dynamo's
``mark_dynamic`` / ``maybe_mark_dynamic`` / ``mark_static``).

The marks are attributes of the tensor object (torch's names: ``_dynamo_dynamic_indices``,
``_dynamo_weak_dynamic_indices``, ``_dynamo_static_indices``); the capture reads them from the
tensor arguments of the call it captures. A dimension marked dynamic is captured as a symbolic
size, as ``dynamic=True`` captures every size, and the entry's guard checks only its range
(``min``/``max``, at least 2), so other sizes reuse the graph instead of re-capturing."""

__all__ = ["mark_dynamic", "maybe_mark_dynamic", "mark_static", "mark_static_address"]


def _dims(t, index):
    from .. import _C

    if not isinstance(t, _C.Tensor):
        raise TypeError(f"mark_dynamic: expected a Tensor; got {type(t).__name__}")
    items = index if isinstance(index, (tuple, list)) else [index]
    out = []
    for d in items:
        if not isinstance(d, int) or isinstance(d, bool):
            raise TypeError(f"mark_dynamic: expected an int dimension; got {type(d).__name__}")
        if not -t.dim() <= d < max(t.dim(), 1):
            raise IndexError(
                f"mark_dynamic: expected a dimension in [{-t.dim()}, {t.dim() - 1}]; got {d}"
            )
        out.append(d % t.dim())
    return out


def _add(t, attr, dims):
    s = set(getattr(t, attr, ()))
    s.update(dims)
    setattr(t, attr, s)


def mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None):
    """mark_dynamic(t, index, *, hint_override=None, min=None, max=None, specialize_on=None)

    Marks dimension(s) ``index`` of tensor ``t`` dynamic: a compiled function called with ``t``
    captures those sizes as symbolic, so a later call with other sizes there (within
    ``[min, max]``) reuses the graph; a size outside the range re-captures. Sizes 0 and 1 are
    never dynamic (the range starts at 2).

    Args:
        t (Tensor): the tensor argument to mark.
        index (int or list of int): the dimension(s).
        min (int, optional): the smallest size the graph accepts there.
        max (int, optional): the largest size the graph accepts there.
    """
    dims = _dims(t, index)
    if min is not None and max is not None and min > max:
        raise ValueError(f"mark_dynamic: expected min <= max; got min={min}, max={max}")
    _add(t, "_dynamo_dynamic_indices", dims)
    ranges = dict(getattr(t, "_dynamo_dynamic_range", {}) or {})
    for d in dims:
        ranges[d] = (min, max)
    t._dynamo_dynamic_range = ranges


def maybe_mark_dynamic(t, index):
    """maybe_mark_dynamic(t, index)

    Like ``mark_dynamic`` but a hint: where the capture needs the concrete size (it is
    specialized), the dimension quietly stays static instead of warning."""
    _add(t, "_dynamo_weak_dynamic_indices", _dims(t, index))


def mark_static(t, index=None):
    """mark_static(t, index=None)

    Marks dimension(s) ``index`` of ``t`` (all of them when ``index`` is None) static: the
    capture keeps them as constants and guards on their exact size, even under
    ``dynamic=True`` or after a second shape was seen."""
    dims = list(range(t.dim())) if index is None else _dims(t, index)
    _add(t, "_dynamo_static_indices", dims)


def mark_static_address(t, guard=True):
    """mark_static_address(t, guard=True)

    Marks ``t`` as keeping its storage address across calls (torch uses it for CUDA graphs);
    ember records the mark on the tensor and needs nothing from it."""
    from .. import _C

    if not isinstance(t, _C.Tensor):
        raise TypeError(f"mark_static_address: expected a Tensor; got {type(t).__name__}")
    t._dynamo_static_input_type = "guarded" if guard else "unguarded"


def marks_of(t):
    """marks_of(t) -> (dict, set, set)

    The marks of ``t``: {dim: (min, max)} of its dynamic dims (strong marks), its weakly marked
    dims and its static dims."""
    strong = getattr(t, "_dynamo_dynamic_indices", None) or ()
    ranges = getattr(t, "_dynamo_dynamic_range", None) or {}
    dyn = {d: ranges.get(d, (None, None)) for d in strong}
    weak = set(getattr(t, "_dynamo_weak_dynamic_indices", None) or ())
    static = set(getattr(t, "_dynamo_static_indices", None) or ())
    return dyn, weak, static
