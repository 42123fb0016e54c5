#!/usr/bin/env python3
"""Fail on an `#include "ember/..."` that breaks ember's layer order.

Layers, lowest first (a layer may include itself and the layers it lists):

    layer       may include
    ---------   ------------------------------------------------------------
    core        core
    dispatch    core, dispatch
    schema      core, dispatch, schema            (typed op declarations)
    cpu         core, dispatch, schema, cpu       (kernels; reached only through the dispatcher)
    autograd    core, dispatch, autograd
    ops         core, dispatch, schema, autograd, ops
    nn          core, dispatch, schema, autograd, ops, nn, serialize
    optim       core, dispatch, schema, autograd, ops, optim
    data        core, dispatch, schema, autograd, ops, data
    serialize   core, dispatch, schema, autograd, ops, serialize
    export      core, dispatch, schema, autograd, ops, nn, serialize, export  (exported programs)
    distributed core, dispatch, schema, autograd, ops, distributed  (stores, process groups)

Kernels (`cpu/`) are private to the backend: ops reach them only through the dispatcher and
nothing above them includes `cpu/`, so a second backend inherits every rule of `ops/`
unchanged. `include/ember/ember.h` is the umbrella header of the C++ API and may include
anything. `nn/` includes `serialize/` for `ember::save(module)`.

Known violations that are not fixed yet may be listed in `tools/layer_debt.txt`, one
`path:included-header` per line (`#` starts a comment). The list is a ratchet: a violation not
listed fails, and so does a listed entry that no longer occurs (delete it when it is fixed).

Every `ops/<family>.cpp` has its header `ops/<family>.h` (the public functions of the family),
except the two files that define what `core/tensor.h` declares (Note [Tensor methods]).

Kernels receive ready operands: dtype promotion and broadcasting are the meta step's, in `ops/`
(Note [Meta step] in ops/meta.h), so a file under `cpu/` that calls `result_type`,
`broadcast_shapes` or `promote_types` fails (a debt entry reads `path:calls <function>`).

Usage: tools/check_layers.py [--root DIR]   exit 0 when clean, 1 with one line per problem.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

_FRONTEND_BASE = {"core", "dispatch", "schema", "autograd", "ops"}

# layer -> the layers whose headers it may include (itself included).
ALLOWED: dict[str, set[str]] = {
    "core": {"core"},
    "dispatch": {"core", "dispatch"},
    "schema": {"core", "dispatch", "schema"},
    "cpu": {"core", "dispatch", "schema", "cpu"},
    "autograd": {"core", "dispatch", "autograd"},
    "ops": {"core", "dispatch", "schema", "autograd", "ops"},
    "nn": _FRONTEND_BASE | {"nn", "serialize"},
    "optim": _FRONTEND_BASE | {"optim"},
    "data": _FRONTEND_BASE | {"data"},
    "serialize": _FRONTEND_BASE | {"serialize"},
    "export": _FRONTEND_BASE | {"nn", "serialize", "export"},
    "distributed": _FRONTEND_BASE | {"distributed"},
}

# Files that may include any layer.
UMBRELLA = {"include/ember/ember.h"}

INCLUDE_RE = re.compile(r'^\s*#\s*include\s+"ember/([A-Za-z0-9_]+)/([^"]+)"')
SOURCE_SUFFIXES = {".h", ".cpp", ".inc"}


def layer_of(rel: Path) -> str | None:
    """The layer of a file under csrc/ember/<layer>/..., or None outside csrc/ember."""
    parts = rel.parts
    if len(parts) >= 4 and parts[0] == "csrc" and parts[1] == "ember":
        return parts[2]
    return None


def find_violations(root: Path) -> tuple[list[tuple[str, int, str, str]], list[str]]:
    """(violations as (file, line, included header, rule), unknown-layer problems)."""
    violations = []
    problems = []
    files = sorted(p for p in (root / "csrc" / "ember").rglob("*") if p.suffix in SOURCE_SUFFIXES)
    files += [root / u for u in UMBRELLA if (root / u).exists()]
    for path in files:
        rel = path.relative_to(root)
        src_layer = layer_of(rel)
        umbrella = rel.as_posix() in UMBRELLA
        if src_layer is None and not umbrella:
            continue
        if not umbrella and src_layer not in ALLOWED:
            problems.append(
                f"{rel}: directory csrc/ember/{src_layer}/ has no row in the layer table"
            )
            continue
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE_RE.match(line)
            if not m:
                continue
            target = m.group(1)
            header = f"ember/{target}/{m.group(2)}"
            if umbrella:
                continue
            if target not in ALLOWED:
                problems.append(f"{rel}:{lineno}: includes {header} from unknown layer '{target}'")
                continue
            if target not in ALLOWED[src_layer]:
                allowed = ", ".join(sorted(ALLOWED[src_layer]))
                rule = f"{src_layer}/ may include only {allowed}"
                violations.append((rel.as_posix(), lineno, header, rule))
    return violations, problems


# The dtype and shape rules that belong to the meta step in ops/, never to a kernel.
_META_RULES = ("result_type", "broadcast_shapes", "promote_types")
_META_CALL_RE = re.compile(r"\b(" + "|".join(_META_RULES) + r")\s*\(")


def meta_rule_calls(root: Path) -> list[tuple[str, int, str]]:
    """(file, line, function) for each call of a meta-step rule in a kernel file (cpu/)."""
    calls = []
    cpu = root / "csrc" / "ember" / "cpu"
    for path in sorted(p for p in cpu.rglob("*") if p.suffix in SOURCE_SUFFIXES):
        rel = path.relative_to(root).as_posix()
        for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//", 1)[0]
            for m in _META_CALL_RE.finditer(code):
                calls.append((rel, lineno, m.group(1)))
    return calls


# ops/*.cpp that define core/tensor.h's declarations (Tensor methods, operator<<), not a family.
_OPS_WITHOUT_HEADER = {"tensor_methods.cpp", "print.cpp"}


def missing_family_headers(root: Path) -> list[str]:
    ops = root / "csrc" / "ember" / "ops"
    return [
        f"csrc/ember/ops/{cpp.name}: no header csrc/ember/ops/{cpp.stem}.h for its family"
        for cpp in sorted(ops.glob("*.cpp"))
        if cpp.name not in _OPS_WITHOUT_HEADER and not cpp.with_suffix(".h").exists()
    ]


def read_debt(path: Path) -> set[str]:
    if not path.exists():
        return set()
    entries = set()
    for line in path.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            entries.add(line)
    return entries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent)
    args = ap.parse_args(argv)
    root = args.root.resolve()

    violations, problems = find_violations(root)
    problems += missing_family_headers(root)
    debt = read_debt(root / "tools" / "layer_debt.txt")
    seen = set()
    for file, lineno, header, rule in violations:
        key = f"{file}:{header}"
        seen.add(key)
        if key not in debt:
            problems.append(f"{file}:{lineno}: includes {header}: {rule}")
    for file, lineno, fn in meta_rule_calls(root):
        key = f"{file}:calls {fn}"
        seen.add(key)
        if key not in debt:
            problems.append(
                f"{file}:{lineno}: calls {fn}: dtype promotion and broadcasting belong to the "
                "meta step in ops/ (Note [Meta step] in ops/meta.h); kernels get ready operands"
            )
    for key in sorted(debt - seen):
        problems.append(f"tools/layer_debt.txt: '{key}' no longer occurs; delete the entry")

    if problems:
        print("check_layers: include-order violations:", file=sys.stderr)
        for p in problems:
            print("  " + p, file=sys.stderr)
        return 1
    listed = len(debt)
    suffix = f" ({listed} known violations in tools/layer_debt.txt)" if listed else ""
    print(f"check_layers: OK{suffix}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
