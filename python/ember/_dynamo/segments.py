"""Partial graphs around graph breaks (Note [Partial graphs]).

Note [Partial graphs]
torch compiles the code before a graph break into one graph, runs the breaking statement
eagerly and compiles the rest into another graph (a resume function). ember's capture records
calls rather than bytecode, so it splits the *call sequence* instead. During the capture run
every call that reaches the mode is logged in order as one of:
- ``graph``: recorded into the graph; its tensor results get numbered *slots*;
- ``eager``: the breaking call (``.item()`` without scalar capture, a tensor made outside the
  graph reaching an op, a call inside a ``disable``d function or under a grad mode the function
  switched to); it ran for real and its tensor results get slots too;
- ``meta``: a metadata read (``x.dim()``, ``x.shape``) that records nothing.
Consecutive graph calls form a segment; each segment becomes its own GraphModule whose inputs
are slots (function inputs, earlier results, eager results) and whose outputs are the slots of
every tensor its calls returned, and goes to the backend (a counting backend sees each).

A later call that passes the entry's guards runs the Python function again under a replay mode
that sees the same calls: each call is checked against the log (same function, same arguments,
tensors by slot, other values by equality); the first call of a segment runs the compiled
segment (after checking its inputs' metadata and the grad mode), and each of its calls returns
the value the segment computed for it; eager calls run for real. A call that differs from the
log (another path through a Python branch) is looked up among the paths recorded where earlier
replays left this one (``_Path.branches``); where none starts with it, the rest of the call is
recorded as a new path (a Capture over the replay's slots, its segments compiled at the end),
or, past ``recompile_limit`` paths, runs eagerly. Every value the function saw
came either from a matching call of the log (so from the same ops on the same inputs) or from an
eager call, so results are eager's. A path that is not the captured one costs eager speed, never
correctness. (A segment runs whole at its first call, so an in-place op inside it runs before
the Python code between its calls; a divergence between them, possible only through Python state
the guards do not cover, would see the mutation early: the same assumption a whole-graph replay
makes.)

Entering a function mode patches ember's public functions (about a millisecond), so a replay
costs that once per call on top of the segments; functions with breaks are the slow path.
Symbolic sizes and numbers (dynamic captures, captured ``.item()`` values used across a break)
are not carried across segments: such a capture runs eagerly, as before."""

from .. import _C
from ..overrides import TorchFunctionMode
from ..utils._pytree import _is_named_sequence_class, _make_sequence

_Tensor = _C.Tensor


class GiveUp(Exception):
    """Internal: the capture cannot be split into segments (the entry runs eagerly)."""


def _leaves(value):
    if isinstance(value, _Tensor):
        yield value
    elif type(value) in (tuple, list) or _is_named_sequence_class(type(value)):
        for v in value:
            yield from _leaves(v)
    elif type(value) is dict:
        for v in value.values():
            yield from _leaves(v)


def _spec(value, slots):
    """How to rebuild ``value`` from the slot values (``slots``: an iterator of its leaves')."""
    if isinstance(value, _Tensor):
        return ("s", next(slots))
    t = type(value)
    if t in (tuple, list) or _is_named_sequence_class(t):
        return ("q", t, [_spec(v, slots) for v in value])
    if t is dict:
        return ("q", dict, [(k, _spec(v, slots)) for k, v in value.items()])
    return ("c", value)


def _build(spec, values):
    kind = spec[0]
    if kind == "s":
        return values[spec[1]]
    if kind == "c":
        return spec[1]
    t = spec[1]
    if t is dict:
        return {k: _build(s, values) for k, s in spec[2]}
    return _make_sequence(t, [_build(s, values) for s in spec[2]])


def _same(a, b):
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 (an argument whose == is not a bool: not the same call)
        return False


def _numbers(value):
    t = type(value)
    if t is int or t is float:
        yield value
    elif t is list or t is tuple:
        for v in value:
            yield from _numbers(v)


class _Call:
    __slots__ = ("kind", "func", "sig", "out_slots", "spec", "segment", "num_slots")

    def __init__(self, kind, func, sig=None, out_slots=(), spec=None, num_slots=()):
        self.kind, self.func, self.sig = kind, func, sig
        self.out_slots, self.spec = tuple(out_slots), spec
        self.num_slots = tuple(num_slots)
        self.segment = None  # on the first call of a segment: its _Segment


class _Segment:
    __slots__ = ("gm", "compiled", "in_slots", "out_slots", "in_meta", "grad")

    def __init__(self, gm, in_slots, out_slots, in_meta, grad):
        self.gm, self.in_slots, self.out_slots = gm, in_slots, out_slots
        self.in_meta, self.grad = in_meta, grad
        self.compiled = None


def _meta_of(t):
    if not isinstance(t, _Tensor):
        return (type(t),)
    return (t.dtype, tuple(t.shape), tuple(t.stride()), t.requires_grad, t.device)


class SegmentLog:
    """The call log of one capture run (kept by Capture while partial graphs are possible)."""

    def __init__(self, cap):
        self.cap = cap
        self.calls = []
        self.slot_of = {}  # id(tensor) -> slot (latest)
        self.values = []  # slot -> the capture run's value (kept alive: ids stay unique)
        self.node_slot = {}  # Node -> slot
        self.segment = 0
        self.last_kind = None
        self.cur_eager = False
        self.eager_depth = 0  # inside a function marked disable
        self.call_nodes = []
        self.failed = None  # why the capture cannot be split
        self.attr_names = {}  # id(tensor) -> get_attr target, for signatures
        self.number_slot = {}  # id(number an eager call returned) -> slot
        self.number_nodes = {}  # slot -> its placeholder
        graph = cap.graph
        create = graph.create_node

        def create_node(*args, **kwargs):
            node = create(*args, **kwargs)
            node.meta["seg"] = self.segment
            self.call_nodes.append(node)
            return node

        graph.create_node = create_node

    # ---- capture side -----------------------------------------------------------------------

    def add_input(self, tensor, node):
        slot = len(self.values)
        self.values.append(tensor)
        self.slot_of.setdefault(id(tensor), slot)
        self.node_slot.setdefault(node, self.slot_of[id(tensor)])

    def norm(self, a):
        """A call argument with tensors as slots or attribute names (its signature)."""
        from .capture import SymInt

        if isinstance(a, _Tensor):
            slot = self.slot_of.get(id(a))
            if slot is not None:
                return ("s", slot)
            name = self.cap.named.get(id(a))
            if name is not None:
                self.attr_names[id(a)] = name
                return ("a", name)
            return ("?",)
        if isinstance(a, SymInt):
            self.failed = "a symbolic number reaches a call"
            return ("?",)
        t = type(a)
        if t is int or t is float:
            slot = self.number_slot.get(id(a))
            if slot is not None and self.values[slot] is a:
                return ("n", slot)
        if t is tuple or t is list or isinstance(a, tuple):
            return (t, tuple(self.norm(x) for x in a))
        if t is dict:
            return (dict, tuple((k, self.norm(v)) for k, v in a.items()))
        if t is slice:
            return (slice, self.norm(a.start), self.norm(a.stop), self.norm(a.step))
        return ("c", t, a)

    def begin(self):
        self.cur_eager = bool(self.eager_depth)
        self.call_nodes = []

    def end(self, func, sig, value, args=()):
        if self.cur_eager:
            for node in self.call_nodes:
                node.meta["seg"] = None
            if self.last_kind == "graph":
                self.segment += 1
            # the call may have changed its tensor arguments (in place) and its results are
            # new values: later graph calls read them as inputs, not as graph values
            for leaf in _leaves(args):
                self.cap.nodes.pop(id(leaf), None)
                self.cap.pending.pop(id(leaf), None)
            for leaf in _leaves(value):
                self.cap.nodes.pop(id(leaf), None)
                self.cap.pending.pop(id(leaf), None)
            slots = self._slots(value)
            numbers = self._number_slots(value)
            self.calls.append(_Call("eager", func, sig, slots, num_slots=numbers))
            self.last_kind = "eager"
            return
        if not self.call_nodes:
            if any(True for _ in _leaves(value)):
                self.failed = "a call returned a tensor the graph does not compute"
            self.calls.append(_Call("meta", func))
            return
        from .capture import SymInt

        if isinstance(value, SymInt) or any(isinstance(v, SymInt) for v in _flat(value)):
            self.failed = "a captured number (.item()) would cross a segment"
        slots = []
        for leaf in _leaves(value):
            node = self.cap.node_of(leaf)
            if node is None or node.meta.get("seg") != self.segment:
                self.failed = "a call's result is not computed in its segment"
                return
            slot = len(self.values)
            self.values.append(leaf)
            self.slot_of[id(leaf)] = slot
            self.node_slot[node] = slot
            slots.append(slot)
        self.calls.append(_Call("graph", func, sig, slots, _spec(value, iter(slots))))
        self.last_kind = "graph"

    def user_break(self):
        """``graph_break()``: the graph calls after it open a new segment. The log keeps a
        ``break`` entry, which a replay passes over (the call is no tensor call)."""
        if self.last_kind == "graph":
            self.segment += 1
        self.calls.append(_Call("break", None))
        self.last_kind = "break"

    def _number_slots(self, value):
        """Slots for the Python numbers an eager call returned (``.item()``, ``.tolist()``):
        a graph call that receives one of them (the same object) reads it as an input."""
        slots = []
        for leaf in _numbers(value):
            slot = len(self.values)
            self.values.append(leaf)
            self.number_slot[id(leaf)] = slot
            slots.append(slot)
        return slots

    def number_node(self, a):
        """The placeholder of a number an eager call returned, or None."""
        slot = self.number_slot.get(id(a))
        if slot is None or self.values[slot] is not a:
            return None
        node = self.number_nodes.get(slot)
        if node is None:
            node = self.cap.graph.placeholder(f"num_{slot}")
            node.meta["val"] = a
            node.meta["seg"] = None
            self.node_slot[node] = slot
            self.number_nodes[slot] = node
        return node

    def _slots(self, value):
        slots = []
        for leaf in _leaves(value):
            slot = len(self.values)
            self.values.append(leaf)
            self.slot_of[id(leaf)] = slot
            slots.append(slot)
        return slots

    def external_node(self, t):
        """A placeholder for a tensor an eager call made (None if no call made it)."""
        slot = self.slot_of.get(id(t))
        if slot is None:
            return None
        node = self.cap.graph.placeholder(f"slot_{slot}")
        node.meta["val"] = t.detach()
        node.meta["seg"] = None
        self.node_slot[node] = slot
        return node

    # ---- splitting --------------------------------------------------------------------------

    def split(self):
        """[(GraphModule, _Segment)] for the segments, first calls marked; raises GiveUp."""
        from ..fx import Graph, GraphModule

        if self.failed:
            raise GiveUp(self.failed)
        by_seg = {}
        for node in self.cap.graph.nodes:
            k = node.meta.get("seg")
            if node.op in ("placeholder", "get_attr", "output") or k is None:
                continue
            by_seg.setdefault(k, []).append(node)
        segments = {}
        for k, nodes in by_seg.items():
            members = set(nodes)
            g = Graph()
            env, in_slots = {}, []
            for node in nodes:  # placeholders first
                for a in node.all_input_nodes:
                    if a in members or a in env or a.op == "get_attr":
                        continue
                    slot = self.node_slot.get(a)
                    if slot is None:
                        raise GiveUp("a value crosses segments without a slot")
                    p = g.placeholder(a.name if a.op == "placeholder" else f"slot_{slot}")
                    p.meta.update(a.meta)
                    env[a] = p
                    in_slots.append(slot)

            def arg(a, env=env, g=g):
                if a not in env and a.op == "get_attr":
                    env[a] = g.get_attr(a.target)
                    env[a].meta.update(a.meta)
                return env[a]

            for node in nodes:
                env[node] = g.node_copy(node, arg)
            outs = [n for n in nodes if n in self.node_slot]
            g.output(tuple(env[n] for n in outs))
            gm = GraphModule(dict(self.cap.attrs), g)
            in_meta = [_meta_of(self.values[s]) for s in in_slots]
            segments[k] = _Segment(
                gm, in_slots, [self.node_slot[n] for n in outs], in_meta, self.cap.grad_enabled
            )
        seen = set()
        # the first graph call after an eager one (or at the start) opens the next segment
        order = sorted(segments)
        it = iter(order)
        prev = None
        for call in self.calls:
            if call.kind == "graph" and prev != "graph":
                k = next(it, None)
                if k is None:
                    raise GiveUp("segments and calls disagree")
                call.segment = segments[k]
                seen.add(k)
            if call.kind != "meta":
                prev = call.kind
        if len(seen) != len(segments):
            raise GiveUp("segments and calls disagree")
        return [segments[k] for k in order]

    def plan(self, segments, n_inputs):
        cap = self.cap
        names = dict(self.attr_names)
        return Plan(
            self.calls, segments, len(self.values), n_inputs, names, cap.named, cap.grad_enabled
        )


def _flat(value):
    if type(value) in (tuple, list):
        for v in value:
            yield from _flat(v)
    else:
        yield value


class _Path:
    """One captured sequence of calls, and the paths recorded where a replay left it:
    ``branches[pos]`` lists the paths that start at call ``pos`` instead of ``calls[pos]``."""

    __slots__ = ("calls", "branches")

    def __init__(self, calls):
        self.calls, self.branches = calls, {}


class Plan:
    """What a replay needs: the call paths, the compiled segments, the slot count."""

    def __init__(self, calls, segments, nslots, n_inputs, attr_names, named, grad):
        self.root = _Path(calls)
        self.segments = segments
        self.nslots, self.n_inputs = nslots, n_inputs
        self.attr_names = attr_names
        self.named, self.grad = named, grad  # for recording another path
        self.branches = 0
        self.diverged = 0  # replays that left every captured path (for tests)
        self.times = ([], [])  # seconds of timed eager calls, of timed replays
        self.use_replay = None  # None: still deciding

    @property
    def calls(self):
        return self.root.calls


_MISS = object()


class Replay(TorchFunctionMode):
    """Runs the function again, serving its calls from the compiled segments (see the Note).
    Where the function leaves every recorded path, the rest of the call is recorded as a new
    path (``recorder``, a Capture over the replay's slots) unless ``may_record`` is False."""

    def __init__(self, plan, inputs, may_record=False):
        self.plan = plan
        self.path, self.pos = plan.root, 0
        self.off = False
        self.may_record = may_record
        self.recorder = self.branch_at = self.watcher = None
        self.values = [None] * plan.nslots
        self.slot_of = {}
        self.num_of = {}
        for slot, t in enumerate(inputs):
            self.values[slot] = t
            self.slot_of.setdefault(id(t), slot)

    def _norm(self, a):
        if isinstance(a, _Tensor):
            slot = self.slot_of.get(id(a))
            if slot is not None and self.values[slot] is a:
                return ("s", slot)
            name = self.plan.attr_names.get(id(a))
            return ("a", name) if name is not None else ("?",)
        t = type(a)
        if t is int or t is float:
            slot = self.num_of.get(id(a))
            if slot is not None and self.values[slot] is a:
                return ("n", slot)
        if t is tuple or t is list or isinstance(a, tuple):
            return (t, tuple(self._norm(x) for x in a))
        if t is dict:
            return (dict, tuple((k, self._norm(v)) for k, v in a.items()))
        if t is slice:
            return (slice, self._norm(a.start), self._norm(a.stop), self._norm(a.step))
        return ("c", t, a)

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.recorder is not None:
            return self.recorder.__torch_function__(func, types, args, kwargs)
        if self.off:
            return func(*args, **kwargs)
        value = self._serve(func, args, kwargs)
        if value is not _MISS:
            return value
        path, pos = self.path, self.pos
        for alt in path.branches.get(pos, ()):
            self.path, self.pos = alt, 0
            value = self._serve(func, args, kwargs)
            if value is not _MISS:
                return value
        self.path, self.pos = path, pos
        if self.may_record and self.plan.branches < _branch_limit():
            return self._record(func, types, args, kwargs)
        self.off = True
        self.plan.diverged += 1
        return func(*args, **kwargs)

    def _serve(self, func, args, kwargs):
        """The call's value from the current path, or _MISS where it is not the path's call."""
        calls = self.path.calls
        while self.pos < len(calls) and calls[self.pos].kind == "break":
            self.pos += 1
        if self.pos >= len(calls):
            return _MISS
        call = calls[self.pos]
        if call.func is not func:
            return _MISS
        if call.kind == "meta":
            self.pos += 1
            return func(*args, **kwargs)
        if not _same(self._norm((args, kwargs)), call.sig):
            return _MISS
        values = self.values
        if call.kind == "eager":
            self.pos += 1
            value = func(*args, **kwargs)
            leaves = list(_leaves(value))
            numbers = list(_numbers(value))
            if len(leaves) != len(call.out_slots) or len(numbers) != len(call.num_slots):
                self.off = True  # it ran: the rest of the call runs eagerly
                self.plan.diverged += 1
                return value
            for slot, leaf in zip(call.out_slots, leaves):
                values[slot] = leaf
                self.slot_of[id(leaf)] = slot
            for slot, leaf in zip(call.num_slots, numbers):
                values[slot] = leaf
                self.num_of[id(leaf)] = slot
            return value
        seg = call.segment
        if seg is not None:
            inputs = [values[s] for s in seg.in_slots]
            if _C.is_grad_enabled() is not seg.grad or any(
                _meta_of(t) != m for t, m in zip(inputs, seg.in_meta)
            ):
                return _MISS
            outs = seg.compiled(*inputs)
            for slot, v in zip(seg.out_slots, outs):
                values[slot] = v
        self.pos += 1
        for slot in call.out_slots:
            self.slot_of[id(values[slot])] = slot
        return _build(call.spec, values)

    # ---- recording another path -------------------------------------------------------------

    def _record(self, func, types, args, kwargs):
        from .capture import Capture
        from .side_effects import Watcher

        cap = Capture(self.plan.named, None, False, False)
        cap.grad_enabled = self.plan.grad
        cap.capture_scalars = False  # a number read here is an eager call's, as in the capture
        log = cap.log = SegmentLog(cap)
        log.values = list(self.values)
        log.slot_of = dict(self.slot_of)
        log.number_slot = dict(self.num_of)
        self.recorder, self.branch_at = cap, (self.path, self.pos)
        self.watcher = Watcher().__enter__()
        return cap.__torch_function__(func, types, args, kwargs)

    def stop_watching(self):
        if self.watcher is not None:
            self.watcher.__exit__(None, None, None)

    def finish(self, compile_segment):
        """Adds the recorded rest of the call as a path (``compile_segment(gm, example)`` gives
        a segment's callable or None); a path that cannot be split or compiled is dropped."""
        cap = self.recorder
        log = cap.log
        if self.watcher.effects or cap.breaks and cap.stopped:
            return
        try:
            segments = log.split()
        except GiveUp:
            return
        for seg in segments:
            seg.compiled = compile_segment(seg.gm, [log.values[s] for s in seg.in_slots])
            if seg.compiled is None:
                return
        path, pos = self.branch_at
        path.branches.setdefault(pos, []).append(_Path(log.calls))
        plan = self.plan
        plan.branches += 1
        plan.segments.extend(segments)
        plan.nslots = max(plan.nslots, len(log.values))
        plan.attr_names.update(log.attr_names)


def _branch_limit():
    """Paths recorded beyond the first: together they count against recompile_limit."""
    from . import config

    return config.recompile_limit - 1
