"""torch's memory-overlap checks of a written tensor (out=) for the ops the Python layer writes
through write_out; the C++ out= kernels run the same rules (ops/meta.h)."""


def check_no_internal_overlap(out):
    """torch's TensorIterator refuses an out whose elements share memory (a stride-0 dim of
    size > 1, an expanded tensor) before anything else; the out= kernels check it in C++
    (meta::check_out), this is the same check for the ops written through write_out (aliases
    such as absolute, multiply, greater, and the composite ones). An empty out has no elements
    to share."""
    if out.numel() and any(st == 0 and sz > 1 for st, sz in zip(out.stride(), out.shape)):
        raise RuntimeError(
            "unsupported operation: more than one element of the written-to tensor refers to a "
            "single memory location. Please clone() the tensor before performing the operation."
        )


CAT_NAMES = frozenset(("cat", "concat", "concatenate"))


def _dense_span(t):
    """The bytes [first, last) of a non-empty, non-overlapping and dense t, else None: torch
    tells overlaps apart only between such tensors (get_overlap_status); other layouts are "too
    hard" and pass."""
    if not t.numel():
        return None
    step = 1
    for st, sz in sorted((st, sz) for st, sz in zip(t.stride(), t.shape) if sz != 1):
        if st != step:
            return None
        step *= sz
    return t.data_ptr(), t.data_ptr() + t.numel() * t.element_size()


def check_no_overlap(out, inputs, same_too):
    """torch's overlap rule for the ops written through write_out: out may not share part of an
    input's memory (the TensorIterator ops: the very same elements, same span and strides, are
    fine), nor any of it (cat, whose inputs are copied one after another: same_too)."""
    span = _dense_span(out)
    if span is None:
        return
    ptr = out.untyped_storage().data_ptr()
    for t in inputs:
        s = _dense_span(t)
        if s is None or t.untyped_storage().data_ptr() != ptr:
            continue
        same = s == span and t.stride() == out.stride()
        if (same and not same_too) or s[1] <= span[0] or span[1] <= s[0]:
            continue
        raise RuntimeError(
            "unsupported operation: some elements of the input tensor and the written-to tensor "
            "refer to a single memory location. Please clone() the tensor before performing "
            "the operation."
        )
