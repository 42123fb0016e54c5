"""How a profile's records become torch's events: the Python function rows of a with_stack
profile nested with the ops, and torch's removal of an op's single child of the same name (an
overload calling another overload of the same op)."""

import bisect


def nest_python_events(events_by_thread, python_events):
    """Puts the Python function events into the tree of the op events of their thread: a Python
    call's parent is the innermost of its calling function and the ranges open around it; an
    op's parent is the innermost Python call that contains it, when that call started inside
    the op's recorded parent."""
    by_id = {}
    for evt in python_events:
        by_id[evt.python_id] = evt
    per_thread = {}
    for evt in python_events:
        per_thread.setdefault(evt.thread, []).append(evt)
    for tid, pys in per_thread.items():
        ops = events_by_thread.get(tid, [])
        pys.sort(key=lambda e: (e.time_range.start, e.python_id))
        starts = [e.time_range.start for e in pys]
        ops_sorted = sorted(ops, key=lambda e: (e.time_range.start, e.id))
        op_starts = [e.time_range.start for e in ops_sorted]
        for evt in pys:
            parent = by_id.get(evt.python_parent_id)
            inner = _innermost(ops_sorted, op_starts, evt, lambda e: e.cpu_parent)
            if inner is not None and (
                parent is None or inner.time_range.start >= parent.time_range.start
            ):
                parent = inner
            if parent is not None:
                evt.set_cpu_parent(parent)
        for evt in ops:
            recorded = evt.cpu_parent
            inner = _innermost(pys, starts, evt, lambda e: by_id.get(e.python_parent_id))
            if inner is not None and (
                recorded is None or inner.time_range.start >= recorded.time_range.start
            ):
                evt.set_cpu_parent(inner)


def _innermost(candidates, starts, evt, parent_of):
    """The innermost of `candidates` (sorted by start, a forest through `parent_of`) that
    contains `evt`, or None."""
    i = bisect.bisect_right(starts, evt.time_range.start) - 1
    c = candidates[i] if i >= 0 else None
    while c is not None and (c is evt or c.time_range.end < evt.time_range.end):
        c = parent_of(c)
    return c


def relink_children(events):
    """Rebuilds each event's children from the parents (after Python events moved some)."""
    for evt in events:
        evt.cpu_children = []
    for evt in events:
        if evt.cpu_parent is not None:
            evt.cpu_parent.cpu_children.append(evt)


def remove_dup_nodes(events):
    """Drops an op whose parent has its name and no other child (torch's rule: an overload
    calling another of the same op shows as one row), lifting its children to the parent."""
    while True:
        drop = set()
        for evt in events:
            parent = evt.cpu_parent
            if (
                parent is not None
                and parent.name == evt.name
                and len(parent.cpu_children) == 1
                and id(parent) not in drop
            ):
                parent.cpu_children = evt.cpu_children
                parent.kwinputs = evt.kwinputs
                for child in evt.cpu_children:
                    child.cpu_parent = parent
                drop.add(id(evt))
        if not drop:
            return events
        events[:] = [e for e in events if id(e) not in drop]
