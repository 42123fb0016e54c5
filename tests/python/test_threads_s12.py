"""The default intra-op thread count (Note [Thread count] in csrc/ember/core/cpu_quota.cpp):
OMP_NUM_THREADS read as torch reads it, and the affinity mask set before ember is imported. Each
case runs in a fresh interpreter, since the count is fixed when the pool starts. The cgroup v1/v2
quota readers are tested on fake trees in tests/cpp/test_cpu_quota.cpp."""

import json
import os
import subprocess
import sys

import pytest

_CHILD = r"""
import json, os, sys
cpus = json.loads(sys.argv[2])
if cpus:
    os.sched_setaffinity(0, cpus)
lib = __import__(sys.argv[1])
print(lib.get_num_threads())
"""


def _env(omp=None, mkl=None):
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    if omp is not None:
        env["OMP_NUM_THREADS"] = omp
    if mkl is not None:
        env["MKL_NUM_THREADS"] = mkl
    return env


def threads(lib="ember", omp=None, mkl=None, cpus=None):
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, lib, json.dumps(sorted(cpus or []))],
        env=_env(omp, mkl),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return int(out.stdout.split()[-1])


def _allowed():
    return sorted(os.sched_getaffinity(0))


def _machine():
    return os.cpu_count() or 1


@pytest.fixture(scope="module")
def default():
    return threads()


def test_default_is_at_most_the_affinity_mask(default):
    assert 1 <= default <= len(_allowed())


@pytest.mark.parametrize("value,expected", [("1", 1), (" 1 ", 1), ("+1", 1), ("1,2", 1)])
def test_omp_num_threads_valid(value, expected):
    assert threads(omp=value) == expected


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1abc", "1.5", "1,", "1 2", ""])
def test_omp_num_threads_invalid_is_ignored(value, default):
    assert threads(omp=value) == default


def test_omp_num_threads_capped_at_the_machine():
    assert threads(omp=str(_machine() + 7)) == _machine()


def test_mkl_num_threads_over_omp():
    assert threads(omp="2", mkl="1") == 1
    assert threads(omp="1", mkl="abc") == 1  # an invalid MKL_NUM_THREADS is ignored


def test_affinity_mask_set_before_import():
    cpus = _allowed()
    assert threads(cpus=cpus[:1]) == 1
    if len(cpus) >= 2:
        assert threads(cpus=cpus[:2]) == min(2, threads(cpus=cpus))


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_omp_num_threads_wins_over_affinity():
    # torch too: OMP_NUM_THREADS=2 under a one-CPU mask runs two threads.
    assert threads(omp="2", cpus=_allowed()[:1]) == 2


def test_set_num_threads_still_overrides():
    code = "import ember; ember.set_num_threads(3); print(ember.get_num_threads())"
    out = subprocess.run(
        [sys.executable, "-c", code], env=_env(omp="1"), capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.split()[-1] == "3"


@pytest.mark.parametrize("value", ["1", " 1 ", "1,2", "+1"])
def test_matches_torch_for_one_thread(value):
    pytest.importorskip("torch")
    assert threads(omp=value) == threads("torch", omp=value)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two CPUs")
def test_matches_torch_over_affinity():
    pytest.importorskip("torch")
    one = _allowed()[:1]
    assert threads(cpus=one) == threads("torch", cpus=one) == 1
    assert threads(omp="2", cpus=one) == threads("torch", omp="2", cpus=one)
