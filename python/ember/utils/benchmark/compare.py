"""Compare: measurements as tables, one per label, a row per (threads, env, sub_label) and a
column per description, laid out as torch.utils.benchmark.Compare's."""

import enum
import math

from . import common

__all__ = ["Colorize", "Compare"]

BEST = "\033[92m"
GOOD = "\033[34m"
BAD = "\033[2m\033[91m"
VERY_BAD = "\033[31m"
BOLD = "\033[1m"
TERMINATE = "\033[0m"


class Colorize(enum.Enum):
    """Colorize(value)

    How Compare colours cells: not at all, against the best of the column, or of the row."""

    NONE = "none"
    COLUMNWISE = "columnwise"
    ROWWISE = "rowwise"


def _digits(x):
    return math.ceil(math.log10(x)) if x > 0 else 1


def _colour(cell, value, best):
    if value <= best * 1.01 or value <= best + 100e-9:
        return BEST + BOLD + cell + TERMINATE * 2
    if value <= best * 1.1:
        return GOOD + BOLD + cell + TERMINATE * 2
    if value >= best * 5:
        return VERY_BAD + BOLD + cell + TERMINATE * 2
    if value >= best * 2:
        return BAD + cell + TERMINATE * 2
    return cell


class _Table:
    def __init__(self, results, colorize, trim, highlight):
        self.results, self.colorize, self.trim = results, colorize, trim
        self.label = results[0].label
        self.unit, self.scale = common.select_unit(min(r.median for r in results))
        row_keys = list(dict.fromkeys((r.num_threads, r.env, r.as_row_name) for r in results))
        row_keys.sort(key=lambda k: k[:2])  # stable: statements keep their order
        self.row_keys = row_keys
        self.col_keys = list(dict.fromkeys(r.description for r in results))
        cell = {((r.num_threads, r.env, r.as_row_name), r.description): r for r in results}
        self.grid = [[cell.get((rk, ck)) for ck in self.col_keys] for rk in row_keys]
        self.highlight = [
            highlight and any(r is not None and r.has_warnings for r in col)
            for col in zip(*self.grid)
        ]
        self.templates = [self._template(i) for i in range(len(self.col_keys))]

    def _template(self, i):
        col = [row[i] for row in self.grid if row[i] is not None]
        lead = [_digits(m.median / self.scale) for m in col]
        whole = max(lead)
        if self.trim:
            decimals = min(max(m.significant_figures - d, 0) for d, m in zip(lead, col))
        else:
            decimals = 1
        width = whole + decimals + (1 if decimals else 0)
        return width, decimals

    def _num(self, i, m):
        width, decimals = self.templates[i]
        extra = 7 if self.highlight[i] else 0
        if m is None:  # as wide as the value 1 would be
            return " " * (len(f"{1.0:>{width}.{decimals}f}") + extra)
        value = m.median / self.scale
        if self.trim:
            value = common.trim_sigfig(value, m.significant_figures)
        text = f"{value:>{width}.{decimals}f}"
        spread = f" (! {m.iqr / m.median * 100:.0f}%)" if m.has_warnings else ""
        return text + (f"{spread:>{extra}}" if extra else "")

    def render(self):
        envs = {r.env for r in self.results}
        show_env = len(envs) > 1
        env_len = max(len(e) for e in envs) if show_env else 0
        rows = [[""] + [str(c) if c is not None else "None" for c in self.col_keys]]
        prior_threads, prior_env, separators, groups, group = -1, "", [], [], -1
        for (threads, env, name), cells in zip(self.row_keys, self.grid):
            new_group = threads != prior_threads
            if new_group:
                prior_threads, prior_env, group = threads, "", group + 1
            env_text = f"({env})" if show_env and env != prior_env else ""
            prior_env = env
            rows.append(
                ["  " + env_text.ljust(env_len + 4) + name]
                + [self._num(i, m) for i, m in enumerate(cells)]
            )
            separators.append(threads if new_group else None)
            groups.append(group)
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        header = "  |  ".join(c.center(w) for c, w in zip(rows[0], widths))
        out = [header]
        for r, (cells, sep, g) in enumerate(zip(self.grid, separators, groups)):
            if sep is not None:
                out.append(f"{sep} threads: ".ljust(len(header), "-"))
            best = self._best(cells, g)
            parts = [rows[r + 1][0].ljust(widths[0])]
            for i, (text, m) in enumerate(zip(rows[r + 1][1:], cells)):
                text = text.center(widths[i + 1])
                if self.colorize != Colorize.NONE and m is not None and best[i] is not None:
                    text = _colour(text, m.median, best[i])
                parts.append(text)
            out.append("  |  ".join(parts))
        title = f" {self.label or ''} ".center(len(header) - 2, "-")
        lines = [f"[{title}]", *out, ""]
        lines.append(f"Times are in {common.unit_to_english(self.unit)}s ({self.unit}).")
        text = "\n".join(lines) + "\n"
        if any(self.highlight) and any(r.has_warnings for r in self.results):
            text += "(! XX%) Measurement has high variance, where XX is the IQR / median * 100.\n"
        return text

    def _best(self, cells, group):
        if self.colorize == Colorize.ROWWISE:
            row_min = min(m.median for m in cells if m is not None)
            return [row_min] * len(cells)
        if self.colorize == Colorize.COLUMNWISE:
            out = []
            for i in range(len(cells)):
                col = [
                    row[i].median
                    for row, k in zip(self.grid, self.row_keys)
                    if row[i] is not None and self._group_of(k) == group
                ]
                out.append(min(col) if col else None)
            return out
        return [None] * len(cells)

    def _group_of(self, key):
        threads = [k[0] for k in self.row_keys]
        return len(dict.fromkeys(threads[: threads.index(key[0]) + 1])) - 1


class Compare:
    """Compare(results)

    Tables of measurements: one per label, a row per sub-label (grouped by thread count, and by
    env when several appear), a column per description, in the unit of the fastest one."""

    def __init__(self, results):
        self._results = []
        self.extend_results(results)
        self._trim_significant_figures = False
        self._colorize = Colorize.NONE
        self._highlight_warnings = False

    def __str__(self):
        return "\n".join(self._render())

    def extend_results(self, results):
        """extend_results(results) -> None

        Adds measurements (each must be a Measurement)."""
        for r in results:
            if not isinstance(r, common.Measurement):
                raise ValueError(f"Expected an instance of `Measurement`, got {type(r)} instead.")
        self._results.extend(results)

    def trim_significant_figures(self):
        """trim_significant_figures() -> None

        Shows only the figures each measurement's spread supports."""
        self._trim_significant_figures = True

    def colorize(self, rowwise=False):
        """colorize(rowwise=False) -> None

        Colours cells against the best of their column (or row)."""
        self._colorize = Colorize.ROWWISE if rowwise else Colorize.COLUMNWISE

    def highlight_warnings(self):
        """highlight_warnings() -> None

        Marks cells whose spread is high with (! XX%)."""
        self._highlight_warnings = True

    def print(self):
        """print() -> None

        Prints the tables."""
        print(str(self))

    def _render(self):
        merged = common.Measurement.merge(self._results)
        by_label = {}
        for m in merged:
            by_label.setdefault(m.label, []).append(m)
        return [
            _Table(
                group, self._colorize, self._trim_significant_figures, self._highlight_warnings
            ).render()
            for group in by_label.values()
        ]
