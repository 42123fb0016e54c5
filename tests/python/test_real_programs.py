"""Realistic PyTorch programs (tests/python/torch_scripts/, unmodified torch code) run on ember
through ``python -m ember.run``; their printed figures are compared with PyTorch's.

Each script prints ``key value`` lines. Everything it prints is deterministic on a given framework
(weights and data are made without the random generator) except keys starting with ``rng_``,
which depend on the random stream (ember's differs from torch's) and are only required to be
present. The expected figures are PyTorch 2.13's output, kept in torch_scripts/expected/ so that
the comparison runs where torch is not installed; where it is, torch's live output is compared with
the same files. Numbers match within float tolerance, the text around them exactly.

Regenerate the expected files with torch installed:
``.venv/bin/python tests/python/test_real_programs.py --regenerate``.
"""

import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

SCRIPTS_DIR = Path(__file__).parent / "torch_scripts"
EXPECTED_DIR = SCRIPTS_DIR / "expected"
SCRIPTS = [
    "char_rnn",
    "transformer_cls",
    "vae",
    "dcgan",
    "resnet_ckpt",
    "seq2seq_attn",
    "per_sample_grads",
    "flags_compile",
    "hooks_init",
    "data_pipeline",
    "word_lm",
    "rl_autograd",
    "vision_misc",
]
RTOL, ATOL = 2e-3, 1e-4
# Figures after many optimizer steps, where float rounding differences compound.
LOOSE = {("resnet_ckpt", "test_loss"): 1e-2, ("seq2seq_attn", "loss_last"): 1e-2}
NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?")


def _run(name, on_ember):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    runner = ["-m", "ember.run"] if on_ember else []
    out = subprocess.run(
        [sys.executable, *runner, f"{name}.py"],
        cwd=SCRIPTS_DIR,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert out.returncode == 0, f"{name}: {out.stdout}\n{out.stderr}"
    return out.stdout


def _fields(text):
    lines = [line for line in text.splitlines() if line.strip()]
    return dict(line.split(" ", 1) if " " in line else (line, "") for line in lines)


def _mismatches(name, got, expected):
    """Where `got` differs from `expected` beyond float tolerance (rng_ keys: presence only)."""
    bad = sorted(set(got) ^ set(expected))
    for key, want in expected.items():
        if key not in got or key.startswith("rng_"):
            continue
        have = got[key]
        if NUMBER.sub("#", have) != NUMBER.sub("#", want):
            bad.append(f"{key}: {have!r} != {want!r}")
            continue
        rtol = LOOSE.get((name, key), RTOL)
        for a, b in zip(NUMBER.findall(have), NUMBER.findall(want)):
            if abs(float(a) - float(b)) > ATOL + rtol * abs(float(b)):
                bad.append(f"{key}: {have!r} != {want!r}")
                break
    return bad


def _expected(name):
    return _fields((EXPECTED_DIR / f"{name}.txt").read_text())


@pytest.fixture(scope="module")
def ember_outputs():
    with ThreadPoolExecutor(max_workers=3) as pool:
        return dict(zip(SCRIPTS, pool.map(lambda n: _run(n, True), SCRIPTS)))


@pytest.mark.parametrize("name", SCRIPTS)
def test_program_matches_pytorch(name, ember_outputs):
    got = _fields(ember_outputs[name])
    assert got, f"{name} printed nothing"
    assert _mismatches(name, got, _expected(name)) == []


# PyTorch takes several seconds a script (importing it alone takes seconds), so the live check
# runs the quickest few; --regenerate reruns them all.
LIVE = ["hooks_init", "data_pipeline", "dcgan", "per_sample_grads"]


def test_expected_figures_are_pytorchs():
    """The recorded figures are what PyTorch prints today (skipped without torch)."""
    pytest.importorskip("torch")
    with ThreadPoolExecutor(max_workers=2) as pool:
        outputs = dict(zip(LIVE, pool.map(lambda n: _run(n, False), LIVE)))
    bad = {n: m for n in LIVE if (m := _mismatches(n, _fields(outputs[n]), _expected(n)))}
    assert bad == {}


def test_comparison_catches_differences():
    exp = {"loss": "0.51234", "shape": "(2, 3)", "rng_sample": "'abc'"}
    assert _mismatches("x", {"loss": "0.51240", "shape": "(2, 3)", "rng_sample": "'z'"}, exp) == []
    assert _mismatches("x", {"loss": "0.52000", "shape": "(2, 3)", "rng_sample": "''"}, exp)
    assert _mismatches("x", {"loss": "0.51234", "shape": "(2, 4)", "rng_sample": "''"}, exp)
    assert _mismatches("x", {"loss": "0.51234", "shape": "[2, 3]", "rng_sample": "''"}, exp)
    assert _mismatches("x", {"loss": "0.51234", "shape": "(2, 3)"}, exp) == ["rng_sample"]


if __name__ == "__main__" and "--regenerate" in sys.argv:
    import torch  # noqa: F401  (the expected figures are PyTorch's)

    EXPECTED_DIR.mkdir(exist_ok=True)
    with ThreadPoolExecutor(max_workers=3) as pool:
        for name, text in zip(SCRIPTS, pool.map(lambda n: _run(n, False), SCRIPTS)):
            (EXPECTED_DIR / f"{name}.txt").write_text(text)
            print(f"wrote {name}.txt ({len(text.splitlines())} lines)")
