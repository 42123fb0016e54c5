"""ember.autograd.profiler: the autograd profiler's API over ember's recorder.

Every dispatcher op is recorded by the dispatcher itself, on the thread that runs it (Note
[Profiler] in csrc/ember/core/profiler.h): ops of the forward, of the backward pass (inside the
autograd engine's "autograd::engine::evaluate_function: <Node>" and "<Node>" ranges), of other
threads, and the share of an op that pool workers run ("ember::parallel_for: <op>"). User ranges
come from `record_function`. Op names are torch's (`aten::add`, `aten::linear`); ember's private
ops are named `ember::<name>`.
"""

import contextlib
import logging
import sys
import time
import uuid

from .. import _C
from .._ops import _op_range
from .._ops._op_inputs import describe
from .._ops._op_range import OP_MARK
from ._profiler_events import nest_python_events, relink_children, remove_dup_nodes
from ._python_tracer import PythonTracer
from .profiler_util import (
    DeviceType,
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    Interval,
    _chrome_trace,
    _write_json,
)

__all__ = [
    "DeviceType",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
    "Interval",
    "emit_itt",
    "emit_nvtx",
    "profile",
    "record_function",
]

# Registry ops whose names torch's ATen does not have: ember's private ops, shown as ember::name.
_EMBER_ONLY = frozenset(
    {
        "_arange_fill",
        "_cross_entropy_index",
        "_cross_entropy_index_backward",
        "_fused_rmsprop_",  # ember's fused RMSprop update (torch has no fused RMSprop)
        "_place_along_dim",
        "_randperm_fill",
        "_rnn_layer",
        "_rnn_layer_backward",
        "_sparse_csr_mm",  # ember.sparse's kernels (torch's op of that name takes other arguments)
        "_sparse_sampled_dot",
        "_take_along_dim",
        "fmax_",
        "fmin_",
        "maximum_",
        "minimum_",
    }
)
# Registry ops that do what an ATen op of another name does: shown under torch's name.
_ATEN_NAME = {
    "adaptive_avg_pool2d_backward": "_adaptive_avg_pool2d_backward",
    "conv2d_forward": "convolution",
    "conv3d_forward": "convolution",
    "conv3d_backward": "convolution_backward",
    "cross_entropy": "cross_entropy_loss",
    "div_trunc": "div",
    "div_trunc_": "div_",
    "linalg_eig_ex": "linalg_eig",
    "linalg_eigh_ex": "linalg_eigh",
    "linalg_svd_ex": "_linalg_svd",
    "logsigmoid": "log_sigmoid_forward",
    "logsigmoid_backward": "log_sigmoid_backward",
    "max_pool2d_backward": "max_pool2d_with_indices_backward",
    "_nll_loss_index": "nll_loss_forward",  # (loss, total_weight) of (M, C) rows, as torch's
    "_nll_loss_index_backward": "nll_loss_backward",
    "relu_backward": "threshold_backward",
}
# torch's argument counts of ops whose ember schema (or Python factory) takes fewer: a profile
# with record_shapes lists the missing trailing arguments as [] (non-tensor), as torch does.
_TORCH_ARITY = {
    "aten::_log_softmax": 3,
    "aten::_log_softmax_backward_data": 4,
    "aten::_softmax": 3,
    "aten::_softmax_backward_data": 4,
    "aten::arange": 5,
    "aten::convolution": 9,
    "aten::copy_": 3,
    "aten::empty": 6,
    "aten::empty_like": 6,
    "aten::empty_strided": 6,
    "aten::eye": 5,
    "aten::full": 6,
    "aten::full_like": 7,
    "aten::linspace": 7,
    "aten::max_pool2d": 6,
    "aten::ones": 5,
    "aten::ones_like": 6,
    "aten::rand": 5,
    "aten::randint": 7,
    "aten::randn": 5,
    "aten::randn_like": 6,
    "aten::threshold_backward": 3,
    "aten::zeros": 5,
    "aten::zeros_like": 6,
}
# Ops whose CPU kernel records torch's argument list in a nested range of the op's name.
_ARGS_RESTATED = frozenset({"aten::nll_loss_backward"})
_display_names = {}
# The autograd engine's ranges shown under torch's names (its C++ class for AccumulateGrad).
_AUTOGRAD_NAME = {
    "AccumulateGrad": "torch::autograd::AccumulateGrad",
    "autograd::engine::evaluate_function: AccumulateGrad": (
        "autograd::engine::evaluate_function: torch::autograd::AccumulateGrad"
    ),
}


def _op_display_name(name):
    """The profiler's name for the op registered as `name` ("add.Tensor" -> "aten::add")."""
    out = _display_names.get(name)
    if out is None:
        base = name.split(".", 1)[0]
        if "::" in base:  # a namespaced op (a custom op): its own name, as torch's profiler
            out = base
        elif base in _EMBER_ONLY or base.startswith("_ember_"):  # ember's private kernels
            out = "ember::" + base
        else:
            out = "aten::" + _ATEN_NAME.get(base, base)
        _display_names[name] = out
    return out


# Floating-point operations of the products, from their input shapes (with_flops=True).
def _prod(xs):
    out = 1
    for x in xs:
        out *= x
    return out


def _flops(name, shapes):
    try:
        if name in ("aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm"):
            a, b = (
                (shapes[1], shapes[2]) if name in ("aten::addmm", "aten::baddbmm") else shapes[:2]
            )
            return 2 * _prod(a) * b[-1]
        if name in ("aten::mul", "aten::add"):
            return max(_prod(s) for s in shapes[:2] if isinstance(s, list))
    except (IndexError, TypeError, ValueError):
        return 0
    return 0


class record_function(contextlib.ContextDecorator):
    """record_function(name, args=None)

    A user range: the ops run inside it appear nested in a range called `name` in the profile's
    table and trace. A context manager, and a decorator (each call is one range). Costs a check
    when no profile records."""

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None
        self._handle = -1

    def _recreate_cm(self):
        return record_function(self.name, self.args)

    def __enter__(self):
        if not isinstance(self.name, str) or not isinstance(self.args, (str, type(None))):
            self._refuse_arguments()
        if _C._profiler_enabled():
            name = self.name if self.args is None else f"{self.name}, {self.args}"
            self._handle = _C._record_function_enter(name)
        return self

    def _refuse_arguments(self):
        """torch's error for a name (or args) that is not a string."""
        bad = 0 if not isinstance(self.name, str) else 1
        arg, value, typ = (("name", self.name, "str"), ("args", self.args, "Optional[str]"))[bad]
        raise RuntimeError(
            f"profiler::_record_function_enter_new() Expected a value of type '{typ}' for "
            f"argument '{arg}' but instead found type '{type(value).__name__}'.\nPosition: {bad}"
            f"\nValue: {value!r}\nDeclaration: profiler::_record_function_enter_new(str name, "
            "str? args=None) -> __torch__.torch.classes.profiler._RecordFunction"
        )

    def __exit__(self, exc_type, exc_value, traceback):
        if self._handle >= 0:
            _C._record_function_exit(self._handle)
            self._handle = -1
        return False


def _custom_op_shapes(name, shapes, inputs):
    """A Python custom op's input shapes and recorder entries as torch lists them, one per schema
    argument: ember's dispatcher records its tensors as one list, then its other arguments as
    one entry. Unchanged when the tensors cannot be placed (a list or optional tensor argument)."""
    library = sys.modules.get("ember.library")
    state = library._ops_by_name.get(name) if library is not None else None
    if state is None or len(shapes) != 2 or not isinstance(shapes[0], list):
        return shapes, inputs
    types = [a.type for a in state.schema.arguments]
    if any(t.startswith("Tensor") and t != "Tensor" for t in types):
        return shapes, inputs
    if len(shapes[0]) != types.count("Tensor"):
        return shapes, inputs
    tensors = iter(shapes[0])
    placed = [next(tensors) if t == "Tensor" else [] for t in types]
    listed = inputs[0] if inputs and inputs[0] is not None and inputs[0][0] == "l" else None
    entries = iter(listed[1]) if listed is not None else iter(())
    return placed, [next(entries, None) if t == "Tensor" else None for t in types]


def _describe_inputs(evt, described):
    """Gives `evt` torch's input types, strides and concrete values (record_shapes only)."""
    if described is not None:
        evt.input_dtypes, evt.structured_input_strides, evt.concrete_inputs = described


def _is_backend_call_of(outer, name):
    """Whether an op range `name` is the backend call of a differentiable custom op inside its
    autograd.Function row (GeneratedBackwardFor_...), itself inside the op's row: torch shows
    the op's row and the Function's row only."""
    return (
        outer is not None
        and outer.name.startswith("GeneratedBackwardFor_")
        and outer.cpu_parent is not None
        and outer.cpu_parent.name == name
    )


def _restates_args_of(outer, name):
    """Whether an op range `name` is a kernel's restatement of its own op's row with torch's
    argument list (aten::nll_loss_backward takes the input where ember's op takes its class
    count): the row keeps its place and takes those arguments."""
    return name in _ARGS_RESTATED and outer is not None and outer.name == name


def _frees_of_unknown_blocks(threads):
    """(thread id, record index) of the frees of blocks allocated before the profile started:
    torch's CPU allocator knows the size of the blocks allocated while a profile records only,
    and reports no free of another block."""
    events = [
        (rec[2], rec[6], rec[7], tid, i)
        for tid, records in threads
        for i, rec in enumerate(records)
        if rec[1] == 4
    ]
    events.sort(key=lambda e: e[0])
    live, unknown = set(), set()
    for _, nbytes, addr, tid, i in events:
        if nbytes > 0:
            live.add(addr)
        elif addr in live:
            live.discard(addr)
        else:
            unknown.add((tid, i))
    return unknown


def _is_tensor_list(arg):
    return isinstance(arg, list) and bool(arg) and all(isinstance(a, list) for a in arg)


def _noted_flops(notes, tid, name, start):
    """The FLOPs its Python caller noted for the op row `name` starting at `start` on thread
    `tid` (the last note before it; earlier ones are spent), or None."""
    pending = notes.get((tid, name))
    found = None
    while pending and pending[0][0] <= start:
        found = pending.pop(0)[1]
    return found


def _is_zero_fill_of(outer):
    """Whether a fill_ row is the zeroing of a zeros/zeros_like factory's new tensor."""
    return (
        outer is not None and outer._python_op and outer.name in ("aten::zeros", "aten::zeros_like")
    )


# torch's correlation ids (a trace's "External id") keep counting over the profiles of a process,
# each profile starting a new block of 512.
# Note [Nested profiles]
# torch 2.13 records one profiling session at a time: a profile started while another records
# takes the session over, the outer one's records are dropped, and stopping the outer one
# writes a warning and gives empty results. ember does the same: the owner of the C++ session
# is kept here, and a profile starting while it records cancels it.
_session_owner = [None]

_EXTERNAL_ID_BLOCK = 512
_next_external_id = [1]

_ALLOCATORS = ("aten::empty", "aten::empty_like", "aten::empty_strided")


def _allocating_child(owner):
    """The range an allocation belongs to: a factory written in Python (aten::zeros) records its
    allocation row (aten::empty, or aten::empty_like > aten::empty_strided) before it allocates,
    so its first allocation goes to that row, where torch's profile shows it."""
    if owner is None or not owner._python_op or getattr(owner, "_allocated", False):
        return owner
    child = owner._first_child
    if child is None or child.name not in _ALLOCATORS:
        return owner
    owner._allocated = True
    while child._first_child is not None and child._first_child.name in _ALLOCATORS:
        child = child._first_child
    return child


class profile:
    """profile(enabled=True, *, use_cuda=False, use_device=None, record_shapes=False, with_flops=False, profile_memory=False, with_stack=False, with_modules=False, use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None)

    Records every op run inside the `with` block, on every thread: `function_events`,
    `key_averages()`, `table()` and `export_chrome_trace()` after it. `record_shapes` keeps each
    op's input shapes, `profile_memory` the allocations and frees of ember's CPU allocator
    (attributed to the op running), `with_flops` the FLOPs of the products, `with_stack` a row
    per Python call (and `nn.Module: Name_0` per module call) with the ops nested inside, as
    torch 2.13's profiler. ember has no CUDA: `use_cuda` and `use_device` record CPU
    events only."""  # noqa: E501

    def __init__(
        self,
        enabled=True,
        *,
        use_cuda=False,
        use_device=None,
        record_shapes=False,
        with_flops=False,
        profile_memory=False,
        with_stack=False,
        with_modules=False,
        use_kineto=False,
        use_cpu=True,
        experimental_config=None,
        acc_events=False,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        if post_processing_timeout_s is not None and post_processing_timeout_s < 0:
            raise ValueError("post_processing_timeout_s must be non-negative")
        self.post_processing_timeout_s = post_processing_timeout_s
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.use_device = None
        self.record_shapes = record_shapes or with_flops
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.use_cpu = use_cpu
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.function_events = None
        self.entered = False
        self._trace_meta = {}
        self._stop_state = None
        self._off = []  # (from, to) profiler-clock ns while CPU collection was toggled off
        self._off_since = None

    # The recording cycle, also driven step by step by ember.profiler.profile.
    def _prepare_trace(self):
        pass

    def _start_trace(self):
        self.entered = True
        self._wall_ns = time.time_ns()
        owner = _session_owner[0]
        if owner is not None and owner is not self and _C._profiler_enabled():
            owner._cancel()  # torch's one session: a profile started inside takes it over
        self._cancelled = False
        self._start_ns = _C._profiler_start(self.record_shapes, self.profile_memory)
        _session_owner[0] = self
        _op_range.swap_in()
        # Python calls are traced inside the swaps, which would show as the profile's own rows.
        self._tracer = PythonTracer() if self.with_stack else None
        if self._tracer is not None:
            self._tracer.start()

    def toggle_collection_dynamic(self, enabled, activities):
        """Turns the collection of CPU activity off (enabled=False) or back on while the profile
        records: ops, ranges, memory records and Python calls that start while it is off are left
        out (a range open when it is turned off stays). Other activities have nothing to toggle
        on a CPU build."""
        from ..profiler import ProfilerActivity

        if ProfilerActivity.CPU not in set(activities):
            return
        now = _C._profiler_now_ns()
        if not enabled and self._off_since is None:
            self._off_since = now
        elif enabled and self._off_since is not None:
            self._off.append((self._off_since, now))
            self._off_since = None

    def _collected(self, start_ns):
        return not any(a <= start_ns < b for a, b in self._off)

    def _cancel(self):
        """Ends the recording a profile started inside this one takes over (Note [Nested
        profiles]): what was recorded is dropped, as torch's session is."""
        if self._tracer is not None:
            self._tracer.stop()
            self._tracer = None
        _op_range.swap_out()
        _C._profiler_stop()
        _op_range.take_recorded()
        self._cancelled = True

    def _stop_trace(self):
        if self._off_since is not None:
            self._off.append((self._off_since, float("inf")))
            self._off_since = None
        if getattr(self, "_cancelled", False):
            # torch's words (its C++ warning, not a Python warning); the results are empty
            sys.stderr.write(
                "disableProfiler called but no active profiling session found. This can happen "
                "if profiling was cancelled during warmup.\n"
            )
            self._python_events = []
            stop_ns, threads = _C._profiler_now_ns(), []
            self._python_op_shapes, self._flops_notes = {}, []
        else:
            self._python_events = self._tracer.stop() if self._tracer is not None else []
            self._tracer = None
            _op_range.swap_out()
            stop_ns, threads = _C._profiler_stop()
            self._python_op_shapes, self._flops_notes = _op_range.take_recorded()
        if _session_owner[0] is self:
            _session_owner[0] = None
        self.function_events, every, self._memory = self._build(threads)
        self._stop_ns = stop_ns
        self.function_events._trace = self._trace(every)

    def __enter__(self):
        if not self.enabled:
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        self._prepare_trace()
        self._start_trace()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.enabled:
            return False
        self._stop_trace()
        return False

    def _build(self, threads):
        """(function events, every event for the trace, memory records) of the records."""
        events, memory = [], []
        by_thread = {}
        next_id = 0
        t0 = self._start_ns
        notes = {}
        for tid, t, name, flops in self._flops_notes:
            notes.setdefault((tid, name), []).append((t, flops))
        unknown_frees = _frees_of_unknown_blocks(threads)
        timeout = self.post_processing_timeout_s
        deadline = None if timeout is None else time.perf_counter_ns() + int(timeout * 1e9)
        timed_out = False
        for tid, records in threads:
            local = [None] * len(records)
            for i, record in enumerate(records):
                if deadline is not None and time.perf_counter_ns() >= deadline:
                    timed_out = True  # torch's partial results: parsing stops here
                    break
                name, kind, start, end, parent, shapes, nbytes, addr, total, seq, fwd, inputs = (
                    record
                )
                if self._off and not self._collected(start):
                    continue
                ts = (start - t0) / 1000.0
                if kind == 4 and (tid, i) in unknown_frees:
                    continue
                if kind == 4:  # an allocation (> 0) or a free (< 0)
                    memory.append((tid, ts, nbytes, addr, total))
                    owner = _allocating_child(local[parent] if parent >= 0 else None)
                    if owner is None:
                        evt = FunctionEvent(
                            next_id, "[memory]", tid, ts, ts, cpu_memory_usage=nbytes, flops=0
                        )
                        next_id += 1
                        events.append(evt)
                    while owner is not None:
                        owner.cpu_memory_usage += nbytes
                        owner = owner.cpu_parent
                    continue
                python_op = kind == 1 and name.startswith(OP_MARK)
                if python_op:  # an op written in Python
                    kind, name = 0, name[1:]
                    display = name
                elif kind == 0:
                    display = _op_display_name(name)
                elif kind == 3:
                    display = "ember::parallel_for" + (
                        f": {_op_display_name(name)}" if name else ""
                    )
                else:
                    display = _AUTOGRAD_NAME.get(name, name)
                outer = local[parent] if parent >= 0 else None
                if display == "aten::fill_" and outer is not None and outer.name == "aten::zero_":
                    local[i] = outer  # torch's zero_ shows no fill_ child
                    continue
                if python_op and self.record_shapes:
                    shapes, inputs = self._python_op_shapes.get((tid, i), (None, None))
                elif display == "aten::fill_" and _is_zero_fill_of(outer):
                    display = "aten::zero_"  # torch's factory zeroes its tensor with zero_
                    shapes = shapes[:1] if shapes else shapes
                trace_name = display
                if shapes is not None or (kind == 0 and self.record_shapes):
                    want = _TORCH_ARITY.get(display, 0) if kind == 0 else 0
                    shapes = list(shapes or [])
                    if len(shapes) < want:
                        shapes += [[] for _ in range(want - len(shapes))]
                if shapes and kind == 0:
                    shapes, inputs = _custom_op_shapes(display, shapes, inputs)
                described = describe(inputs, len(shapes)) if shapes is not None else None
                if kind == 0 and _restates_args_of(outer, display):
                    if shapes is not None:  # the kernel's row of torch's arguments
                        outer.input_shapes = outer.structured_input_shapes = shapes
                        _describe_inputs(outer, described)
                    local[i] = outer
                    continue
                if kind == 0 and _is_backend_call_of(outer, display):
                    outer.input_shapes = shapes if shapes is not None else []
                    _describe_inputs(outer, described)
                    local[i] = outer  # one row, as torch's: what the call does nests in outer
                    continue
                # torch lists a tensor-list argument (cat's) as [] in input_shapes, its tensors'
                # shapes in structured_input_shapes and the trace's Input Dims
                structured = shapes if kind == 0 and shapes else None
                if structured is not None:
                    shapes = [[] if _is_tensor_list(a) else a for a in shapes]
                if seq >= 0 and outer is not None and outer._op and outer.sequence_nr < 0:
                    seq = -1  # inside a factory written in Python: below autograd, as torch's
                if kind == 1 and display.startswith("ProfilerStep#"):
                    display = "ProfilerStep*"  # torch's steps share one key
                evt = FunctionEvent(
                    next_id,
                    display,
                    tid,
                    ts,
                    (end - t0) / 1000.0,
                    input_shapes=shapes if shapes is not None else [],
                    structured_input_shapes=structured,
                    trace_name=trace_name,
                    is_user_annotation=kind == 1,
                    flops=0,  # torch's events count 0 unless with_flops counts them
                    sequence_nr=seq,
                    fwd_thread=fwd,
                )
                next_id += 1
                _describe_inputs(evt, described)
                evt._worker = kind == 3
                evt._op = kind == 0
                evt._python_op = python_op
                evt._first_child = None
                if self.with_flops and kind == 0:
                    noted = _noted_flops(notes, tid, display, start)
                    evt.flops = _flops(display, evt.input_shapes) if noted is None else noted
                if parent >= 0 and local[parent] is not None:
                    evt.set_cpu_parent(local[parent])
                    if local[parent]._first_child is None:
                        local[parent]._first_child = evt
                local[i] = evt
                events.append(evt)
                by_thread.setdefault(tid, []).append(evt)
            if timed_out:
                break
        python = []
        for pid, parent_id, module_id, name, start, end, tid in self._python_events:
            if timed_out:
                break
            if self._off and not self._collected(start):
                continue
            evt = FunctionEvent(
                next_id,
                name,
                tid,
                (start - t0) / 1000.0,
                (end - t0) / 1000.0,
                is_python_function=True,
                python_id=pid,
                python_parent_id=-1 if parent_id is None else parent_id,
                python_module_id=module_id,
                flops=0,
            )
            next_id += 1
            python.append(evt)
        if timed_out:
            logging.getLogger(__name__).warning(
                "Profiler _parse_kineto_results timed out after %.3f seconds, returning partial "
                "results with %d events",
                timeout,
                len(events),
            )
        if python:
            nest_python_events(by_thread, python)
            events += python
        events.sort(key=lambda e: (e.time_range.start, -e.time_range.end, e.id))
        relink_children(events)
        every = list(events)
        out = EventList(
            remove_dup_nodes(events),
            use_device=self.use_device,
            profile_memory=self.profile_memory,
            with_flops=self.with_flops,
        )
        return out, every, memory

    def _trace(self, events):
        meta = {
            "trace_id": (
                self.custom_trace_id_callback()
                if self.custom_trace_id_callback is not None
                else uuid.uuid4().hex.upper()
            ),
        }
        meta.update(self._trace_meta)
        first = _next_external_id[0]
        trace = _chrome_trace(events, meta, self._memory, self._wall_ns, first_external_id=first)
        last = max(
            (e["args"].get("External id", 0) for e in trace["traceEvents"] if "args" in e),
            default=0,
        )
        if last >= first:
            _next_external_id[0] = -(-last // _EXTERNAL_ID_BLOCK) * _EXTERNAL_ID_BLOCK + 1
        return trace

    def _check_finish(self):
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")

    def _results(self):
        """The events, or none before the profile has stopped (torch's summaries are then
        empty; they are computed again once it has)."""
        return self.function_events if self.function_events is not None else EventList()

    def events(self):
        """events() -> EventList

        Every recorded range, ordered by start time."""
        self._check_finish()
        return self.function_events

    def table(
        self,
        sort_by=None,
        row_limit=100,
        max_src_column_width=75,
        max_name_column_width=55,
        max_shapes_column_width=80,
        header=None,
        top_level_events_only=False,
        time_unit=None,
    ):
        """table(sort_by=None, row_limit=100, max_src_column_width=75, max_name_column_width=55, max_shapes_column_width=80, header=None, top_level_events_only=False, time_unit=None) -> str

        The table of the recorded events themselves (key_averages().table() groups them)."""  # noqa: E501
        return self._results().table(
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def export_chrome_trace(self, path):
        """export_chrome_trace(path) -> None

        Writes the profile as a Chrome trace JSON (gzip-compressed when `path` ends in .gz)."""
        self._check_finish()
        _write_json(self.function_events._trace, path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """export_stacks(path, metric="self_cpu_time_total") -> None

        Writes each event's recorded stack with its metric, one per line (torch 2.13 records
        no per-op stacks, the Python calls being rows of their own, and neither does ember)."""
        if not self.with_stack:
            raise AssertionError("export_stacks() requires with_stack=True")
        self._results().export_stacks(path, metric)

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """key_averages(group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False) -> EventList

        The events grouped by name (and input shapes, stack or overload name when asked for)."""  # noqa: E501
        return self._results().key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def total_average(self):
        """total_average() -> FunctionEventAvg

        All events summed."""
        return self._results().total_average()

    @property
    def self_cpu_time_total(self):
        return self._results().self_cpu_time_total

    def __str__(self):
        self._check_finish()
        return str(self.function_events)

    __repr__ = object.__repr__


class emit_nvtx:
    """emit_nvtx(enabled=True, record_shapes=False)

    NVTX ranges are CUDA's: ember has no CUDA, so entering an enabled block fails as torch's does
    on a build without CUDA (AssertionError "Torch not compiled with CUDA enabled"); a disabled
    one runs unchanged."""

    def __init__(self, enabled=True, record_shapes=False):
        self.enabled = enabled
        self.record_shapes = record_shapes

    def __enter__(self):
        if self.enabled:
            raise AssertionError("Torch not compiled with CUDA enabled")
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False


class emit_itt(emit_nvtx):
    """emit_itt(enabled=True, record_shapes=False)

    Accepted for torch's API: ember emits no ITT ranges; the block runs unchanged."""

    def __enter__(self):
        return self
