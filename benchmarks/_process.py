"""Whole-process costs: import time, installed size, and the Fashion-MNIST job's time and memory.

Each measurement runs in a fresh child process (a fresh interpreter for the import), so nothing
the parent loaded is shared. Peak RSS comes from os.wait4, the kernel's accounting of that one
child, not from sampling.
"""

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
import time

EXAMPLE = os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "examples", "fashion_mnist.py"
)


def import_seconds(name, env):
    """Wall time of `import name` in a fresh interpreter (interpreter start-up excluded)."""
    code = f"import time; t = time.perf_counter(); import {name}; print(time.perf_counter() - t)"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(_last_line(out.stderr))
    return float(out.stdout.split()[-1])


def fashion_job(name, threads, steps, env):
    """(wall seconds, peak RSS bytes) of examples/fashion_mnist.py: one epoch cut at `steps`
    batches, then its evaluation on the 10k test images."""
    with tempfile.TemporaryDirectory() as out_dir:
        args = [
            sys.executable,
            EXAMPLE,
            "--backend",
            name,
            "--threads",
            str(threads),
            "--epochs",
            "1",
            "--max-steps",
            str(steps),
            "--no-plot",
            "--out-dir",
            out_dir,
        ]
        with tempfile.TemporaryFile("w+") as log:
            t0 = time.perf_counter()
            child = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
            _, status, usage = os.wait4(child.pid, 0)
            seconds = time.perf_counter() - t0
            child.returncode = os.waitstatus_to_exitcode(status)
            if child.returncode:
                log.seek(0)
                raise RuntimeError(f"exit {child.returncode}: {_last_line(log.read())}")
    return seconds, usage.ru_maxrss * 1024  # Linux reports kilobytes


def installed_bytes(name):
    """(bytes of the installed package directory, bytes of its distribution and every
    distribution it requires, transitively); the second is None if it has no metadata."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise RuntimeError(f"{name} is not installed as a package")
    package = sum(
        os.path.getsize(os.path.join(root, f))
        for root, _, files in os.walk(spec.submodule_search_locations[0])
        for f in files
    )
    try:
        return package, _distribution_bytes(name)
    except importlib.metadata.PackageNotFoundError:
        return package, None


def _distribution_bytes(name):
    seen, todo, paths = set(), [name], set()
    while todo:
        dist_name = _normalize(todo.pop())
        if dist_name in seen:
            continue
        seen.add(dist_name)
        try:
            dist = importlib.metadata.distribution(dist_name)
        except importlib.metadata.PackageNotFoundError:
            if dist_name == _normalize(name):
                raise
            continue  # an optional dependency that is not installed
        paths.update(str(f.locate()) for f in dist.files or ())
        for requirement in dist.requires or ():
            if "extra ==" not in requirement:  # extras are not installed by default
                todo.append(re.match(r"[A-Za-z0-9._-]+", requirement).group())
    return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))


def _normalize(dist_name):
    return re.sub(r"[-_.]+", "-", dist_name).lower()


def _last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else "no output"
