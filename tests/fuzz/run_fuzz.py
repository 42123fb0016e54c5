"""ember's fuzzer: random calls to ember and torch (or numpy), every outcome classified.

    .venv/bin/python tests/fuzz/run_fuzz.py --calls 100000          # the long profile
    .venv/bin/python tests/fuzz/run_fuzz.py --profile ci --calls 2000
    .venv/bin/python tests/fuzz/run_fuzz.py --calls 20000 --seed 0 --families edge

--families picks the case families: classic (op_db samples, views, indexing, nn), edge
(edge_cases.py: keywords, special values, wrong types, in-place, reductions, matmul, autograd,
conversions), all (the default on the command line: classic and edge), wide (wide_cases.py:
reductions over dim tuples, indexing writes, more losses, linalg, fft, sparse), deep
(deep_cases.py: nn.Module forwards, gradients of op_db ops, out= and in-place variants, type
promotion over every dtype pair) or full (all, wide and deep). The run ends with a table of
calls per family in the issue's classes (pass / crash / hang / value / raise / exc_class) and
the share that agrees with torch. A seed gives the same calls every run.

Cases run in child processes (workers): each logs a case before running it, so when a worker
dies (a crash) or stops logging (a hang) the parent records that case as a finding and starts a
new worker with the next seed. The ci profile is derandomized (hypothesis derandomize=True):
the same calls every run. Findings listed in known.py are reported but not counted as new.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "python"))

MEMORY_LIMIT = 6 << 30  # address space per worker: a "huge" allocation fails instead of paging
CHUNK = 5000  # calls per worker (each start costs ~2 s of imports)


# ----------------------------------------------------------------------------- worker


def strategies(families: str):
    """(name, strategy) pairs drawn from for `families`: 'classic' (op_db samples, views,
    indexing, creation, nn), 'edge' (edge_cases.py: keywords, special values, wrong types,
    in-place, reductions, matmul, autograd, conversions), 'all' (both, half each), 'wide'
    (wide_cases.py: dim tuples, indexing writes, losses, linalg, fft, sparse), 'deep'
    (deep_cases.py: modules, gradients, out=/in-place variants, promotion) or 'full' (all, with
    a quarter of the draws from each of wide and deep)."""
    from deep_cases import DEEP_STRATEGIES
    from edge_cases import EDGE_STRATEGIES
    from nn_cases import NN_STRATEGIES
    from strategies import (
        creation_cases,
        gather_scatter_cases,
        index_cases,
        op_db_cases,
        view_cases,
    )
    from wide_cases import WIDE_STRATEGIES

    # op_db samples are half the classic cases: they cover most ops
    classic = [("op_db", op_db_cases())] * 3 + [
        ("views", view_cases()),
        ("indexing", index_cases()),
        ("gather_scatter", gather_scatter_cases()),
        ("creation", creation_cases()),
    ]
    classic += [("nn." + s.wrapped_strategy.definition.__name__[:-6], s) for s in NN_STRATEGIES]
    edge = [(s.wrapped_strategy.definition.__name__[:-6], s) for s in EDGE_STRATEGIES]
    wide = [(s.wrapped_strategy.definition.__name__[:-6], s) for s in WIDE_STRATEGIES]
    deep = [(s.wrapped_strategy.definition.__name__[:-6], s) for s in DEEP_STRATEGIES]
    if families == "wide":
        return wide
    if families == "deep":
        return deep
    if families in ("all", "full"):  # as many edge draws as classic ones
        edge = edge * max(1, round(len(classic) / len(edge)))
    if families == "full":  # and a quarter of the draws from each of wide and deep
        base = classic + edge
        wide = wide * max(1, round(len(base) / (3 * len(wide))))
        return base + wide + deep * max(1, round(len(base) / (3 * len(deep))))
    return {"classic": classic, "edge": edge, "all": classic + edge}[families]


def worker(seed: int, calls: int, log_path: str, derandomize: bool, families: str = "classic"):
    import resource

    # A sanitizer runtime reserves terabytes of address space for its shadow memory, so there
    # the cap comes from its own max_allocation_size_mb (scripts/sanitize.sh) instead.
    if "libasan" not in os.environ.get("LD_PRELOAD", ""):
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    import dataclasses

    import harness
    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hyp_seed
    from hypothesis import strategies as st

    harness.ember.set_num_threads(1)  # two cores are shared: one thread per library is plenty
    if harness.torch is not None:
        harness.torch.set_num_threads(1)

    def tagged(name, strategy):
        return strategy.map(lambda case: dataclasses.replace(case, family=name))

    any_case = st.one_of(*(tagged(n, s) for n, s in strategies(families)))
    log = open(log_path, "a", buffering=1)  # noqa: SIM115 -- open for the worker's lifetime

    @settings(
        max_examples=calls,
        derandomize=derandomize,
        database=None,
        deadline=None,
        phases=(Phase.generate,),
        suppress_health_check=list(HealthCheck),
    )
    @given(any_case)
    def fuzz(case):
        log.write(json.dumps({"case": repr(case), "fn": case.fn, "family": case.family}) + "\n")
        out = harness.run_case(case, lambda: log.write('{"ember_done": true}\n'))
        log.write(json.dumps({"kind": out.kind, "detail": out.detail[:400]}) + "\n")

    if not derandomize:
        fuzz = hyp_seed(seed)(fuzz)
    fuzz()
    log.write(json.dumps({"done": True}) + "\n")


# ----------------------------------------------------------------------------- parent


# the classes: every outcome of a call is exactly one of them
CLASSES = {
    "pass": ("matched", "raised_as_torch", "unnamed_message", "checked"),
    "crash": ("crash",),
    "hang": ("hang",),
    "value": ("wrong_values", "wrong_dtype", "wrong_shape"),
    "raise": ("ember_raises", "torch_raises"),
    "exc_class": ("exc_class", "bad_exception"),
    "reference": ("torch_crash", "torch_hang"),  # torch itself died: not ember's
}
CLASS_OF = {kind: cls for cls, kinds in CLASSES.items() for kind in kinds}


class Tally:
    def __init__(self):
        self.kinds = Counter()
        self.by_family = defaultdict(Counter)  # family -> Counter of CLASSES keys
        self.examples = defaultdict(list)  # (kind, fn) -> [(case, detail)]
        self.counts = Counter()  # (kind, fn) -> calls

    def add(self, kind, fn, case, detail, family=""):
        self.kinds[kind] += 1
        self.counts[(kind, fn)] += 1
        self.by_family[family or "?"][CLASS_OF.get(kind, kind)] += 1
        ex = self.examples[(kind, fn)]
        if len(ex) < 3:
            ex.append((case, detail))

    @property
    def calls(self):
        return sum(self.kinds.values())

    def findings(self):
        from harness import CATEGORIES

        return {k: v for k, v in self.examples.items() if k[0] in CATEGORIES}


def _run_worker(tally, seed, calls, derandomize, hang_s, log_path, families="classic"):
    """One worker's run; returns the number of calls it made (a crash or hang ends it early)."""
    open(log_path, "w").close()
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--worker",
        "--seed",
        str(seed),
        "--calls",
        str(calls),
        "--log",
        log_path,
        "--families",
        families,
    ] + (["--ci"] if derandomize else [])
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    pos, pending, last_progress, made, done = 0, None, time.monotonic(), 0, False
    torch_running = False
    while True:
        time.sleep(0.2)
        with open(log_path) as f:
            f.seek(pos)
            chunk = f.read()
        lines = chunk.split("\n")
        pos += len(chunk) - len(lines[-1])  # keep a partly written last line for the next read
        for line in lines[:-1]:
            rec = json.loads(line)
            last_progress = time.monotonic()
            if "case" in rec:
                pending, torch_running = rec, False
            elif "ember_done" in rec:
                torch_running = True
            elif "kind" in rec:
                tally.add(
                    rec["kind"], pending["fn"], pending["case"], rec["detail"], pending["family"]
                )
                pending, made = None, made + 1
            else:
                done = True
        if proc.poll() is not None:
            break
        if pending is not None and time.monotonic() - last_progress > hang_s:
            proc.kill()
            proc.wait()
            # torch itself loops over some huge kernels (max_pool with kernel_size 2**40)
            kind = "torch_hang" if torch_running else "hang"
            tally.add(
                kind,
                pending["fn"],
                pending["case"],
                f"no result after {hang_s} s",
                pending["family"],
            )
            return made + 1
    err = proc.stderr.read()
    if pending is not None:  # died inside a call
        sig = -proc.returncode if proc.returncode < 0 else None
        what = f"signal {signal.Signals(sig).name}" if sig else f"exit {proc.returncode}"
        kind = "torch_crash" if torch_running else "crash"
        tally.add(kind, pending["fn"], pending["case"], f"{what}: {err[-300:]}", pending["family"])
        return made + 1
    if not done:
        raise RuntimeError(
            f"fuzz worker failed outside a case (exit {proc.returncode}):\n{err[-3000:]}"
        )
    return made


def run(calls, *, profile="long", seed=0, hang_s=60.0, out=None, families="classic"):
    """Runs `calls` fuzz calls in workers and returns the Tally (families: see strategies())."""
    tally = Tally()
    log_path = os.path.join(tempfile.mkdtemp(prefix="ember_fuzz_"), "worker.log")
    chunk = calls if profile == "ci" else CHUNK
    start = time.monotonic()
    while tally.calls < calls:
        made = _run_worker(
            tally,
            seed,
            min(chunk, calls - tally.calls),
            profile == "ci",
            hang_s,
            log_path,
            families,
        )
        seed += 1
        print(f"{tally.calls} calls, {time.monotonic() - start:.0f} s", file=sys.stderr, flush=True)
        if profile == "ci" and tally.calls < calls:
            break  # a derandomized run can't skip the case that stopped it: report what we have
        if made == 0:
            break  # hypothesis gave no examples: nothing more to draw
    if out:
        with open(out, "w") as f:
            for (kind, fn), ex in sorted(tally.findings().items()):
                n = tally.counts[(kind, fn)]
                f.writelines(
                    json.dumps({"kind": kind, "fn": fn, "calls": n, "case": case, "detail": detail})
                    + "\n"
                    for case, detail in ex
                )
    return tally


def table(tally) -> str:
    """The issue's table: calls per family and class, and the share agreeing with torch."""
    cols = [
        c
        for c in CLASSES
        if c != "reference" or tally.kinds["torch_crash"] + tally.kinds["torch_hang"]
    ]
    rows = sorted(tally.by_family.items())
    total = Counter()
    for _, c in rows:
        total.update(c)
    rows.append(("TOTAL", total))
    width = max(len(name) for name, _ in rows)
    head = f"{'family':<{width}} {'calls':>7} " + " ".join(f"{c:>9}" for c in cols) + "   agree"
    lines = [head, "-" * len(head)]
    for name, c in rows:
        n = sum(c.values())
        cells = " ".join(f"{c[k]:>9}" for k in cols)
        lines.append(f"{name:<{width}} {n:>7} {cells} {100 * c['pass'] / max(n, 1):6.2f}%")
    return "\n".join(lines)


def summary(tally) -> str:
    from harness import CATEGORIES
    from known import is_known

    lines = [f"calls: {tally.calls}"]
    for k in ("matched", "raised_as_torch", "checked"):
        lines.append(f"  {k}: {tally.kinds[k]}")
    lines.append("findings by category (calls; distinct functions, of which known):")
    for cat in CATEGORIES:
        fns = sorted(fn for (k, fn) in tally.findings() if k == cat)
        if tally.kinds[cat]:
            n_known = sum(is_known(cat, fn) for fn in fns)
            lines.append(f"  {cat}: {tally.kinds[cat]}; {len(fns)} functions, {n_known} known")
    new = [(k, fn) for (k, fn) in tally.findings() if not is_known(k, fn)]
    lines.append(f"new findings: {len(new)}")
    for k, fn in sorted(new):
        case, detail = tally.examples[(k, fn)][0]
        lines.append(f"  [{k}] {fn}: {case[:300]}\n      -> {detail[:300]}")
    return "\n".join(lines)


def main(argv=None):
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--calls", type=int, default=100_000)
    p.add_argument("--profile", choices=("long", "ci"), default="long")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--hang-seconds", type=float, default=60.0)
    p.add_argument("--out", help="write every finding's examples here (JSON lines)")
    p.add_argument(
        "--families",
        choices=("all", "classic", "edge", "wide", "deep", "full"),
        default="all",
        help="classic: op_db samples, views, indexing, nn; edge: edge_cases.py; all: both; "
        "wide: wide_cases.py (dim tuples, indexing writes, losses, linalg, fft, sparse); "
        "deep: deep_cases.py (modules, gradients, out=/in-place, promotion); full: all, wide "
        "and deep",
    )
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--ci", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--log", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.worker:
        return worker(a.seed, a.calls, a.log, a.ci, a.families)
    start = time.monotonic()
    tally = run(
        a.calls,
        profile=a.profile,
        seed=a.seed,
        hang_s=a.hang_seconds,
        out=a.out,
        families=a.families,
    )
    print(summary(tally))
    print(table(tally))
    print(f"time: {time.monotonic() - start:.0f} s")
    from known import is_known

    return int(any(k in ("crash", "hang") or not is_known(k, fn) for (k, fn) in tally.findings()))


if __name__ == "__main__":
    sys.exit(main())
