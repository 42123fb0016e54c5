"""ember.profiler: torch.profiler's API. Every dispatcher op is recorded by the dispatcher itself
(forward, backward and other threads included); `profile` with a `schedule`, `record_function`,
`key_averages().table()`, `export_chrome_trace()`, `tensorboard_trace_handler`."""

from ..autograd.profiler import record_function
from . import profiler  # noqa: F401
from .profiler import (
    ProfilerAction,
    ProfilerActivity,
    _KinetoProfile,  # noqa: F401
    profile,
    schedule,
    supported_activities,
    tensorboard_trace_handler,
)

__all__ = [
    "ProfilerAction",
    "ProfilerActivity",
    "profile",
    "record_function",
    "schedule",
    "supported_activities",
    "tensorboard_trace_handler",
]
