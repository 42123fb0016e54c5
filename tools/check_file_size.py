#!/usr/bin/env python3
"""Fail on a source file over 1,000 lines; warn over 500 (house style: split by family first).

Scans csrc, python/src, python/ember, tests, tools, benchmarks and examples for .cpp, .h, .inc
and .py files. Usage: tools/check_file_size.py [--root DIR] [--quiet]   (--quiet: no warnings).
Exit 0 when no file is over the limit, 1 otherwise.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

LIMIT = 1000
WARN = 500
DIRS = ("csrc", "python/src", "python/ember", "tests", "tools", "benchmarks", "examples")
SUFFIXES = {".cpp", ".h", ".inc", ".py"}

# Files already over the limit when the check was added, with the length they may not exceed.
# A ratchet: such a file fails if it grows, and its entry fails once the file is back under the
# limit (delete the entry then). Split these by family and remove them.
KNOWN_OVER: dict[str, int] = {}


def line_counts(root: Path) -> list[tuple[str, int]]:
    counts = []
    for d in DIRS:
        base = root / d
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            if any(part.startswith(".") or part == "__pycache__" for part in path.parts):
                continue
            with path.open("rb") as f:
                counts.append((path.relative_to(root).as_posix(), sum(1 for _ in f)))
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    ap.add_argument("--quiet", action="store_true", help="do not list the files over 500 lines")
    args = ap.parse_args(argv)
    counts = line_counts(args.root.resolve())
    errors = []
    for f, n in counts:
        cap = KNOWN_OVER.get(f)
        if n > LIMIT and cap is None:
            errors.append(f"{f}: {n} lines (over the limit of {LIMIT}; split it by family)")
        elif cap is not None and n > cap:
            errors.append(f"{f}: {n} lines (a known oversized file may not grow past {cap})")
        elif cap is not None and n <= LIMIT:
            errors.append(f"{f}: {n} lines, now within the limit: delete its KNOWN_OVER entry")
    present = {f for f, _ in counts}
    errors += [f"{f}: listed in KNOWN_OVER but not found" for f in KNOWN_OVER if f not in present]
    warn = [(f, n) for f, n in counts if WARN < n <= LIMIT]
    if warn and not args.quiet:
        for f, n in warn:
            print(f"check_file_size: warning: {f}: {n} lines (over {WARN}; split it by family)")
    for e in errors:
        print(f"check_file_size: {e}", file=sys.stderr)
    if errors:
        return 1
    known = len(KNOWN_OVER)
    print(
        f"check_file_size: OK ({len(counts)} files, {len(warn)} over {WARN} lines, "
        f"{known} known over {LIMIT})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
