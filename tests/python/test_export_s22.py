"""torch.export parity, session 22: functorch's names under python -m ember.run (the six exportdb
examples that import functorch.experimental.control_flow), cond on a Python-constant predicate
under export, and ember.compiler.is_exporting / is_compiling during an export. Compared with
torch 2.13 where it is installed."""

import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ember

SCRIPTS = Path(__file__).parent / "torch_scripts"


def _run(*args):
    out = subprocess.run(
        [sys.executable, *args], cwd=SCRIPTS, capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stdout + out.stderr
    return out


def _lines(stdout):
    return [line for line in stdout.splitlines() if line]


def test_functorch_names_resolve_to_embers():
    out = _run("-m", "ember.run", "functorch_names.py")
    lines = _lines(out.stdout)
    assert lines[-1] == "dim ModuleNotFoundError"  # functorch.dim: no ember counterpart
    assert "functorch.vmap` is deprecated" in out.stderr  # torch's FutureWarning
    if importlib.util.find_spec("torch") is not None:  # the same program on PyTorch
        assert lines[:-1] == _lines(_run("functorch_names.py").stdout)


def test_other_functorch_submodule_fails_naming_it(tmp_path):
    script = tmp_path / "einops_user.py"
    script.write_text("import torch\nimport functorch.einops\n")
    out = subprocess.run(
        [sys.executable, "-m", "ember.run", str(script)], capture_output=True, text=True
    )
    assert out.returncode == 1
    assert (
        "ModuleNotFoundError: No module named 'functorch.einops': ember, which stands in for "
        "torch here"
    ) in out.stderr


def _exportdb_examples():
    spec = importlib.util.find_spec("torch")
    if spec is None:
        return []
    folder = Path(spec.origin).parent / "_export" / "db" / "examples"
    return sorted(p for p in folder.glob("*.py") if "functorch" in p.read_text())


@pytest.mark.parametrize("path", _exportdb_examples(), ids=lambda p: p.stem)
def test_exportdb_functorch_examples_match_torch(path):
    ours = _run("-m", "ember.run", "exportdb_case.py", str(path))
    ref = _run("exportdb_case.py", str(path))
    assert _lines(ours.stdout)[0] == "module ember"
    assert _lines(ours.stdout)[1:] == _lines(ref.stdout)[1:]
    assert ("Pred is a Python constant" in ours.stderr) == (
        "Pred is a Python constant" in ref.stderr
    )


def test_exportdb_functorch_examples_found():
    pytest.importorskip("torch")
    assert len(_exportdb_examples()) == 6


class _ConstPred(ember.nn.Module):
    def forward(self, x):
        return ember.cond(x.shape[0] > 2, lambda t: t.cos(), lambda t: t.sin(), (x,))


def test_cond_on_constant_pred_exports_the_taken_branch():
    x = ember.arange(4.0)
    with pytest.warns(UserWarning, match="^Pred is a Python constant. When used with torch.cond"):
        ep = ember.export.export(_ConstPred(), (x,))
    assert ember.equal(ep.module()(x), x.cos())
    targets = [str(n.target) for n in ep.graph.nodes if n.op == "call_function"]
    assert targets == ["aten.cos.default"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # eagerly a constant pred does not warn
        assert ember.equal(_ConstPred()(x), x.cos())


def _flags_module(lib, seen):
    class Flags(lib.nn.Module):
        def forward(self, x):
            c = lib.compiler
            seen.append((c.is_exporting(), c.is_compiling(), c.is_dynamo_compiling()))
            return x + 1

    return Flags()


@pytest.mark.parametrize("lib_name", ["ember", "torch"])
def test_is_exporting_during_export(lib_name):
    lib = ember if lib_name == "ember" else pytest.importorskip("torch")
    seen = []
    lib.export.export(_flags_module(lib, seen), (lib.ones(2),))
    assert seen == [(True, True, False)]
    assert not lib.compiler.is_exporting() and not lib.compiler.is_compiling()
