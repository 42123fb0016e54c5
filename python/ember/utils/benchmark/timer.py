"""Timer: timeit with warmup, a fixed intra-op thread count and adaptive replicates."""

import enum
import textwrap
import timeit

from . import common

__all__ = ["Timer", "timer", "Language"]

timer = timeit.default_timer


class Language(enum.Enum):
    """Language(value)

    The language of a Timer's statement (ember times Python only)."""

    PYTHON = 0
    CPP = 1


class Timer:
    """Timer(stmt="pass", setup="pass", global_setup="", timer=timer, globals=None, label=None, sub_label=None, description=None, env=None, num_threads=1, language=Language.PYTHON)

    Measures the Python statement `stmt` after `setup`, with `globals` (`torch` is bound to
    ember unless given) and ember's intra-op threads set to `num_threads` while it runs. The
    label fields describe the measurement for printing and `Compare`.
    """  # noqa: E501

    def __init__(
        self,
        stmt="pass",
        setup="pass",
        global_setup="",
        timer=timer,
        globals=None,
        label=None,
        sub_label=None,
        description=None,
        env=None,
        num_threads=1,
        language=Language.PYTHON,
    ):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language not in (Language.PYTHON, "py", "python"):
            if language in (Language.CPP, "cpp", "c++"):
                raise ValueError("ember.utils.benchmark times Python statements only")
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(
                f"global_setup is C++ only, got `{global_setup}`. Most likely this code can "
                "simply be moved to `setup`."
            )
        self._globals = dict(globals or {})
        if "torch" not in self._globals:
            import ember  # the package as users import it; ember.utils is loaded by then

            self._globals["torch"] = ember
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(
            stmt=stmt,
            setup=setup,
            global_setup=global_setup,
            label=label,
            sub_label=sub_label,
            description=description,
            env=env,
            num_threads=num_threads,
        )

    def _timeit(self, number):
        return max(self._timer.timeit(number), 1e-9)

    def _measurement(self, number, times):
        return common.Measurement(number, times, self._task_spec)

    def timeit(self, number=1000000):
        """timeit(number=1000000) -> Measurement

        Runs `stmt` `number` times (after a warmup of number // 100 runs, at least 2) and
        returns one measurement of them."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(max(number // 100, 2))
            return self._measurement(number, [self._timeit(number)])

    def repeat(self, repeat=-1, number=-1):
        """repeat(repeat=-1, number=-1)

        Not provided, as in torch: use blocked_autorange."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        """autorange(callback=None)

        Not provided, as in torch: use blocked_autorange."""
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _loop(self, number, stop, min_run_time, max_run_time=None, callback=None):
        total, times, can_stop = 0.0, [], False
        with common.set_torch_threads(self._task_spec.num_threads):
            while total < min_run_time or not can_stop:
                t = self._timeit(number)
                times.append(t)
                total += t
                if callback:
                    callback(number, t)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
        return times

    def _block_size(self, min_run_time):
        """The smallest power of ten of executions per block whose time makes the timer's own
        overhead negligible (at most 1e-4 of it) and is at least min_run_time / 1000."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overheads = sorted(self._timeit(0) for _ in range(5))
            overhead = overheads[2]
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2147483647:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """blocked_autorange(callback=None, min_run_time=0.2) -> Measurement

        Picks a block size that amortises the timer's overhead, then times blocks until
        `min_run_time` seconds have been spent; `callback(number, seconds)` sees each block."""
        number = self._block_size(min_run_time)
        times = self._loop(number, lambda times: True, min_run_time, callback=callback)
        return self._measurement(number, times)

    def adaptive_autorange(
        self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None
    ):
        """adaptive_autorange(threshold=0.1, *, min_run_time=0.01, max_run_time=10.0, callback=None) -> Measurement

        Times blocks until more than three exist, `min_run_time` has passed and iqr / median is
        below `threshold`, or until `max_run_time` seconds have been spent."""  # noqa: E501
        number = self._block_size(min_run_time=0.05)

        def stop(times):
            return len(times) > 3 and self._measurement(number, times).meets_confidence(threshold)

        times = self._loop(number, stop, min_run_time, max_run_time, callback=callback)
        return self._measurement(number, times)


def _clean(src):
    src = textwrap.dedent(src)
    return (src[1:] if src and src[0] == "\n" else src).rstrip()
