"""python -m ember.run: unmodified PyTorch scripts (tests/python/torch_scripts/) run on ember,
every torch import in every module resolving to ember, child processes included."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).parent / "torch_scripts"


def _run(*args, env=None, check=True):
    out = subprocess.run(
        [sys.executable, *args],
        cwd=SCRIPTS,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    if check:
        assert out.returncode == 0, out.stdout + out.stderr
    return out


def _fields(stdout):
    return dict(line.split(" ", 1) for line in stdout.splitlines() if " " in line)


@pytest.mark.parametrize("form", ["script", "module"])
def test_training_script_runs_on_ember(form):
    target = ["train_mlp.py"] if form == "script" else ["-m", "train_mlp"]
    out = _fields(_run("-m", "ember.run", *target, "--epochs", "2").stdout)
    assert out["tensor-module"].startswith("ember")
    assert out["names"] == "ember ember.nn ember.nn.functional ember"  # helper module too
    assert out["argv"] == "['--epochs', '2']"
    assert out["accelerator"] == "False"
    loss = float(out["loss"])
    assert 0.0 < loss < 0.7
    torch = pytest.importorskip("torch")  # the same script on PyTorch gives the same loss
    ref = _fields(_run("train_mlp.py", "--epochs", "2").stdout)
    assert ref["tensor-module"] == "torch" and torch.__name__ == "torch"
    assert abs(float(ref["loss"]) - loss) < 1e-4


def test_missing_submodule_fails_naming_it():
    out = _run("-m", "ember.run", "missing_submodule.py", check=False)
    assert out.returncode == 1
    assert "imported ember" in out.stdout
    assert "ModuleNotFoundError: No module named 'torch.nn.not_a_real_submodule'" in out.stderr


def test_child_processes_alias_torch_too():
    out = _fields(_run("-m", "ember.run", "spawn_child.py").stdout)
    assert out["parent"] == "ember" and out["child"] == "ember ember.nn"


def test_environment_switch_is_opt_in():
    env = _run("-m", "ember.run", "--env").stdout.strip()
    assert env.startswith("export EMBER_AS_TORCH=1 PYTHONPATH=")
    hook = env.split("PYTHONPATH=", 1)[1].strip("'").split(os.pathsep)[0]
    assert Path(hook, "sitecustomize.py").is_file()
    probe = "import sys, torch; print(torch.__name__)"
    base = {k: v for k, v in os.environ.items() if k not in ("EMBER_AS_TORCH", "PYTHONPATH")}
    on = _run("-c", probe, env={**base, "EMBER_AS_TORCH": "1", "PYTHONPATH": hook})
    assert on.stdout.strip() == "ember"
    # The hook directory alone, without the switch, changes nothing.
    pytest.importorskip("torch")
    off = _run("-c", probe, env={**base, "EMBER_AS_TORCH": "0", "PYTHONPATH": hook})
    assert off.stdout.strip() == "torch"


def test_alias_refuses_after_real_torch():
    pytest.importorskip("torch")
    code = "import torch; from ember import _torch_alias; _torch_alias.install()"
    out = _run("-c", code, check=False)
    assert out.returncode == 1 and "already imported" in out.stderr


def test_fx_code_names_torch_when_run_as_torch(tmp_path):
    # A traced graph's code and node listing show torch's names (torch.clamp, torch.float32),
    # as PyTorch prints them, and the code still runs; GraphModule.to_folder's package imports.
    script = tmp_path / "fx_names.py"
    script.write_text(
        "import sys\n"
        "import torch, torch.fx as fx, torch.nn.functional as F\n"
        "def f(x):\n"
        "    return F.relu(torch.clamp(x, min=-0.5)).to(torch.float32)\n"
        "gm = fx.symbolic_trace(f)\n"
        "print(gm.code)\n"
        "print([n.format_node() for n in gm.graph.nodes])\n"
        "print(gm(torch.tensor([-1.0, 2.0])).tolist())\n"
        f"gm.to_folder({str(tmp_path / 'pkg')!r}, 'Mod')\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "import pkg\n"
        "print(pkg.Mod()(torch.tensor([-1.0, 2.0])).tolist())\n"
    )
    out = _run("-m", "ember.run", str(script)).stdout
    assert "torch.clamp(x, min = -0.5)" in out
    assert "torch.nn.functional.relu(" in out and "torch.float32" in out
    assert "target=torch.clamp" in out and "ember." not in out
    assert out.count("[0.0, 2.0]") == 2
    import ember  # imported as itself, the code names ember's functions

    gm = ember.fx.symbolic_trace(lambda x: ember.clamp(x, min=-0.5))
    assert "ember.clamp(x, min = -0.5)" in gm.code


def test_torch_module_runs_as_its_ember_module(tmp_path):
    # `python -m ember.run -m torch.distributed.run ...`: torchrun's command line unchanged; the
    # alias of a torch module is a package, which runpy would refuse to run as __main__
    script = tmp_path / "worker.py"
    script.write_text(
        "import os, torch\n"
        "print('worker', os.environ['RANK'], os.environ['WORLD_SIZE'], torch.__name__)\n"
    )
    out = _run(
        "-m", "ember.run", "-m", "torch.distributed.run", "--nproc-per-node", "2", str(script)
    ).stdout
    assert "worker 0 2 ember" in out and "worker 1 2 ember" in out
