"""Saved-tensor hooks (ember.autograd.graph.saved_tensors_hooks, save_on_cpu,
disable_saved_tensors_hooks): which tensors are packed and how often they are unpacked, for
built-in ops, hand-written kernels and custom Functions (call counts against torch), nesting,
thread-locality, errors with torch's messages, and double backward through unpacked tensors."""

import threading

import numpy as np
import pytest

import ember
from ember.autograd.graph import save_on_cpu, saved_tensors_hooks


def _counting(lib, pack_wrap=None):
    log = []

    def pack(t):
        log.append(("pack", tuple(t.shape)))
        return pack_wrap(t) if pack_wrap else t

    def unpack(t):
        log.append(("unpack", tuple(t.shape)))
        return t

    return log, lib.autograd.graph.saved_tensors_hooks(pack, unpack)


class _Scale(ember.autograd.Function):
    @staticmethod
    def forward(ctx, a, b):
        out = a * b
        ctx.save_for_backward(a, out, None)
        return out

    @staticmethod
    def backward(ctx, g):
        a, out, none = ctx.saved_tensors
        assert none is None
        return g * out / a, g * a


def _programs(lib):
    """name -> fn(x, w) building a scalar loss; x and w require grad, c does not."""

    def custom(x, w):
        class Scale(lib.autograd.Function):
            forward = staticmethod(_Scale.forward)
            backward = staticmethod(_Scale.backward)

        return Scale.apply(x, w).sum()

    return {
        "exp (saves its output)": lambda x, w: x.exp().sum(),
        "mul (saves both inputs)": lambda x, w: (x * w).sum(),
        "mul by a constant": lambda x, w: (x * lib.ones(x.shape)).sum(),
        "mm": lambda x, w: (x @ w.t()).sum(),
        "sum and add (save nothing)": lambda x, w: (x + w).sum(),
        "relu, tanh chain": lambda x, w: (x.relu() * w).tanh().sum(),
        "linear": lambda x, w: lib.nn.functional.linear(x, w).sum(),
        "log_softmax + nll": lambda x, w: lib.nn.functional.cross_entropy(
            x @ w, lib.tensor([0, 1, 2])
        ),
        "softmax, sigmoid": lambda x, w: (lib.softmax(x, 1) * w.sigmoid()).sum(),
        "custom Function": custom,
    }


def _run(lib, name):
    rng = np.random.default_rng(0)
    x = lib.tensor(rng.random((3, 3)) + 0.5, requires_grad=True)
    w = lib.tensor(rng.random((3, 3)) + 0.5, requires_grad=True)
    log, hooks = _counting(lib)
    with hooks:
        loss = _programs(lib)[name](x, w)
    n_pack = len(log)
    loss.backward()
    return n_pack, len(log) - n_pack, x.grad, w.grad


@pytest.mark.parametrize("name", list(_programs(ember)))
def test_pack_and_unpack_counts_match_torch(name):
    n_pack, n_unpack, gx, gw = _run(ember, name)
    assert n_unpack == n_pack  # each saved tensor is unpacked once by one backward
    torch = pytest.importorskip("torch")
    t_pack, t_unpack, tgx, tgw = _run(torch, name)
    assert (n_pack, n_unpack) == (t_pack, t_unpack)
    for a, b in ((gx, tgx), (gw, tgw)):
        if b is None:
            assert a is None
        else:
            assert a is not None and ember.allclose(a, ember.tensor(b.numpy()))


def test_hooks_see_the_saved_tensors_and_gradients_are_unchanged():
    x = ember.randn(4, requires_grad=True)
    w = ember.randn(4)
    seen = []

    def pack(t):
        seen.append(t)
        return t.clone()  # the graph keeps a copy only

    with saved_tensors_hooks(pack, lambda t: t):
        y = x * w  # only w is needed (for x's gradient)
    assert len(seen) == 1 and ember.equal(seen[0], w)
    y.sum().backward()
    assert ember.equal(x.grad, w)


def test_custom_function_saves_through_hooks_lazily():
    x = ember.rand(3, requires_grad=True)
    log, hooks = _counting(ember)
    with hooks:
        out = _Scale.apply(x + 1, x * 2)
    assert [k for k, _ in log] == ["pack", "pack"]  # a, out; None is not packed
    out.sum().backward()
    assert [k for k, _ in log] == ["pack", "pack", "unpack", "unpack"]
    assert ember.allclose(x.grad, 2 * x + 2 * (x + 1))


def test_nested_hooks_apply_innermost_only():
    x = ember.randn(3, requires_grad=True)
    seen = []
    outer = saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t)
    inner = saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t)
    with outer:
        with inner:
            x.exp()
        x.exp()
    x.exp()
    assert seen == ["inner", "outer"]


def test_pack_objects_are_opaque_and_unpack_must_return_a_tensor():
    x = ember.randn(3, requires_grad=True)
    store = {}

    def pack(t):
        key = len(store)
        store[key] = t
        return key

    with saved_tensors_hooks(pack, lambda k: store.pop(k)):
        y = x.pow(3)
    y.sum().backward()
    assert ember.allclose(x.grad, 3 * x * x) and not store
    with saved_tensors_hooks(lambda t: 1, lambda t: 1):
        y = x * x
    with pytest.raises(
        TypeError, match="unpack_hook expected to be a Tensor but got result of type int"
    ):
        y.sum().backward()


def test_pack_must_not_modify_its_input_and_pack_errors_propagate():
    x = ember.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its input"):
        with saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
            x * 1 * (x * 1)
    with pytest.raises(ZeroDivisionError):
        with saved_tensors_hooks(lambda t: 1 / 0, lambda t: t):
            x.exp()
    x.exp()  # the stack was popped by the failing context


def test_disable_saved_tensors_hooks_message_and_nesting():
    for g in (ember.autograd.graph,):
        with g.disable_saved_tensors_hooks("no hooks here"):
            with pytest.raises(RuntimeError, match="no hooks here"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass
            with g.disable_saved_tensors_hooks("inner message"):
                with pytest.raises(RuntimeError, match="inner message"):
                    g.save_on_cpu().__enter__()
            with pytest.raises(RuntimeError, match="no hooks here"):
                g.save_on_cpu().__enter__()
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError, match="cannot disable"):
                with g.disable_saved_tensors_hooks("cannot disable"):
                    pass
        with g.saved_tensors_hooks(lambda t: t, lambda t: t):  # enabled again
            pass


def test_disable_messages_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        g = lib.autograd.graph
        with g.disable_saved_tensors_hooks("msg A"):
            with pytest.raises(RuntimeError, match="^msg A$"):
                with g.saved_tensors_hooks(lambda t: t, lambda t: t):
                    pass


def test_save_on_cpu_gives_the_same_gradients():
    ember.manual_seed(0)
    model = ember.nn.Sequential(ember.nn.Linear(6, 8), ember.nn.Tanh(), ember.nn.Linear(8, 2))
    x = ember.randn(5, 6)
    model(x).square().sum().backward()
    ref = [p.grad.clone() for p in model.parameters()]
    model.zero_grad()
    for pin, device_type in ((False, "cuda"), (True, "cuda"), (True, "not_a_device")):
        with save_on_cpu(pin_memory=pin, device_type=device_type):
            loss = model(x).square().sum()
        loss.backward()
        for p, r in zip(model.parameters(), ref):
            assert ember.allclose(p.grad, r)
        model.zero_grad()


def test_retain_graph_unpacks_again_and_freed_graph_raises():
    x = ember.randn(3, requires_grad=True)
    log, hooks = _counting(ember)
    with hooks:
        y = x.exp()
    y.sum().backward(retain_graph=True)
    y.sum().backward()
    assert [k for k, _ in log] == ["pack", "unpack", "unpack"]
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.sum().backward()


@pytest.mark.parametrize("copy", [False, True])
def test_double_backward_through_unpacked_tensors(copy):
    x = ember.randn(4, dtype=ember.float64, requires_grad=True)
    pack = (lambda t: t.detach().clone()) if copy else (lambda t: t)
    with saved_tensors_hooks(pack, lambda t: t):
        h = x * 2  # a non-leaf input saved by the ops below
        y = h.exp() * h + x.pow(3)
    (g,) = ember.autograd.grad(y.sum(), x, create_graph=True)
    assert ember.allclose(g, 2 * (2 * x).exp() * (1 + 2 * x) + 3 * x * x)
    (g2,) = ember.autograd.grad(g.sum(), x)
    assert ember.allclose(g2, 4 * (2 * x).exp() * (2 + 2 * x) + 6 * x)


def test_hooks_are_thread_local():
    x = ember.randn(3, requires_grad=True)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append(1) or t, lambda t: t):
        th = threading.Thread(target=lambda: x.exp())
        th.start()
        th.join()
        assert seen == []
        x.exp()
    assert seen == [1]


def test_allow_mutation_on_saved_tensors():
    # As torch's: backward sees the saved values from before the in-place write; backward after
    # the block raises torch's AssertionError; the contexts do not nest.
    from ember.autograd.graph import allow_mutation_on_saved_tensors

    with allow_mutation_on_saved_tensors() as ctx:
        w = ember.tensor([0.1, 0.2, 0.3], requires_grad=True)
        s = w.clone()
        out = (s * s).sum()
        s.mul_(2)
        out.backward()
        kept = s.sin().sum()
        s.add_(1)
    assert type(ctx).__name__ == "_AllowMutationOnSavedContext"
    np.testing.assert_allclose(w.grad.numpy(), [0.2, 0.4, 0.6], rtol=1e-6)
    with pytest.raises(AssertionError, match="Trying to backward outside"):
        kept.backward()
    with allow_mutation_on_saved_tensors():
        with pytest.raises(RuntimeError, match="cannot be nested"):
            with allow_mutation_on_saved_tensors():
                pass
    # without the context the same mutation is caught by the version check
    s = ember.tensor([0.1, 0.2], requires_grad=True).clone()
    out = (s * s).sum()
    s.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()
