"""The kernel cache of ember._inductor (Note [Kernel cache]) across processes, damaged entries,
an unwritable cache directory, and the no-compiler fallback."""

import json
import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path

import numpy as np
import pytest

import ember
from ember import fx
from ember._inductor import build, compile_fx, config, metrics

SCRIPT = textwrap.dedent(
    """
    import json, operator, sys
    import ember
    from ember import fx
    from ember._inductor import compile_fx, metrics
    g = fx.Graph()
    x, y = g.placeholder("x"), g.placeholder("y")
    a = g.call_function(ember.tanh, (g.call_function(operator.mul, (x, y)),))
    b = g.call_function(operator.add, (a, %(salt)r))
    s = g.call_function(ember.nn.functional.softmax, (b,), {"dim": 1})
    g.output(s)
    gm = fx.GraphModule(ember.nn.Module(), g)
    xs = [ember.randn(5, 7), ember.randn(7)]
    fn = compile_fx(gm, xs)
    err = (fn(*xs) - gm(*xs)).abs().max().item()
    print(json.dumps({"compiles": metrics.cpp_compiles, "hits": metrics.cache_hits, "err": err}))
    """
)


def run_child(cache, salt=0.25):
    env = dict(os.environ, EMBER_CACHE_DIR=str(cache))
    env.pop("EMBER_CXX", None)
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT % {"salt": salt}],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def entries(cache):
    return sorted((Path(cache) / "inductor").glob("*.json"))


def test_second_process_compiles_nothing(tmp_path):
    first = run_child(tmp_path)
    assert first["compiles"] == 1 and first["err"] < 1e-6
    second = run_child(tmp_path)
    assert second["compiles"] == 0 and second["hits"] == 1 and second["err"] < 1e-6


@pytest.mark.parametrize("damage", ["truncate", "garbage", "foreign", "missing_so"])
def test_damaged_entry_is_rebuilt(tmp_path, damage):
    run_child(tmp_path)
    (meta_path,) = entries(tmp_path)
    meta = json.loads(meta_path.read_text())
    so = meta_path.parent / meta["so"]
    if damage == "truncate":
        so.write_bytes(so.read_bytes()[: meta["size"] // 2])
    elif damage == "garbage":
        so.write_bytes(b"\0" * meta["size"])
    elif damage == "foreign":  # another graph's entry under this key
        run_child(tmp_path, salt=0.5)
        other = [p for p in entries(tmp_path) if p != meta_path][0]
        meta_path.write_text(other.read_text())
    else:
        so.unlink()
    again = run_child(tmp_path)
    assert again["compiles"] == 1 and again["err"] < 1e-6
    assert run_child(tmp_path)["compiles"] == 0  # and the rebuilt entry is good


def test_two_processes_compiling_at_once(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", SCRIPT % {"salt": 0.75}],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    results = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    assert all(r["err"] < 1e-6 for r in results)
    assert sum(r["compiles"] for r in results) == 1  # the second waited for the first


def _graph():
    g = fx.Graph()
    x = g.placeholder("x")
    g.output(g.call_function(ember.exp, (g.call_function(ember.sin, (x,)),)))
    return fx.GraphModule(ember.nn.Module(), g)


def test_unwritable_cache_dir_builds_elsewhere(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setattr(config, "cache_dir", str(blocker / "inductor"))
    monkeypatch.setattr(build, "_fallback_dir", None)
    monkeypatch.setattr(build, "_loaded", {})
    gm, x = _graph(), ember.randn(6)
    with pytest.warns(RuntimeWarning, match="not writable"):
        fn = compile_fx(gm, [x])
    np.testing.assert_allclose(fn(x).numpy(), gm(x).numpy(), rtol=1e-6)


def test_no_compiler_falls_back_to_eager_and_warns_once(monkeypatch):
    import ember._inductor as inductor

    monkeypatch.setattr(config, "cxx", "")
    monkeypatch.setattr(inductor, "_warned_no_compiler", False)
    gm, x = _graph(), ember.randn(6)
    before = metrics.cpp_compiles
    with pytest.warns(RuntimeWarning, match="no C\\+\\+ compiler"):
        fn = compile_fx(gm, [x])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fn2 = compile_fx(gm, [x])  # no second warning
    for f in (fn, fn2):
        np.testing.assert_allclose(f(x).numpy(), gm(x).numpy())
    assert metrics.cpp_compiles == before


def test_no_compiler_through_the_environment(tmp_path):
    env = dict(os.environ, EMBER_CACHE_DIR=str(tmp_path), EMBER_CXX="")
    code = SCRIPT % {"salt": 0.1}
    out = subprocess.run(
        [sys.executable, "-W", "always", "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert out.stderr.count("no C++ compiler") == 1
    res = json.loads(out.stdout.strip().splitlines()[-1])
    assert res["compiles"] == 0 and res["err"] < 1e-6


def test_failing_compiler_runs_the_graph_eagerly(tmp_path, monkeypatch):
    monkeypatch.setattr(config, "cxx", "false")  # found, but every compile fails
    monkeypatch.setattr(config, "cache_dir", str(tmp_path))
    gm, x = _graph(), ember.randn(6)
    with pytest.warns(RuntimeWarning, match="running this graph eagerly"):
        fn = compile_fx(gm, [x])
    np.testing.assert_allclose(fn(x).numpy(), gm(x).numpy())
    assert not list(tmp_path.glob("*.so"))  # nothing half-written was left as an entry
