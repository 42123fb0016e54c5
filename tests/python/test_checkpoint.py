"""ember.utils.checkpoint: the activations inside a region are dropped and recomputed in the
backward with the forward's RNG state, giving the plain call's gradients with less memory."""

import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

import ember
from ember import nn
from ember.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential

REPO = Path(__file__).resolve().parents[2]


def _mlp(depth=4, width=8, p=0.5):
    ember.manual_seed(0)
    layers = []
    for _ in range(depth):
        layers += [nn.Linear(width, width), nn.Tanh(), nn.Dropout(p)]
    return nn.Sequential(*layers)


def _grads(model, x, run):
    model.zero_grad()
    x.grad = None
    ember.manual_seed(1)
    out = run()
    (out * ember.arange(out.numel()).reshape(out.shape)).sum().backward()
    after = ember.rand(3)  # the outer RNG stream continues as without checkpointing
    return out.detach(), [p.grad.clone() for p in model.parameters()] + [x.grad.clone()], after


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("how", ["checkpoint", "sequential:1", "sequential:2", "sequential:3"])
def test_gradients_equal_plain_with_dropout(use_reentrant, how):
    model = _mlp()
    x = ember.randn(5, 8, requires_grad=True)
    ref_out, ref, ref_after = _grads(model, x, lambda: model(x))
    if how == "checkpoint":
        run = lambda: checkpoint(model, x, use_reentrant=use_reentrant)  # noqa: E731
    else:
        segs = int(how.split(":")[1])
        run = lambda: checkpoint_sequential(model, segs, x, use_reentrant=use_reentrant)  # noqa: E731
    out, got, after = _grads(model, x, run)
    assert ember.equal(out, ref_out)
    for a, b in zip(ref, got):
        assert ember.equal(a, b)  # the same masks: bit-identical gradients
    assert ember.equal(after, ref_after)


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_dropout_mask_is_replayed_only_with_preserve_rng_state(use_reentrant):
    x = ember.ones(2000, requires_grad=True)
    drop = lambda t: nn.functional.dropout(t * 1.0, 0.5, training=True)  # noqa: E731
    for preserve in (True, False):
        x.grad = None
        out = checkpoint(drop, x, use_reentrant=use_reentrant, preserve_rng_state=preserve)
        out.sum().backward()
        same = ember.equal(out != 0, x.grad != 0)
        assert same == preserve  # 2000 draws: different masks differ somewhere


def test_non_reentrant_no_inner_graph_and_parameters_reached():
    model = _mlp(p=0.0)
    x = ember.randn(3, 8)  # no input requires grad: the parameters still get gradients
    out = checkpoint(model, x, use_reentrant=False)
    assert out.requires_grad
    # The graph is the region's own, as torch's (its nodes' saved tensors are recomputed).
    names, stack = set(), [out.grad_fn]
    while stack:
        n = stack.pop()
        names.add(n.name())
        stack.extend(m for m, _ in n.next_functions if m is not None)
    assert {"TanhBackward0", "torch::autograd::AccumulateGrad"} <= names  # torch's names
    out.sum().backward()
    ref = _mlp(p=0.0)
    ref(x).sum().backward()
    for a, b in zip(model.parameters(), ref.parameters()):
        assert ember.allclose(a.grad, b.grad, atol=1e-6)


def test_reentrant_inputs_without_grad_warn_and_give_no_graph():
    model = _mlp(p=0.0)
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(model, ember.randn(3, 8), use_reentrant=True)
    assert not out.requires_grad


def test_non_reentrant_autograd_grad_kwargs_and_nested_outputs():
    w = ember.randn(4, 4, requires_grad=True)

    def f(a, *, scale, tag):
        h = (a @ w).sin()
        return {"y": h * scale, "pair": (h.sum(), tag)}

    a = ember.randn(3, 4, requires_grad=True)
    out = checkpoint(f, a, use_reentrant=False, scale=2.0, tag="t")
    assert out["pair"][1] == "t"
    loss = out["y"].square().sum() + out["pair"][0]
    ga, gw = ember.autograd.grad(loss, [a, w])
    assert w.grad is None and a.grad is None  # grad() leaves .grad alone
    ref = f(a, scale=2.0, tag="t")
    ra, rw = ember.autograd.grad(ref["y"].square().sum() + ref["pair"][0], [a, w])
    assert ember.allclose(ga, ra) and ember.allclose(gw, rw)


def test_backward_with_inputs_only_touches_them():
    w = ember.randn(4, requires_grad=True)
    a = ember.randn(4, requires_grad=True)
    out = checkpoint(lambda t: (t * w).exp(), a, use_reentrant=False)
    out.sum().backward(inputs=[a])
    assert w.grad is None
    assert ember.allclose(a.grad, (a * w).exp() * w)


def test_argument_checks_and_warning():
    f = lambda t: t * 2  # noqa: E731
    x = ember.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed explicitly"):
        checkpoint(f, x)
    with pytest.warns(UserWarning, match="checkpoint_sequential: the use_reentrant parameter"):
        checkpoint_sequential([f, f], 1, x)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        checkpoint(f, x, use_reentrant=False)
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint(f, x, use_reentrant=True, k=1)
    with pytest.raises(ValueError, match="only supported when use_reentrant=False"):
        checkpoint(f, x, use_reentrant=True, debug=True)
    with pytest.raises(ValueError, match="determinism_check should be one of"):
        checkpoint(f, x, use_reentrant=False, determinism_check="strict")
    with pytest.raises(ValueError, match="Unexpected keyword arguments: k"):
        checkpoint_sequential([f], 1, x, use_reentrant=False, k=1)


def test_determinism_check_catches_a_different_recomputation():
    calls = []

    def f(t):
        calls.append(1)
        return t.repeat(len(calls)).sin()  # sin saves what differs (a region saving nothing
        # is never recomputed, as in torch)

    x = ember.ones(2, requires_grad=True)
    with pytest.raises(CheckpointError, match="different metadata"):
        checkpoint(f, x, use_reentrant=False).sum().backward()
    calls.clear()
    out = checkpoint(f, x, use_reentrant=False, determinism_check="none")
    with pytest.raises(RuntimeError):  # the gradient shapes no longer fit
        out.sum().backward()


def test_context_fn_wraps_forward_and_recomputation():
    seen = []

    class Ctx:
        def __init__(self, name):
            self.name = name

        def __enter__(self):
            seen.append(self.name)

        def __exit__(self, *exc):
            return False

    x = ember.ones(2, requires_grad=True)
    out = checkpoint(
        lambda t: t.exp(),
        x,
        use_reentrant=False,
        context_fn=lambda: (Ctx("fwd"), Ctx("recompute")),
    )
    assert seen == ["fwd"]
    out.sum().backward()
    assert seen == ["fwd", "recompute"]


def test_no_grad_runs_plainly():
    model = _mlp(p=0.0)
    with ember.no_grad():
        out = checkpoint(model, ember.randn(2, 8), use_reentrant=False)
    assert not out.requires_grad


def test_warning_text_matches_torch():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as tcheckpoint

    with pytest.warns(UserWarning) as theirs:
        tcheckpoint(lambda t: t * 2, torch.ones(2, requires_grad=True))
    with pytest.warns(UserWarning) as ours:
        checkpoint(lambda t: t * 2, ember.ones(2, requires_grad=True))
    assert str(ours[0].message) == str(theirs[0].message)


def _peak_growth(mode):
    # Under AddressSanitizer (scripts/sanitize.sh) freed blocks sit in a quarantine, so the peak
    # would count memory already freed; without a quarantine it measures what is alive, as here.
    env = dict(os.environ)
    env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "quarantine_size_mb=0"]))
    run = subprocess.run(
        [
            sys.executable,
            str(REPO / "benchmarks" / "checkpoint_memory.py"),
            "--child",
            mode,
            "--depth",
            "16",
            "--width",
            "512",
            "--batch",
            "2048",
        ],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    return json.loads(run.stdout.strip().splitlines()[-1])["peak_growth_bytes"]


@pytest.mark.skipif(not Path("/proc/self/clear_refs").exists(), reason="needs Linux's VmHWM")
def test_peak_memory_is_lower():
    # 16 x (Linear(512, 512) + ReLU) at batch 2048: 4 MiB per activation, 64+ MiB kept plainly.
    plain = _peak_growth("plain")
    seq = _peak_growth("sequential:4")
    assert plain > 48 * 2**20
    assert seq < 0.7 * plain, (plain, seq)
