"""Issue 4's benchmark: every workload under ember and under torch, in one run, side by side.

Usage: .venv/bin/python benchmarks/suite.py [--rounds N] [--threads T] [--only REGEX] [--quick]
                                            [--json PATH]

Prints one markdown table: workload, torch's and ember's median time, the ratio ember/torch (lower
is better), ember's achieved GFLOP/s or GB/s and each side's fraction of the machine's own limits
(FMA peak and STREAM triad bandwidth of the threads in use, measured in the same run by
`_limits.py`), then the geometric mean of the ratios, overall and per group, and the workloads
where ember is slower. Workloads live in `_workloads.py`, whole-process costs in `_process.py`.

How it measures, and why:
- Each round runs the workloads in child processes (this script with --worker), a few workloads
  per child, ember's child and torch's alternately, the order swapped from chunk to chunk: load
  from other jobs on a shared machine hits both sides, and neither side inherits the other's
  allocator, thread pool or page cache state.
- Both sides get the same threads: set_num_threads(T) and OMP/MKL/OpenBLAS_NUM_THREADS=T.
- In a child each workload is warmed up, then sampled for a fixed time budget; the child reports
  the median per call and the table the median over rounds.
- The limits are measured before the first round and after each one, and the best is kept.
- A workload that raises prints "ember error: ..." (or torch's) in its row; the run goes on.
"""

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
from importlib.util import find_spec

import _limits
import _process
from _compare import framework, median_time
from _workloads import GROUPS, LOADER_ROWS, SIDE, WORKLOADS, by_name

# Workloads per child process: finer alternation vs. one torch import (about 1 s) per child.
CHUNK = {False: 6, True: 100}
BUDGET = {False: 0.5, True: 0.05}  # seconds of samples per workload and round, by --quick
CHILD_TIMEOUT = 120  # seconds per workload before its child is killed
FASHION_STEPS = {False: 50, True: 5}
PROCESS_ROUNDS = {False: 3, True: 1}  # at most: a Fashion-MNIST job takes 10-30 s per side
PROCESS_ROWS = {  # probe -> its rows (name, unit)
    "import": [("import (fresh interpreter)", "s")],
    "fashion": [("Fashion-MNIST job wall time", "s"), ("Fashion-MNIST job peak RSS", "B")],
    "size": [("installed size: package dir", "B"), ("installed size: with dependencies", "B")],
}


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, help="rounds per side (default 5, quick 2)")
    p.add_argument(
        "--threads",
        type=int,
        default=len(os.sched_getaffinity(0)),
        help="intra-op threads on both sides (default: the CPUs this process may use)",
    )
    p.add_argument("--only", default="", help="run only the workloads whose name matches REGEX")
    p.add_argument(
        "--quick",
        action="store_true",
        help="short profile (fewer rounds, smaller tensors), about a minute",
    )
    p.add_argument("--json", help="also write every round's numbers to this file")
    p.add_argument("--worker", choices=("ember", "torch"), help=argparse.SUPPRESS)
    p.add_argument("names", nargs="*", help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.rounds is None:
        args.rounds = 2 if args.quick else 5
    return args


def worker(args):
    """Child mode: times the named workloads under one framework, one JSON line each."""
    lib = framework(args.worker, args.threads)
    for name in args.names:
        result = {"name": name}
        try:
            run, work = by_name(name).make(lib, args.quick)
            result.update(seconds=median_time(run, BUDGET[args.quick]), work=work)
        except Exception as e:  # reported in the table; the other workloads still run
            result["error"] = f"{type(e).__name__}: {e}"
        print("RESULT " + json.dumps(result), flush=True)
        run = None  # frees this workload's tensors before the next one's


def thread_env(threads):
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        env[var] = str(threads)
    return env


def run_children(side, names, args, env):
    """{name: result} from worker children; a child that crashes or hangs costs only the
    workload it was in, and a fresh child takes the rest."""
    results, pending = {}, list(names)
    while pending:
        cmd = [
            sys.executable,
            os.path.abspath(__file__),
            "--worker",
            side,
            "--threads",
            str(args.threads),
            *(["--quick"] if args.quick else []),
            *pending,
        ]
        try:
            child = subprocess.run(
                cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT * len(pending)
            )
            out, err, why = child.stdout, child.stderr, f"worker died (exit {child.returncode})"
        except subprocess.TimeoutExpired as e:
            out, err = _text(e.stdout), _text(e.stderr)
            why = f"worker timed out ({CHILD_TIMEOUT} s per workload)"
        for line in out.splitlines():
            if line.startswith("RESULT "):
                result = json.loads(line[len("RESULT ") :])
                results[result["name"]] = result
        pending = [n for n in pending if n not in results]
        if pending:
            last = err.strip().splitlines()[-1:] or [""]
            results[pending.pop(0)] = {"error": f"{why} {last[0]}".strip()}
    return results


def _text(data):
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


class Rows:
    """Every row's per-round values and first error, per side, in table order."""

    def __init__(self):
        self.rows = {}

    def add(self, group, name, unit, side, value=None, error=None, work=None):
        row = self.rows.setdefault(
            name, {"group": group, "unit": unit, "work": work, "values": {}, "errors": {}}
        )
        if error is not None:
            row["errors"].setdefault(side, error)
        else:
            row["values"].setdefault(side, []).append(value)
            row["work"] = work or row["work"]


def measure_rounds(args, sides, rows, limits):
    """Runs every round; after each, measures the machine's limits again into `limits`."""
    env = thread_env(args.threads)
    selected = [w for w in WORKLOADS if re.search(args.only, w.name)]
    chunks = []
    for group in GROUPS:
        names = [w.name for w in selected if w.group == group]
        n = max(1, -(-len(names) // CHUNK[args.quick]))  # children per group, near-equal sizes
        cuts = [len(names) * k // n for k in range(n + 1)]
        chunks += [(group, names[a:b]) for a, b in zip(cuts, cuts[1:]) if b > a]
    probes = [
        p for p, names in PROCESS_ROWS.items() if any(re.search(args.only, n) for n, _ in names)
    ]
    for r in range(args.rounds):
        for i, (group, names) in enumerate(chunks):
            order = sides if (r + i) % 2 == 0 else sides[::-1]
            _progress(
                f"round {r + 1}/{args.rounds}: {group} {names[0]!r}.. "
                f"({len(names)}) under {' then '.join(order)}"
            )
            for side in order:
                for name, res in run_children(side, names, args, env).items():
                    rows.add(
                        group,
                        name,
                        "s",
                        side,
                        res.get("seconds"),
                        res.get("error"),
                        res.get("work"),
                    )
        for j, probe in enumerate(p for p in probes if p != "size"):
            if r >= PROCESS_ROUNDS[args.quick]:
                break
            order = sides if (r + j) % 2 == 0 else sides[::-1]
            _progress(f"round {r + 1}/{args.rounds}: process {probe} under {' then '.join(order)}")
            for side in order:
                measure_process(probe, side, args, env, rows)
        _progress(f"round {r + 1}/{args.rounds}: the machine's limits")
        keep_best(limits, _limits.measure(args.threads, args.quick))
    if "size" in probes:
        for side in sides:
            measure_process("size", side, args, env, rows)


def keep_best(limits, again):
    """A limit is what the machine can do: other jobs only ever lower a measurement of it."""
    for key in ("fma_gflops", "fma_core_gflops", "triad_gbs"):
        if again[key] and (limits[key] is None or again[key] > limits[key]):
            limits[key] = again[key]


def measure_process(probe, side, args, env, rows):
    rows_of_probe, error = PROCESS_ROWS[probe], None
    try:
        if probe == "import":
            values = [_process.import_seconds(side, env)]
        elif probe == "fashion":
            values = _process.fashion_job(side, args.threads, FASHION_STEPS[args.quick], env)
        else:
            values = _process.installed_bytes(side)
    except Exception as e:  # e.g. the example fails under one side: its rows say why
        values, error = [None] * len(rows_of_probe), f"{type(e).__name__}: {e}"
    for (name, unit), value in zip(rows_of_probe, values):
        if not re.search(args.only, name):
            continue
        if value is None:
            rows.add("process", name, unit, side, error=error or "no package metadata")
        else:
            rows.add("process", name, unit, side, value)


def _progress(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# --- the report ---------------------------------------------------------------------------------


def summarize(rows, limits):
    """Per row: medians, ratio, ember's rate and both sides' fraction of the machine's limit."""
    peak = {"flop": limits.get("fma_gflops"), "byte": limits.get("triad_gbs")}
    out = []
    for name, row in rows.rows.items():
        med = {side: statistics.median(v) for side, v in row["values"].items()}
        ratio = med["ember"] / med["torch"] if {"ember", "torch"} <= med.keys() else None
        kind, amount = row["work"] or (None, None)
        rate = {side: amount / t * 1e-9 for side, t in med.items()} if amount else {}
        fraction = {side: r / peak[kind] for side, r in rate.items() if peak.get(kind)}
        out.append(
            {
                "name": name,
                "group": row["group"],
                "unit": row["unit"],
                "median": med,
                "ratio": ratio,
                "kind": kind,
                "rate": rate,
                "fraction": fraction,
                "errors": row["errors"],
                "values": row["values"],
            }
        )
    return out


def geomeans(summary):
    """{group or "overall": (geometric mean of ember/torch, rows)} over rows that are times."""
    ratios = {}
    for s in summary:
        if s["ratio"] and s["unit"] == "s":
            ratios.setdefault(s["group"], []).append(s["ratio"])
            ratios.setdefault("overall", []).append(s["ratio"])
    return {g: (statistics.geometric_mean(r), len(r)) for g, r in ratios.items()}


def fmt_value(value, unit):
    if unit == "B":
        return f"{value / 1e6:.1f} MB"
    for scale, suffix in ((1e-6, "µs"), (1e-3, "ms")):
        if value < 1000 * scale:
            return f"{value / scale:.2f} {suffix}"
    return f"{value:.2f} s"


def fmt_rate(rate, kind):
    if kind == "sample":
        return f"{rate * 1e6:.0f} k samples/s"
    return f"{rate:.1f} {'GFLOP/s' if kind == 'flop' else 'GB/s'}"


def print_report(args, limits, summary, sides, load):
    import numpy

    fma = (
        f"{limits['fma_gflops']:.0f} GFLOP/s float32 ({limits['isa']}; one thread "
        f"{limits['fma_core_gflops']:.0f})"
        if limits["fma_gflops"]
        else "unknown"
    )
    print(
        f"ember benchmark suite: {'quick' if args.quick else 'default'} profile, "
        f"threads={args.threads} on both sides, rounds={args.rounds}, medians; "
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}"
    )
    print(
        f"machine: {_cpu_name()}; python {platform.python_version()}, numpy {numpy.__version__}"
        f", {', '.join(f'{s} {_version(s)}' for s in sides)}"
    )
    cpus = len(os.sched_getaffinity(0))
    # The run itself adds about `threads` to the load; more means other jobs took turns on the
    # cores, and a threaded kernel then waits for its descheduled threads.
    print(
        f"load average (1 min): {load[0]:.1f} at start, {load[1]:.1f} at end, {cpus} usable CPUs"
        + (
            "; other jobs competed for the cores: threaded timings are noisy"
            if max(load) > cpus
            else ""
        )
    )
    print(
        f"limits of {args.threads} threads: FMA peak {fma}; STREAM triad "
        f"{limits['triad_gbs']:.1f} GB/s ({limits['triad_mib']:.0f} MiB arrays)"
        + "".join(f"; {note}" for note in limits["notes"])
    )
    side = SIDE[args.quick]
    print(
        f"memory rows: {side}x{side} float32, bytes = one read of each "
        f"input and one write of the output; DataLoader: {LOADER_ROWS[args.quick]} rows; "
        "training GFLOP/s count the forward's matmul/conv FLOPs 3 times"
    )
    print()
    print(
        "| group | workload | torch | ember | ember/torch | ember rate | ember % peak "
        "| torch % peak |"
    )
    print("|---|---|--:|--:|--:|--:|--:|--:|")
    for s in summary:
        cells = []
        for side in ("torch", "ember"):
            if side in s["errors"]:
                cells.append(f"{side} error: {s['errors'][side]}".replace("|", "/"))
            elif side in s["median"]:
                cells.append(fmt_value(s["median"][side], s["unit"]))
            else:
                cells.append("n/a")
        ratio = f"{s['ratio']:.2f}" if s["ratio"] else ""
        rate = fmt_rate(s["rate"]["ember"], s["kind"]) if "ember" in s["rate"] else ""
        frac = [
            f"{s['fraction'][side]:.0%}" if side in s["fraction"] else ""
            for side in ("ember", "torch")
        ]
        print(
            f"| {s['group']} | {s['name']} | {' | '.join(cells)} | {ratio} | {rate} | "
            f"{' | '.join(frac)} |"
        )
    print()
    print("| geometric mean of ember/torch (time rows) | ratio | rows |")
    print("|---|--:|--:|")
    for group, (mean, n) in sorted(geomeans(summary).items(), key=lambda g: g[0] != "overall"):
        print(f"| {group} | {mean:.2f} | {n} |")
    slower = sorted(
        (s for s in summary if s["ratio"] and s["ratio"] > 1), key=lambda s: -s["ratio"]
    )
    print()
    print(
        f"ember slower than torch ({len(slower)}): "
        + ("; ".join(f"{s['name']} {s['ratio']:.2f}" for s in slower) or "none")
    )
    errors = [f"{s['name']} ({side}: {e})" for s in summary for side, e in s["errors"].items()]
    if errors:
        print(f"errors ({len(errors)}): " + "; ".join(errors))


def _cpu_name():
    try:
        with open("/proc/cpuinfo") as f:
            model = next(l.split(":", 1)[1].strip() for l in f if l.startswith("model name"))
    except (OSError, StopIteration):
        model = platform.processor() or "unknown CPU"
    return f"{model}, {os.cpu_count()} CPUs visible"


def _version(name):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(name)
    except PackageNotFoundError:
        return "(no metadata)"


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    sides = ["ember", "torch"] if find_spec("torch") else ["ember"]
    if len(sides) == 1:
        _progress("torch is not installed: measuring ember only")
    _progress(f"measuring the machine's limits on {args.threads} threads")
    load = [os.getloadavg()[0]]
    limits = _limits.measure(args.threads, args.quick)
    rows = Rows()
    measure_rounds(args, sides, rows, limits)
    load.append(os.getloadavg()[0])
    summary = summarize(rows, limits)
    print_report(args, limits, summary, sides, load)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                {
                    "args": vars(args),
                    "limits": limits,
                    "load": load,
                    "rows": summary,
                    "geomeans": geomeans(summary),
                },
                f,
                indent=1,
            )


if __name__ == "__main__":
    main()
