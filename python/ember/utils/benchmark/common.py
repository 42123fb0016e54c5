"""TaskSpec and Measurement: what was timed, and the times with their statistics."""

import collections
import contextlib
import math
import struct
import textwrap

from ... import _C

__all__ = ["TaskSpec", "Measurement", "select_unit", "trim_sigfig", "set_torch_threads"]

_MAX_SIGNIFICANT_FIGURES = 4
_MIN_CONFIDENCE_INTERVAL = 25e-9  # seconds
_IQR_WARN_THRESHOLD = 0.1
_IQR_GROSS_WARN_THRESHOLD = 0.25

_TASK_FIELDS = (
    "stmt",
    "setup",
    "global_setup",
    "label",
    "sub_label",
    "description",
    "env",
    "num_threads",
)


class TaskSpec:
    """TaskSpec(stmt, setup, global_setup="", label=None, sub_label=None, description=None, env=None, num_threads=1)

    What a Timer measures (everything but its globals); hashable, so measurements of the same
    task can be grouped."""  # noqa: E501

    def __init__(
        self,
        stmt,
        setup,
        global_setup="",
        label=None,
        sub_label=None,
        description=None,
        env=None,
        num_threads=1,
    ):
        self.stmt, self.setup, self.global_setup = stmt, setup, global_setup
        self.label, self.sub_label, self.description = label, sub_label, description
        self.env, self.num_threads = env, num_threads

    def _key(self):
        return tuple(getattr(self, f) for f in _TASK_FIELDS)

    def __eq__(self, other):
        return isinstance(other, TaskSpec) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in _TASK_FIELDS)
        return f"TaskSpec({fields})"

    @property
    def title(self):
        """title -> str

        The label (or the statement) and the sub-label."""
        sub = f": {self.sub_label}" if self.sub_label else ""
        if self.label is not None:
            return self.label + sub
        if "\n" not in self.stmt:
            return self.stmt + sub
        paren = f" ({self.sub_label})" if self.sub_label else ""
        return f"stmt:{paren}\n{textwrap.indent(self.stmt, '  ')}"

    def setup_str(self):
        """setup_str() -> str

        The setup as shown in a summary ('' for none)."""
        if self.setup == "pass" or not self.setup:
            return ""
        if "\n" in self.setup:
            return f"setup:\n{textwrap.indent(self.setup, '  ')}"
        return f"setup: {self.setup}"

    def summarize(self):
        """summarize() -> str

        Title, description and setup, one per line."""
        parts = [self.title, self.description or "", self.setup_str()]
        return "\n".join(p + "\n" if "\n" in p else p for p in parts if p)


def _quantile(sorted_values, q):
    """The q-quantile by linear interpolation between order statistics (numpy's default)."""
    pos = (len(sorted_values) - 1) * q
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (pos - lo)


class Measurement:
    """Measurement(number_per_run, raw_times, task_spec, metadata=None)

    The times of one or more runs of `number_per_run` executions each; `times`, `median`,
    `mean` and `iqr` are per execution, in seconds."""

    def __init__(self, number_per_run, raw_times, task_spec, metadata=None):
        self.number_per_run = number_per_run
        self.raw_times = list(raw_times)
        self.task_spec = task_spec
        self.metadata = metadata
        self._sorted = None

    def __getattr__(self, name):
        if name in _TASK_FIELDS:
            return getattr(self.task_spec, name)
        raise AttributeError(f"'Measurement' object has no attribute '{name}'")

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if k != "_sorted"}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._sorted = None

    @property
    def times(self):
        """times -> List[float]

        Seconds per execution, one entry per run."""
        return [t / self.number_per_run for t in self.raw_times]

    def _stats(self):
        if self._sorted is None or len(self._sorted) != len(self.raw_times):
            s = sorted(self.times)
            self._sorted = s
            self._median = _quantile(s, 0.5)
            self._mean = sum(s) / len(s)
            self._p25, self._p75 = _quantile(s, 0.25), _quantile(s, 0.75)
            self._warnings = ()
            if not self.meets_confidence(_IQR_GROSS_WARN_THRESHOLD):
                self._warn("This suggests significant environmental influence.")
            elif not self.meets_confidence(_IQR_WARN_THRESHOLD):
                self._warn("This could indicate system fluctuation.")
        return self

    def _warn(self, why):
        rel = self.iqr / self.median * 100
        self._warnings += (
            f"  WARNING: Interquartile range is {rel:.1f}% of the median measurement.\n"
            f"           {why}",
        )

    @property
    def median(self):
        """median -> float"""
        return self._stats()._median

    @property
    def mean(self):
        """mean -> float"""
        return self._stats()._mean

    @property
    def iqr(self):
        """iqr -> float

        The interquartile range (75th minus 25th percentile)."""
        s = self._stats()
        return s._p75 - s._p25

    @property
    def significant_figures(self):
        """significant_figures -> int

        How many figures of the median the spread of the middle half of the times supports
        (a 90% confidence interval, at least 25 ns), between 1 and 4."""
        s = self._stats()._sorted
        n = len(s)
        middle = s[n // 4 : math.ceil(3 * n / 4)]
        mu = sum(middle) / len(middle)
        std = math.sqrt(sum((x - mu) ** 2 for x in middle) / len(middle))
        ci = max(1.645 * std / math.sqrt(len(middle)), _MIN_CONFIDENCE_INTERVAL)
        figures = math.floor(math.log10(self._median / ci))
        return min(max(figures, 1), _MAX_SIGNIFICANT_FIGURES)

    @property
    def has_warnings(self):
        """has_warnings -> bool"""
        return bool(self._stats()._warnings)

    def meets_confidence(self, threshold=_IQR_WARN_THRESHOLD):
        """meets_confidence(threshold=0.1) -> bool

        Whether iqr / median is below `threshold`."""
        return self.iqr / self.median < threshold

    @property
    def title(self):
        """title -> str"""
        return self.task_spec.title

    @property
    def env(self):
        """env -> Optional[str]

        The task's env label, None when not given (what torch's Measurement.env gives)."""
        return self.task_spec.env

    @property
    def as_row_name(self):
        """as_row_name -> str"""
        return self.sub_label or self.stmt or "[Unknown]"

    def __repr__(self):
        self._stats()
        n = len(self._sorted)
        unit, scale = select_unit(self._median)
        lines = [object.__repr__(self), self.task_spec.summarize()]
        lines.append(f"  {'Median: ' if n > 1 else ''}{self._median / scale:.2f} {unit}")
        if n >= 4:
            lines.append(
                f"  IQR:    {self.iqr / scale:.2f} {unit} "
                f"({self._p25 / scale:.2f} to {self._p75 / scale:.2f})"
            )
        runs = "per measurement," if n > 1 else ","
        threads = f"{self.num_threads} thread{'s' if self.num_threads > 1 else ''}"
        lines.append(
            f"  {n} measurement{'s' if n > 1 else ''}, {self.number_per_run} runs {runs} {threads}"
        )
        lines.extend(self._warnings)
        return "\n".join(lines).strip()

    @staticmethod
    def merge(measurements):
        """merge(measurements) -> List[Measurement]

        Pools the times of measurements of the same task into one Measurement each (times per
        execution, number_per_run=1; metadata is dropped)."""
        groups = collections.OrderedDict()
        for m in measurements:
            groups.setdefault(m.task_spec, []).extend(m.times)
        return [Measurement(1, times, spec) for spec, times in groups.items()]


def select_unit(t):
    """select_unit(t) -> Tuple[str, float]

    The unit ('ns', 'us', 'ms' or 's') and its scale in seconds that show `t` seconds with a
    few leading digits."""
    exponent = math.floor(math.log10(t) // 3) if t > 0 else -3
    unit = {-3: "ns", -2: "us", -1: "ms"}.get(exponent, "s")
    return unit, {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[unit]


def unit_to_english(u):
    return {"ns": "nanosecond", "us": "microsecond", "ms": "millisecond", "s": "second"}[u]


def trim_sigfig(x, n):
    """trim_sigfig(x, n) -> float

    `x` rounded to `n` significant figures (3.14159, 2 -> 3.1)."""
    if n != int(n):
        raise AssertionError("Number of significant figures must be an integer")
    if x == 0:
        return 0.0
    # torch computes this on float32 tensors: a median like 2.5000000000000004 us is 2.5 there,
    # which rounds half to even (2), and the result is a float32 value.
    magnitude = math.ceil(_f32(math.log10(abs(_f32(x)))))
    scale = 10 ** (magnitude - n)
    return _f32(round(_f32(x / scale)) * scale)


def _f32(v):
    return struct.unpack("f", struct.pack("f", v))[0]


@contextlib.contextmanager
def set_torch_threads(n):
    """set_torch_threads(n)

    Runs the block with ember's intra-op thread count set to `n`, then restores it."""
    prior = _C.get_num_threads()
    try:
        _C.set_num_threads(n)
        yield
    finally:
        _C.set_num_threads(prior)
