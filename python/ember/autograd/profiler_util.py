"""The profiler's events and their summaries, shaped as torch.autograd.profiler_util's:
FunctionEvent (one recorded range), FunctionEventAvg (a group of them) and EventList (with
table(), key_averages() and export_chrome_trace()). Built by ember.autograd.profiler from the
records the dispatcher writes (Note [Profiler] in csrc/ember/core/profiler.h)."""

import enum
import json
import os
import socket

from .._ops._op_inputs import concrete_text

__all__ = ["DeviceType", "EventList", "FunctionEvent", "FunctionEventAvg", "Interval"]


class DeviceType(enum.Enum):
    """DeviceType(value)

    The device an event ran on (ember records CPU events only)."""

    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


def _format_time(time_us):
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def _format_share(part, total):
    if total == 0:
        return "NaN" if part == 0 else "inf"
    return f"{part * 100.0 / total:.2f}%"


def _format_memory(nbytes):
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


class Interval:
    """Interval(start, end)

    A time range in microseconds."""

    def __init__(self, start, end):
        self.start = start
        self.end = end

    def elapsed_us(self):
        """elapsed_us() -> float

        The length of the interval in microseconds."""
        return self.end - self.start


class _TimeStrings:
    """The `*_str` views of the time attributes, formatted as the table prints them."""

    @property
    def cpu_time_str(self):
        return _format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self):
        return _format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self):
        return _format_time(self.self_cpu_time_total)

    @property
    def device_time_str(self):
        return _format_time(self.device_time)

    @property
    def device_time_total_str(self):
        return _format_time(self.device_time_total)

    @property
    def self_device_time_total_str(self):
        return _format_time(self.self_device_time_total)

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count

    @property
    def cuda_time(self):
        return self.device_time


class FunctionEvent(_TimeStrings):
    """FunctionEvent(id, name, thread, start_us, end_us, overload_name=None, fwd_thread=None, input_shapes=None, stack=None, scope=0, use_device=None, cpu_memory_usage=0, device_memory_usage=0, is_async=False, is_remote=False, sequence_nr=-1, node_id=-1, device_type=DeviceType.CPU, device_index=0, device_resource_id=None, is_legacy=False, flops=None, trace_name=None, concrete_inputs=None, kwinputs=None, is_user_annotation=False, is_python_function=False, activity_type=None, metadata_json=None, flow_id=None, flow_type=None, flow_start=None, external_id=0, linked_correlation_id=0, extra_meta=None, structured_input_shapes=None, structured_input_strides=None, input_dtypes=None, python_id=-1, python_parent_id=-1, python_module_id=-1)

    One recorded range: an op, a user range (record_function), an autograd node, a Python call
    (with_stack) or a pool worker's share of an op, with its time, its thread, its inputs
    (record_shapes: shapes, strides, types, concrete values), its autograd sequence number and
    the memory it allocated (itself and its children)."""  # noqa: E501

    def __init__(
        self,
        id,
        name,
        thread,
        start_us,
        end_us,
        overload_name=None,
        fwd_thread=None,
        input_shapes=None,
        stack=None,
        scope=0,
        use_device=None,
        cpu_memory_usage=0,
        device_memory_usage=0,
        is_async=False,
        is_remote=False,
        sequence_nr=-1,
        node_id=-1,
        device_type=DeviceType.CPU,
        device_index=0,
        device_resource_id=None,
        is_legacy=False,
        flops=None,
        trace_name=None,
        concrete_inputs=None,
        kwinputs=None,
        is_user_annotation=False,
        is_python_function=False,
        activity_type=None,
        metadata_json=None,
        flow_id=None,
        flow_type=None,
        flow_start=None,
        external_id=0,
        linked_correlation_id=0,
        extra_meta=None,
        structured_input_shapes=None,
        structured_input_strides=None,
        input_dtypes=None,
        python_id=-1,
        python_parent_id=-1,
        python_module_id=-1,
    ):
        self.id = id
        self.node_id = node_id
        self.name = name
        self.overload_name = overload_name if overload_name is not None else ""
        self.trace_name = trace_name if trace_name is not None else name
        self.time_range = Interval(start_us, end_us)
        self.thread = thread
        self.fwd_thread = fwd_thread
        self.kernels = []
        self.count = 1
        self.cpu_children = []
        self.cpu_parent = None
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.concrete_inputs = concrete_inputs if concrete_inputs is not None else []
        self.kwinputs = kwinputs if kwinputs is not None else {}
        self.stack = stack if stack is not None else []
        self.scope = scope
        self.use_device = use_device
        self.cpu_memory_usage = cpu_memory_usage
        self.device_memory_usage = device_memory_usage
        self.is_async = is_async
        self.is_remote = is_remote
        self.sequence_nr = sequence_nr
        self.device_type = device_type
        self.device_index = device_index
        self.device_resource_id = thread if device_resource_id is None else device_resource_id
        self.is_legacy = is_legacy
        self.flops = flops
        self.is_user_annotation = is_user_annotation
        self.is_python_function = is_python_function
        self.activity_type = activity_type
        self.metadata_json = metadata_json
        self.flow_id = flow_id
        self.flow_type = flow_type
        self.flow_start = flow_start
        self.external_id = external_id
        self.linked_correlation_id = linked_correlation_id
        self.extra_meta = extra_meta
        self.structured_input_shapes = structured_input_shapes
        # torch's record of the inputs' strides and types: [] without record_shapes
        self.structured_input_strides = (
            structured_input_strides if structured_input_strides is not None else []
        )
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.python_id = python_id
        self.python_parent_id = python_parent_id
        self.python_module_id = python_module_id
        self.self_cpu_percent = -1
        self.total_cpu_percent = -1
        self.total_device_percent = -1

    def append_kernel(self, name, device, duration):
        """append_kernel(name, device, duration) -> None

        Records a device kernel the event launched (ember's events launch none)."""
        self.kernels.append((name, device, duration))

    def append_cpu_child(self, child):
        """append_cpu_child(child) -> None

        Adds a range that ran inside this one, on its thread."""
        if not isinstance(child, FunctionEvent):
            raise TypeError(f"append_cpu_child: expected a FunctionEvent; got {type(child)}")
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent):
        """set_cpu_parent(parent) -> None

        Sets the innermost range this one ran inside of."""
        if not isinstance(parent, FunctionEvent):
            raise TypeError(f"set_cpu_parent: expected a FunctionEvent; got {type(parent)}")
        self.cpu_parent = parent

    @property
    def key(self):
        return self.name

    @property
    def cpu_time_total(self):
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self):
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    @property
    def self_cpu_memory_usage(self):
        return self.cpu_memory_usage - sum(c.cpu_memory_usage for c in self.cpu_children)

    @property
    def device_time_total(self):
        return 0

    @property
    def self_device_time_total(self):
        return 0

    @property
    def cuda_time_total(self):
        return 0

    @property
    def self_cuda_time_total(self):
        return 0

    @property
    def self_device_memory_usage(self):
        return 0

    @property
    def self_cuda_memory_usage(self):
        return 0

    def __repr__(self):
        return (
            f"<FunctionEvent id={self.id} name={self.name} thread={self.thread} "
            f"cpu_time={self.cpu_time_str} start_us={self.time_range.start:.3f} "
            f"end_us={self.time_range.end:.3f} "
            f"cpu_children={[c.id for c in self.cpu_children]} "
            f"input_shapes={self.input_shapes} cpu_memory_usage={self.cpu_memory_usage} "
            f"is_user_annotation={self.is_user_annotation}>"
        )


class FunctionEventAvg(_TimeStrings):
    """FunctionEventAvg()

    The events of one key summed: their count, total and self times and memory."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.node_id = 0
        self.is_async = False
        self.is_remote = False
        self.use_device = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.input_shapes = None
        self.overload_name = None
        self.stack = None
        self.scope = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.cpu_children = None
        self.cpu_parent = None
        self.device_type = DeviceType.CPU
        self.is_legacy = False
        self.flops = 0
        self.is_user_annotation = False

    def add(self, other):
        """add(other) -> FunctionEventAvg

        Adds an event (or another average) of the same key."""
        if self.key is None:
            self.key = other.key
            self.node_id = other.node_id
            self.is_async = other.is_async
            self.is_remote = other.is_remote
            self.cpu_parent = other.cpu_parent
            self.cpu_children = other.cpu_children
            self.overload_name = other.overload_name
            self.input_shapes = other.input_shapes
            self.stack = other.stack
            self.scope = other.scope
            self.device_type = other.device_type
            self.is_legacy = other.is_legacy
            self.use_device = other.use_device
            self.is_user_annotation = other.is_user_annotation
        if other.key != self.key:
            raise ValueError(f"add: expected an event of key {self.key!r}; got {other.key!r}")
        return self._accumulate(other)

    def _accumulate(self, other):
        self.cpu_time_total += other.cpu_time_total
        self.device_time_total += other.device_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.self_device_time_total += other.self_device_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.device_memory_usage += other.device_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.self_device_memory_usage += other.self_device_memory_usage
        self.count += other.count
        if self.flops is None:
            self.flops = other.flops
        elif other.flops is not None:
            self.flops += other.flops
        return self

    def __iadd__(self, other):
        return self.add(other)

    def __repr__(self):
        return (
            f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
            f"cpu_time={self.cpu_time_str} input_shapes={self.input_shapes} "
            f"cpu_memory_usage={self.cpu_memory_usage}>"
        )


class EventList(list):
    """EventList(*args, use_device=None, profile_memory=False, with_flops=False)

    A list of events with torch's summaries: table(), key_averages(), total_average() and
    export_chrome_trace()."""

    def __init__(self, *args, **kwargs):
        use_device = kwargs.pop("use_device", None)
        profile_memory = kwargs.pop("profile_memory", False)
        with_flops = kwargs.pop("with_flops", False)
        self._trace = kwargs.pop("_trace", None)
        super().__init__(*args, **kwargs)
        self._use_device = use_device
        self._profile_memory = profile_memory
        self._with_flops = with_flops

    def __str__(self):
        return self.table()

    @property
    def self_cpu_time_total(self):
        return sum(e.self_cpu_time_total for e in self)

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

        The events as torch's profiler table: Name, Self CPU %, Self CPU, CPU total %, CPU total,
        CPU time avg, CPU Mem and Self CPU Mem (with profile_memory), # of Calls, Input Shapes
        (when grouped by them), sorted descending by the attribute `sort_by`."""  # noqa: E501
        return _build_table(
            self,
            sort_by=sort_by,
            row_limit=row_limit,
            max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width,
            header=header,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
            top_level_events_only=top_level_events_only,
            time_unit=time_unit,
        )

    def key_averages(
        self, group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """key_averages(group_by_input_shapes=False, group_by_stack_n=0, group_by_overload_name=False) -> EventList

        One FunctionEventAvg per event name (and input shapes, stack prefix or overload name when
        asked for), in order of first appearance."""  # noqa: E501
        groups = {}
        for evt in self:
            if getattr(evt, "_worker", False):  # a pool chunk: in the trace, not an op's row
                continue
            key = [evt.key, str(evt.node_id)]
            if group_by_input_shapes:
                key.append(str(evt.input_shapes))
            if group_by_stack_n > 0:
                key += list(evt.stack[:group_by_stack_n])
            if group_by_overload_name:
                key.append(evt.overload_name)
            key = tuple(key)
            if key not in groups:
                groups[key] = FunctionEventAvg()
            groups[key].add(evt)
        out = EventList(
            groups.values(),
            use_device=self._use_device,
            profile_memory=self._profile_memory,
            with_flops=self._with_flops,
        )
        for avg in out:
            if not group_by_input_shapes:
                avg.input_shapes = ""
            avg.stack = avg.stack[:group_by_stack_n] if group_by_stack_n else []
            if not group_by_overload_name:
                avg.overload_name = ""
        return out

    def total_average(self):
        """total_average() -> FunctionEventAvg

        Every event summed into one average, keyed "Total"."""
        total = FunctionEventAvg()
        for evt in self:
            if total.key is None:
                total.add(evt)
            else:
                total._accumulate(evt)
        total.key = "Total"
        return total

    def export_chrome_trace(self, path):
        """export_chrome_trace(path) -> None

        Writes the events as a Chrome trace (JSON that Perfetto and chrome://tracing open):
        one complete ("X") event per range, on its thread."""
        trace = self._trace or _chrome_trace(self, {})
        _write_json(trace, path)

    def supported_export_stacks_metrics(self):
        """supported_export_stacks_metrics() -> List[str]

        The metrics export_stacks() takes (the device ones read the device time)."""
        return [
            "self_cpu_time_total",
            "self_cuda_time_total",
            "self_xpu_time_total",
            "self_privateuse1_time_total",
        ]

    def export_stacks(self, path, metric):
        """export_stacks(path, metric) -> None

        Writes one line per event with a recorded stack and a positive metric, as torch's: the
        frames outermost first, joined by ";" (blanks in a frame as "_"), then the value."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError(f"metric should be one of: {self.supported_export_stacks_metrics()}")
        attr = metric
        for device in ("cuda", "xpu", "privateuse1"):
            attr = attr.replace(device, "device")
        blanks = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as f:
            for evt in self:
                value = int(getattr(evt, attr))
                if evt.stack and value > 0:
                    frames = ";".join(s.translate(blanks) for s in reversed(evt.stack))
                    f.write(f"{frames} {value}\n")


def _build_table(
    events,
    sort_by=None,
    header=None,
    row_limit=100,
    max_src_column_width=75,
    max_name_column_width=55,
    max_shapes_column_width=80,
    with_flops=False,
    profile_memory=False,
    top_level_events_only=False,
    time_unit=None,
):
    if len(events) == 0:
        return ""
    rows = list(events)
    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device")
        rows.sort(key=lambda e: getattr(e, attr), reverse=True)
    show_shapes = any(e.input_shapes for e in rows)
    show_stack = any(e.stack for e in rows)
    flops = [e.flops for e in rows if e.flops]
    show_flops = with_flops and bool(flops)

    name_w = max(len(e.key) for e in rows) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    columns = [("Name", name_w, ">")]
    for title in ("Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"):
        columns.append((title, 12, ">"))
    if profile_memory:
        columns += [("CPU Mem", 12, ">"), ("Self CPU Mem", 12, ">")]
    columns.append(("# of Calls", 12, ">"))
    if show_shapes:
        shapes_w = max(len(str(e.input_shapes)) for e in rows) + 4
        if max_shapes_column_width is not None:
            shapes_w = min(shapes_w, max_shapes_column_width)
        columns.append(("Input Shapes", shapes_w, ">"))
    if show_stack:
        src_w = max(len(s) for e in rows for s in e.stack) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)
        columns.append(("Source Location", src_w, "<"))
    if show_flops:
        exponent = 0
        smallest = min(flops)
        while exponent < 5 and smallest >= 1000 ** (exponent + 1):
            exponent += 1
        flops_unit = ["", "K", "M", "G", "T", "P"][exponent]
        columns.append((f"Total {flops_unit}FLOPs", 12, ">"))

    fmt = "".join("{:" + align + str(width) + "}  " for _, width, align in columns)
    sep = "".join("-" * width + "  " for _, width, _ in columns)
    line_length = sum(width + 2 for _, width, _ in columns) - 2

    def as_time(us):
        if time_unit == "s":
            return f"{us / 1e6:.3f}s"
        if time_unit == "ms":
            return f"{us / 1e3:.3f}ms"
        if time_unit == "us":
            return f"{us:.3f}us"
        return _format_time(us)

    self_total = sum(e.self_cpu_time_total for e in rows)
    out = []
    if header is not None:
        out += ["=" * line_length, header]
    if top_level_events_only:
        out += ["=" * line_length, "This report only display top-level ops statistics"]
    out += [sep, fmt.format(*[c[0] for c in columns]), sep]
    shown = 0
    for e in rows:
        if shown == row_limit:
            break
        if top_level_events_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[: max_name_column_width - 3] + "..."
        e.self_cpu_percent = _format_share(e.self_cpu_time_total, self_total)
        e.total_cpu_percent = _format_share(e.cpu_time_total, self_total) if not e.is_async else 0
        values = [
            name,
            e.self_cpu_percent,
            as_time(e.self_cpu_time_total),
            e.total_cpu_percent,
            as_time(e.cpu_time_total),
            as_time(e.cpu_time),
        ]
        if profile_memory:
            values += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        values.append(e.count)
        if show_shapes:
            values.append(str(e.input_shapes)[:shapes_w])
        if show_stack:
            src = e.stack[0] if e.stack else ""
            values.append(src if len(src) <= src_w else "..." + src[len(src) - src_w + 3 :])
        if show_flops:
            values.append(f"{(e.flops or 0) / 1000**exponent:8.3f}" if e.flops else "--")
        out.append(fmt.format(*values))
    out.append(sep)
    out.append(f"Self CPU time total: {as_time(self_total)}")
    return "".join(line + "\n" for line in out)


# ---------------------------------------------------------------------------------------------
# Chrome traces


def _chrome_trace(events, meta, memory=(), base_time_ns=0, pid=None, first_external_id=1):
    """The Chrome trace of `events` (FunctionEvents) and `memory` records
    ((tid, ts_us, bytes, addr, total_allocated)), laid out as torch's: metadata, the ops and user
    ranges (numbered from `first_external_id`, "External id"), the allocations, the Python calls
    (each numbered by its place, "Ev Idx"), then the session's span and its markers."""
    pid = os.getpid() if pid is None else pid
    spans = [e for e in events if e.name != "[memory]"]
    start = min((e.time_range.start for e in spans), default=0.0)
    end = max((e.time_range.end for e in spans), default=0.0)
    start, end = round(start, 3), round(end, 3)
    threads = sorted({e.thread for e in events} | {m[0] for m in memory})

    def meta_event(name, tid, args, pid=pid):
        return {"ph": "M", "name": name, "ts": start, "pid": pid, "tid": tid, "args": args}

    trace = [
        meta_event("process_name", 0, {"name": "python"}),
        meta_event("process_labels", 0, {"labels": "CPU"}),
        meta_event("process_sort_index", 0, {"sort_index": pid}),
    ]
    for tid in threads:
        trace.append(meta_event("thread_name", tid, {"name": f"thread {tid} (python)"}))
        trace.append(meta_event("thread_sort_index", tid, {"sort_index": tid}))
    ops = [e for e in spans if not e.is_python_function]
    python = [e for e in events if e.is_python_function]
    for n, e in enumerate(
        sorted(ops, key=lambda e: (e.thread, e.time_range.start, -e.time_range.end))
    ):
        cat = "user_annotation" if e.is_user_annotation else "cpu_op"
        trace.append(
            _trace_event(e, cat, pid, _trace_args(e, external_id=first_external_id + n, index=n))
        )
    index = len(ops)
    for tid, ts, nbytes, addr, total in memory:
        args = {
            "Total Reserved": 0,
            "Total Allocated": total,
            "Bytes": nbytes,
            "Device Id": -1,
            "Device Type": 0,
            "Addr": addr,
            "finished": False,
            "Ev Idx": index,
        }
        index += 1
        trace.append(
            {
                "ph": "i",
                "cat": "cpu_instant_event",
                "s": "t",
                "name": "[memory]",
                "pid": pid,
                "tid": tid,
                "ts": round(ts, 3),
                "args": args,
            }
        )
    for e in sorted(python, key=lambda e: e.python_id):
        args = {
            "Python parent id": None if e.python_parent_id < 0 else e.python_parent_id,
            "Python id": e.python_id,
        }
        if e.python_module_id >= 0:
            args["Python module id"] = e.python_module_id
        args["Ev Idx"] = index
        index += 1
        trace.append(_trace_event(e, "python_function", pid, args))
    if spans:  # the session's own span and markers, as torch's trace has
        trace.append(
            {
                "ph": "X",
                "cat": "Trace",
                "name": "PyTorch Profiler (0)",
                "pid": "Spans",
                "tid": "PyTorch Profiler",
                "ts": start,
                "dur": round(end - start, 3),
                "args": {"Op count": 0},
            }
        )
        trace.append(meta_event("process_sort_index", 0, {"sort_index": 536870912}, "Spans"))
        trace.append(
            {
                "ph": "i",
                "s": "g",
                "name": "Iteration Start: PyTorch Profiler",
                "pid": "Traces",
                "tid": "Trace PyTorch Profiler",
                "ts": start,
            }
        )
        trace.append(
            {"ph": "i", "s": "g", "name": "Record Window End", "pid": "", "tid": "", "ts": end}
        )
    out = {"schemaVersion": 1, "deviceProperties": []}
    out.update(meta)
    out["host_name"] = socket.gethostname()
    out["displayTimeUnit"] = "ms"
    out["baseTimeNanoseconds"] = base_time_ns
    out["traceEvents"] = trace
    return out


def _trace_event(e, cat, pid, args):
    return {
        "ph": "X",
        "cat": cat,
        "name": e.trace_name,
        "pid": pid,
        "tid": e.thread,
        "ts": round(e.time_range.start, 3),
        "dur": round(e.time_range.elapsed_us(), 3),
        "args": args,
    }


def _trace_args(e, external_id, index):
    """torch's `args` of an op, node or user range, in its order: the sequence number that links
    a forward op to its backward node comes before the record function id in a row with inputs,
    after it in one without."""
    args = {"External id": external_id}
    link = {}
    if e.sequence_nr >= 0:
        link = {"Sequence number": e.sequence_nr, "Fwd thread id": e.fwd_thread}
    if e.input_shapes:
        args.update(link)
        args["Record function id"] = 0
        if e.input_dtypes:  # Note [Profiler inputs] in core/profiler.h
            args["Concrete Inputs"] = [concrete_text(v) for v in e.concrete_inputs]
            args["Input type"] = e.input_dtypes
            args["Input Strides"] = e.structured_input_strides
        args["Input Dims"] = e.structured_input_shapes or e.input_shapes
    else:
        args["Record function id"] = 0
        args.update(link)
    if e.flops:
        args["flops"] = e.flops
    args["Ev Idx"] = index
    return args


def _write_json(trace, path):
    """Writes `trace` to `path`, naming the file in it as torch's traceName."""
    path = os.fspath(path)
    trace = dict(trace, traceName=path)
    if path.endswith(".gz"):
        import gzip

        with gzip.open(path, "wt") as f:
            json.dump(trace, f)
    else:
        with open(path, "w") as f:
            json.dump(trace, f)
