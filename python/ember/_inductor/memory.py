"""Memory planning: which kernel outputs may share storage within one run of a graph.

A kernel's output takes over the storage of a buffer that is dead by then: first an input that
dies at this very kernel when the kernel reads it element for element at the index it writes
(a pointwise chain then runs in place), else any dead buffer of the same dtype and size. Only
buffers that generated kernels alone read are candidates: one that an eager call, a view or the
graph's output can see is never reused (an eager call may return an alias of it).
"""

from __future__ import annotations

from . import metrics
from .graph import KernelStep
from .ir import Buffer, Load, contiguous_strides, numel, walk


def _buffers_in(obj, out):
    if isinstance(obj, Buffer):
        out.append(obj)
    elif isinstance(obj, (tuple, list)):
        for o in obj:
            _buffers_in(o, out)
    elif isinstance(obj, dict):
        for o in obj.values():
            _buffers_in(o, out)
    elif isinstance(obj, slice):
        _buffers_in((obj.start, obj.stop, obj.step), out)
    return out


def plan(G):
    """Returns (storage id per kernel output buffer id, last step using each buffer id)."""
    steps = G.steps
    forever = len(steps)
    last_use, pinned = {}, set()
    for i, step in enumerate(steps):
        if isinstance(step, KernelStep):
            used = step.code.buffers[1:]
        else:
            used = _buffers_in((step.args, step.kwargs), [])
            pinned.update(b.id for b in used)
        for b in used:
            last_use[b.id] = i
    for b in _buffers_in(G.output, []):
        last_use[b.id] = forever
        pinned.add(b.id)

    storage, free, owners = {}, [], {}
    next_sid = 0
    for i, step in enumerate(steps):
        if not isinstance(step, KernelStep):
            continue
        # storages whose every buffer died before this step
        for sid, bufs in list(owners.items()):
            if all(last_use.get(b.id, -1) < i for b in bufs) and not any(
                b.id in pinned for b in bufs
            ):
                free.append((sid, bufs[0].dtype, numel(bufs[0].shape)))
                del owners[sid]
        out = step.out
        # (an output may take over a dead buffer's storage; its own is then never freed)
        sid = _in_place(step, last_use, pinned, storage, i) if step.kind == "pointwise" else None
        if sid is None:
            for j, (fsid, dt, n) in enumerate(free):
                if dt == out.dtype and n == numel(out.shape):
                    sid = fsid
                    del free[j]
                    break
        if sid is not None:
            metrics.add("buffers_reused")
        if sid is None:
            sid = next_sid
            next_sid += 1
        storage[out.id] = sid
        owners.setdefault(sid, []).append(out)
    return storage, last_use


def _in_place(step, last_use, pinned, storage, i):
    out = step.out
    shape = step.spec["shape"]
    ident = contiguous_strides(shape)
    loads = [e for e in walk(step.spec["expr"]) if isinstance(e, Load)]
    for b in step.code.buffers[1:]:
        if (
            b.kind == "kernel"
            and b.id in storage
            and b.id not in pinned
            and last_use.get(b.id) == i
            and b.dtype == out.dtype
            and b.shape == tuple(shape)
        ):
            mine = [ld for ld in loads if ld.buf is b]
            if all(ld.offset == 0 and tuple(ld.strides) == ident for ld in mine):
                return storage[b.id]
    return None
