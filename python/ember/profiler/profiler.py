"""ember.profiler.profile and its schedule: torch.profiler's API over ember's recorder (every
dispatcher op, on every thread; Note [Profiler] in csrc/ember/core/profiler.h)."""

import enum
import gzip
import json
import os
import socket
import time
import warnings

from ..autograd import profiler as _autograd_profiler
from ..autograd.profiler import record_function

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]


class ProfilerActivity(enum.Enum):
    """ProfilerActivity(value)

    What a profile records: CPU (ops on the host). ember has no accelerator, so CUDA, XPU, MTIA,
    HPU and PrivateUse1 are accepted and record nothing more."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5


def supported_activities():
    """supported_activities() -> Set[ProfilerActivity]

    The activities ember can record: the CPU."""
    return {ProfilerActivity.CPU}


class ProfilerAction(enum.Enum):
    """ProfilerAction(value)

    What a schedule asks of the profiler at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0):
    """schedule(*, wait, warmup, active, repeat=0, skip_first=0, skip_first_wait=0) -> Callable

    A schedule for profile(schedule=...): after `skip_first` steps, cycles of `wait` idle steps,
    `warmup` steps and `active` recorded steps, `repeat` times (0: until the profile stops); the
    trace of each cycle is handed to on_trace_ready at its last active step. With
    `skip_first_wait`, the first cycle has no wait."""
    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0)."
        )
    if warmup == 0:
        warnings.warn(
            "Profiler won't be using warmup, this can skew profiler results", stacklevel=2
        )

    def schedule_fn(step):
        if step < 0:
            raise ValueError(f"schedule: expected a step >= 0; got {step}")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait and wait > 0:
            step += wait  # the first cycle starts at its warmup
        cycle = wait + warmup + active
        if repeat > 0 and step // cycle >= repeat:
            return ProfilerAction.NONE
        pos = step % cycle
        if pos < wait:
            return ProfilerAction.NONE
        if pos < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if pos < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    return schedule_fn


def _default_schedule(step):
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False):
    """tensorboard_trace_handler(dir_name, worker_name=None, use_gzip=False, use_python_export=False) -> Callable

    An on_trace_ready handler that writes each trace into `dir_name` as
    `<worker_name>.<time in ns>.pt.trace.json[.gz]`, the layout TensorBoard's profiler plugin
    reads; `worker_name` defaults to `<host>_<pid>`. ember's trace is always written by its
    Python exporter, which torch's `use_python_export=True` selects."""  # noqa: E501

    def handler(prof):
        try:
            os.makedirs(dir_name, exist_ok=True)
        except OSError as e:
            raise RuntimeError("Can't create directory: " + dir_name) from e
        name = worker_name or f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        path = os.path.join(dir_name, file_name)
        while os.path.exists(path):  # two traces within the clock's resolution
            stem, ext = path.split(".pt.trace", 1)
            path = f"{stem}_.pt.trace{ext}"
        prof.export_chrome_trace(path, use_python_export=use_python_export)

    return handler


class _KinetoProfile:
    """_KinetoProfile(*, activities=None, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None, acc_events=False, custom_trace_id_callback=None, post_processing_timeout_s=None)

    A profile without a schedule: start() and stop() bracket what it records."""  # noqa: E501

    def __init__(
        self,
        *,
        activities=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events=False,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        self.activities = set(activities) if activities else supported_activities()
        for a in self.activities:
            if not isinstance(a, ProfilerActivity):
                raise TypeError(
                    f"profile: expected ProfilerActivity values in activities; got {a!r}"
                )
        self.record_shapes = record_shapes
        self.with_flops = with_flops
        self.profile_memory = profile_memory
        self.with_stack = with_stack
        self.with_modules = with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.post_processing_timeout_s = post_processing_timeout_s
        self.profiler = None
        self._metadata = {}
        self._accumulated = []  # earlier cycles' events, with acc_events

    def start(self):
        """start() -> None

        Starts recording."""
        self.prepare_trace()
        self.start_trace()

    def stop(self):
        """stop() -> None

        Stops recording; the results are then in events(), key_averages() and the trace."""
        self.stop_trace()

    def prepare_trace(self):
        """prepare_trace() -> None

        Creates the recorder of the next trace."""
        for device in (ProfilerActivity.CUDA, ProfilerActivity.XPU):
            if device in self.activities:  # ember has neither device
                warnings.warn(
                    f"{device.name} is not available, disabling {device.name} profiling",
                    stacklevel=3,
                )
        if not self.activities - {ProfilerActivity.CUDA, ProfilerActivity.XPU}:
            raise AssertionError("No activities specified for the profiler")
        if self.acc_events and self.profiler is not None and self.profiler.function_events:
            if getattr(self.profiler, "_merged", False):  # already holds the earlier cycles
                self._accumulated = list(self.profiler.function_events)
            else:
                self._accumulated.extend(self.profiler.function_events)
        self.profiler = _autograd_profiler.profile(
            record_shapes=self.record_shapes,
            with_flops=self.with_flops,
            profile_memory=self.profile_memory,
            with_stack=self.with_stack,
            with_modules=self.with_modules,
            acc_events=self.acc_events,
            custom_trace_id_callback=self.custom_trace_id_callback,
            post_processing_timeout_s=self.post_processing_timeout_s,
        )
        self.profiler._prepare_trace()

    def start_trace(self):
        """start_trace() -> None

        Starts the recorder prepare_trace() created."""
        if self.profiler is None:
            self.prepare_trace()
        self.profiler._trace_meta = self._trace_meta()
        self.profiler._start_trace()

    def stop_trace(self):
        """stop_trace() -> None

        Stops the recorder."""
        if (
            self.profiler is not None
            and self.profiler.entered
            and self.profiler.function_events is None
        ):
            self.profiler._trace_meta = self._trace_meta()
            self.profiler._stop_trace()

    def _trace_meta(self):
        """The trace's top-level entries after its trace_id, as torch's: each option that is on
        (as 1, in torch's order), then add_metadata's entries."""
        flags = ("with_stack", "profile_memory", "record_shapes", "with_modules", "with_flops")
        meta = {name: 1 for name in flags if getattr(self, name)}
        meta.update(self._metadata)
        return meta

    def _require_results(self, what):
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        if self.profiler.function_events is None:
            raise RuntimeError("profile: no results yet; the profile must be stopped first")
        if self._accumulated and not getattr(self.profiler, "_merged", False):
            prof = self.profiler
            prof._merged = True
            events = prof.function_events
            prof.function_events = type(events)(
                self._accumulated + list(events),
                use_device=events._use_device,
                profile_memory=events._profile_memory,
                with_flops=events._with_flops,
                _trace=events._trace,
            )
        return self.profiler

    def export_chrome_trace(self, path, use_python_export=False):
        """export_chrome_trace(path, use_python_export=False) -> None

        Writes the trace as Chrome trace JSON (Perfetto, chrome://tracing); gzip-compressed when
        `path` ends in .gz. The trace is serialized in Python either way (torch's
        `use_python_export=True` writes the same trace from Python)."""
        return self._require_results("exporting chrome trace").export_chrome_trace(path)

    def export_stacks(self, path, metric="self_cpu_time_total"):
        """export_stacks(path, metric="self_cpu_time_total") -> None

        Writes the recorded Python stacks (with_stack=True) with their metric, one per line."""
        return self._require_results("exporting stacks").export_stacks(path, metric)

    def events(self):
        """events() -> EventList

        Every recorded range of the last trace, ordered by start time (none while the trace
        records, as torch's)."""
        if self.profiler is not None and self.profiler.function_events is None:
            return _autograd_profiler.EventList()
        return self._require_results("accessing events").events()

    def toggle_collection_dynamic(self, enable, activities):
        """toggle_collection_dynamic(enable, activities) -> None

        Turns the collection of `activities` (ProfilerActivity.CPU) off or back on while the
        profile records: what starts while it is off is left out."""
        if self.profiler is None:
            return
        self.profiler.toggle_collection_dynamic(enable, activities)

    def key_averages(
        self, group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False
    ):
        """key_averages(group_by_input_shape=False, group_by_stack_n=0, group_by_overload_name=False) -> EventList

        The events grouped by name (and input shapes, stack prefix or overload name); its table()
        prints torch's profiler table."""  # noqa: E501
        if self.profiler is not None and self.profiler.function_events is None:
            return _autograd_profiler.EventList().key_averages()  # while recording, as torch's
        return self._require_results("getting key averages").key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name
        )

    def add_metadata(self, key, value):
        """add_metadata(key, value) -> None

        Adds a string entry to the trace's metadata."""
        self._metadata[key] = value

    def add_metadata_json(self, key, value):
        """add_metadata_json(key, value) -> None

        Adds a JSON-encoded entry to the trace's metadata."""
        self._metadata[key] = json.loads(value)

    def preset_metadata_json(self, key, value):
        """preset_metadata_json(key, value) -> None

        Adds a JSON-encoded entry to the metadata of the traces to come."""
        self.add_metadata_json(key, value)


class profile(_KinetoProfile):
    """profile(*, activities=None, schedule=None, on_trace_ready=None, record_shapes=False, profile_memory=False, with_stack=False, with_flops=False, with_modules=False, experimental_config=None, execution_trace_observer=None, acc_events=False, use_cuda=None, custom_trace_id_callback=None, post_processing_timeout_s=None)

    Records every op (and record_function range) run while it is active, on every thread: ops of
    the backward pass and of pool threads included. A context manager, or start()/stop(). With a
    `schedule`, step() advances it: steps are recorded as "ProfilerStep#<n>" ranges, and each
    cycle's trace goes to `on_trace_ready(prof)`; without one, everything between start and stop
    is one trace, handed to on_trace_ready at stop. `post_processing_timeout_s` bounds the time
    spent turning the records into events once recording stops (partial results after it)."""  # noqa: E501

    def __init__(
        self,
        *,
        activities=None,
        schedule=None,
        on_trace_ready=None,
        record_shapes=False,
        profile_memory=False,
        with_stack=False,
        with_flops=False,
        with_modules=False,
        experimental_config=None,
        execution_trace_observer=None,
        acc_events=False,
        use_cuda=None,
        custom_trace_id_callback=None,
        post_processing_timeout_s=None,
    ):
        activities = set(activities) if activities else supported_activities()
        if use_cuda:
            activities.add(ProfilerActivity.CUDA)
        super().__init__(
            activities=activities,
            record_shapes=record_shapes,
            profile_memory=profile_memory,
            with_stack=with_stack,
            with_flops=with_flops,
            with_modules=with_modules,
            experimental_config=experimental_config,
            execution_trace_observer=execution_trace_observer,
            acc_events=acc_events,
            custom_trace_id_callback=custom_trace_id_callback,
            post_processing_timeout_s=post_processing_timeout_s,
        )
        self.schedule = schedule if schedule is not None else _default_schedule
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.current_action = self.schedule(self.step_num)
        self.step_rec_fn = None
        self._running = False

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        self.stop()
        return False

    def start(self):
        """start() -> None

        Starts the profile at step 0 of its schedule."""
        self._running = True
        self._transit(ProfilerAction.NONE, self.current_action)
        self._open_step()

    def stop(self):
        """stop() -> None

        Ends the profile; a trace being recorded is finished and handed to on_trace_ready."""
        if not self._running:
            return
        self._close_step()
        self._transit(self.current_action, None)
        self._running = False

    def step(self):
        """step() -> None

        Marks the end of a step (e.g. of a training iteration) and applies the schedule's
        action for the next one."""
        self._close_step()
        prev = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(prev, self.current_action)
        self._open_step()

    def _open_step(self):
        if self.record_steps and self.current_action in (
            ProfilerAction.RECORD,
            ProfilerAction.RECORD_AND_SAVE,
        ):
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def _close_step(self):
        if self.step_rec_fn is not None:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None

    def _save(self):
        self.stop_trace()
        if self.on_trace_ready is not None:
            self.on_trace_ready(self)

    def _transit(self, prev, cur):
        recording = (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        if prev in recording and (prev == ProfilerAction.RECORD_AND_SAVE or cur not in recording):
            self._save()
            prev = ProfilerAction.NONE
        if cur in recording and prev not in recording:
            self.prepare_trace()
            self.start_trace()


def _open_trace(path):
    """The JSON object of a trace file written by export_chrome_trace (.json or .json.gz)."""
    opener = gzip.open if os.fspath(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)
