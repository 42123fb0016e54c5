"""ember.utils.benchmark, as torch.utils.benchmark: `Timer` measures a statement with warmup,
replicates and a fixed thread count; `Measurement` holds the times and their statistics;
`Compare` lays measurements out as a table."""

from .common import Measurement, TaskSpec, select_unit, trim_sigfig
from .compare import Colorize, Compare
from .timer import Language, Timer, timer

__all__ = [
    "Colorize",
    "Compare",
    "Language",
    "Measurement",
    "TaskSpec",
    "Timer",
    "select_unit",
    "timer",
    "trim_sigfig",
]
