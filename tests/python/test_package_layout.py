"""The layout of the Python package (issue 12, item 5): no module imports the package root at
import time and no import cycles (tools/check_py_imports.py); every Python-level Tensor method
comes from the one table in ember/_ops/_tensor_methods.py; no module writes into Tensor or into
another module's namespace."""

import ast
import subprocess
import sys
import types
from pathlib import Path

import ember
from ember._ops import _tensor_methods

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "python" / "ember"
CHECKER = REPO / "tools" / "check_py_imports.py"


def _sources():
    return sorted(PKG.rglob("*.py"))


def test_no_root_imports_and_no_cycles():
    run = subprocess.run([sys.executable, str(CHECKER)], capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_checker_reports_root_imports_and_cycles(tmp_path):
    # A package with both faults: the checker must fail on it (and name them).
    pkg = tmp_path / "ember"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("from . import a, sub\n")
    (pkg / "a.py").write_text("import ember\nfrom .sub import b\n")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "b.py").write_text("from .. import a\n\ndef f():\n    import ember\n")
    run = subprocess.run([sys.executable, str(CHECKER), str(pkg)], capture_output=True, text=True)
    assert run.returncode == 1
    assert "ember.a imports the package root" in run.stdout
    assert "import cycle: ember <-> ember.a <-> ember.sub.b" in run.stdout
    assert "ember.sub.b imports the package root" not in run.stdout  # function level is lazy


def _python_level(value):
    """True for what Python (not the binding) put on Tensor."""
    if isinstance(value, types.FunctionType):
        return True
    if isinstance(value, property):
        return isinstance(value.fget, types.FunctionType)
    return not type(value).__name__.startswith("nb_") and not callable(value)


def test_every_python_level_tensor_method_comes_from_the_table():
    table = _tensor_methods._installed
    assert table, "the package root installs the table"
    skip = {"__module__", "__doc__", "__dict__"}
    python_level = {
        name
        for name, value in vars(ember.Tensor).items()
        if name not in skip and _python_level(value)
    }
    assert python_level - set(table) == set()
    for name in python_level:
        assert vars(ember.Tensor)[name] is table[name], name
    # install() is idempotent and table() describes what it set.
    _tensor_methods.install()
    assert set(_tensor_methods.table()) == set(table)


def _assigned_objects(tree):
    """(line, expression text) for every `setattr(X, ...)` and `X.attr = ...` at any level."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr" and node.args:
            out.append((node.lineno, ast.unparse(node.args[0])))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute):
                    out.append((t.lineno, ast.unparse(t.value)))
    return out


# Function modes swap ember's public functions and Tensor's attributes for routing wrappers while
# a mode is active and put the originals back after (ember.overrides): the one other writer.
_MODE_ROUTING = PKG / "overrides.py"


def test_only_the_table_assigns_to_tensor():
    offenders = []
    for path in _sources():
        if path in (PKG / "_ops" / "_tensor_methods.py", _MODE_ROUTING):
            continue
        for line, target in _assigned_objects(ast.parse(path.read_text())):
            if target == "Tensor" or target.endswith(".Tensor"):
                offenders.append(f"{path.relative_to(REPO)}:{line}: assigns to {target}")
    assert offenders == []


def test_no_module_writes_into_an_imported_module():
    # (The table's own setattr on Tensor is the one exception, checked above.)
    offenders = []
    for path in _sources():
        if path in (PKG / "_ops" / "_tensor_methods.py", _MODE_ROUTING):
            continue
        tree = ast.parse(path.read_text())
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported |= {(a.asname or a.name).split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                imported |= {a.asname or a.name for a in node.names}
        for line, target in _assigned_objects(tree):
            if target.split(".")[0] in imported:
                offenders.append(f"{path.relative_to(REPO)}:{line}: assigns to {target}")
    assert offenders == []


def test_public_surface_kept():
    # A sample of names each grab-bag file used to add, by where they live now.
    for name in (
        "xlogy",
        "diff",
        "max",
        "det",
        "diagonal_scatter",
        "poisson",
        "exp_",
        "conv2d",
        "softmax",
        "batch_norm",
        "FloatTensor",
        "is_nonzero",
        "frombuffer",
        "nextafter",
    ):
        assert hasattr(ember, name), name
    for name in (
        "softmax",
        "max",
        "xlogy",
        "cauchy_",
        "H",
        "share_memory_",
        "untyped_storage",
        "type",
        "new",
        "layout",
        "float",
        "arccos",
        "hardshrink",
    ):
        assert hasattr(ember.Tensor, name), name
    assert ember.conv2d is ember.nn.functional.conv2d
    assert ember.Tensor.layout.fget(ember.zeros(1)) is ember.strided
    x = ember.arange(6.0).reshape(2, 3)
    assert x.max(axis=1).values.tolist() == [2.0, 5.0]  # numpy keywords on Python methods
