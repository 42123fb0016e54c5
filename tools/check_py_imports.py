#!/usr/bin/env python3
"""Checks the import layout of the Python package `python/ember` (issue 12, item 5).

Only imports that run when a module is imported count (module level, including `if`/`try`
blocks, but not function bodies or `if TYPE_CHECKING:` blocks). It fails (exit status 1) on:

- an import of the package root from inside the package: `import ember`, `import ember.x`
  (which binds `ember`), or `from ember import name` / `from .. import name` that resolves to the
  package `ember` and takes a name that is not a submodule of it. Importing a submodule
  (`from . import _C`, `from ..linalg import solve`) is fine: it does not read the root's
  namespace while the root is still being initialised;
- an import cycle between modules: a strongly connected component of more than one module in
  the graph whose edges are those imports (`from P import a` is an edge to `P.a` when `P.a` is a
  module, to `P` otherwise). A package's own `__init__` importing its children is part of the
  graph; a child needing its parent package to exist is not an edge.

`--stats` prints the counts the issue reports (modules importing the root, upward imports, i.e.
relative imports that reach above the module's own package or absolute imports of the package
from inside it, and cycles) without failing.
"""

import argparse
import ast
import sys
from pathlib import Path

ROOT = "ember"
DEFAULT_DIR = Path(__file__).resolve().parent.parent / "python" / ROOT


def module_names(pkg_dir):
    """{dotted module name: path} for every .py file of the package, plus the extension `_C`."""
    names = {}
    for path in sorted(pkg_dir.rglob("*.py")):
        parts = list(path.relative_to(pkg_dir.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        names[".".join(parts)] = path
    names[ROOT + "._C"] = None  # the compiled extension
    return names


def _is_package(name, names):
    path = names.get(name)
    return path is not None and path.name == "__init__.py"


def _module_level(body):
    """The statements of `body` that run at import time, descending into if/try/with blocks."""
    for node in body:
        if isinstance(node, ast.If):
            test = node.test
            name = getattr(test, "id", None) or getattr(test, "attr", None)
            if name == "TYPE_CHECKING":
                yield from _module_level(node.orelse)
                continue
            yield from _module_level(node.body)
            yield from _module_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _module_level(block)
            for handler in node.handlers:
                yield from _module_level(handler.body)
        elif isinstance(node, ast.With):
            yield from _module_level(node.body)
        else:
            yield node


def _resolve(name, level, module, names):
    """The absolute module a relative import `from <level dots><name>` names."""
    if level == 0:
        return name
    package = module.split(".") if _is_package(module, names) else module.split(".")[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([name] if name else []))


def analyse(pkg_dir=DEFAULT_DIR):
    """Per module: the module-level imports as (line, target, reads_root, upward)."""
    names = module_names(pkg_dir)
    found = {}
    for module, path in names.items():
        if path is None:
            continue
        tree = ast.parse(path.read_text(), str(path))
        own_package = module if _is_package(module, names) else module.rpartition(".")[0]
        imports = []
        for node in _module_level(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.split(".")[0] != ROOT:
                        continue
                    # `import ember.x.y` binds (and so reads) the root; `import ember.x as y`
                    # binds only the submodule.
                    reads_root = alias.name == ROOT or alias.asname is None
                    imports.append((node.lineno, alias.name, reads_root, True))
            elif isinstance(node, ast.ImportFrom):
                target = _resolve(node.module or "", node.level, module, names)
                if target.split(".")[0] != ROOT:
                    continue
                upward = node.level == 0 or not (
                    target == own_package or target.startswith(own_package + ".")
                )
                for alias in node.names:
                    sub = target + "." + alias.name
                    if sub in names:
                        imports.append((node.lineno, sub, False, upward))
                    else:
                        imports.append((node.lineno, target, target == ROOT, upward))
        found[module] = imports
    return names, found


def _edges(module, targets, found):
    """The modules whose import-time code importing each target runs: the target and its
    ancestor packages that do not contain `module`."""
    out = set()
    own = module.split(".")
    for t in targets:
        parts = t.split(".")
        for i in range(1, len(parts) + 1):
            name = ".".join(parts[:i])
            implicit = i < len(parts)  # a package run on the way to the target
            if (implicit and parts[:i] == own[:i]) or name == module or name not in found:
                continue
            out.add(name)
    return sorted(out)


def cycles(found):
    """Strongly connected components of more than one module (Tarjan's algorithm)."""
    graph = {m: _edges(m, {t for _, t, _, _ in imps}, found) for m, imps in found.items()}
    index, low, stack, on_stack, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("package", nargs="?", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--stats", action="store_true", help="print the counts, never fail")
    args = parser.parse_args(argv)
    names, found = analyse(args.package)
    root_importers = {m: [i for i in imps if i[2]] for m, imps in found.items()}
    root_importers = {m: i for m, i in root_importers.items() if i}
    upward = sum(1 for imps in found.values() for i in imps if i[3])
    loops = cycles(found)
    if args.stats:
        print(f"modules: {len(found)}")
        print(f"modules importing the package root at import time: {len(root_importers)}")
        print(f"upward imports (above the module's own package): {upward}")
        print(f"import cycles: {len(loops)}")
        for comp in loops:
            print("  cycle: " + " <-> ".join(comp))
        return 0
    errors = []
    for module, imps in sorted(root_importers.items()):
        for line, target, _, _ in imps:
            errors.append(f"{names[module]}:{line}: {module} imports the package root ({target})")
    for comp in loops:
        errors.append("import cycle: " + " <-> ".join(comp))
    for e in errors:
        print(e)
    if errors:
        print(f"{len(errors)} import-layout problem(s) in {args.package}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
