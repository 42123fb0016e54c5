"""vmap, session 16: index_put(accumulate=True), index_add with a batched index, index_fill and
put under vmap, against a loop over the examples and against torch."""

import numpy as np
import pytest

import ember

vmap = ember.func.vmap


def _loop(fn, *args):
    return ember.stack([fn(*(a[i] for a in args)) for i in range(args[0].shape[0])])


def _close(a, b):
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=0, atol=0)


X = ember.arange(12.0).reshape(3, 4)
V = ember.arange(6.0).reshape(3, 2) + 1
I = ember.tensor([1, 1])
BI = ember.tensor([[0, 1], [2, 2], [3, 0]])


def test_index_put_accumulate_under_vmap_equals_a_loop():
    def f(a, b):
        return a.index_put((I,), b, accumulate=True)

    def g(a, i, b):
        return a.index_put((i,), b, accumulate=True)

    _close(vmap(f)(X, V), _loop(f, X, V))
    _close(vmap(g)(X, BI, V), _loop(g, X, BI, V))
    _close(
        vmap(lambda b: ember.zeros(4).index_put((I,), b, accumulate=True))(V),
        _loop(lambda b: ember.zeros(4).index_put((I,), b, accumulate=True), V),
    )
    # in place, on a batched copy
    _close(vmap(lambda a, b: a.clone().index_put_((I,), b, accumulate=True))(X, V), _loop(f, X, V))
    # 2-d self, two index tensors, a broadcast value, nested vmap
    x = ember.arange(2 * 3 * 3 * 4 * 5.0).reshape(2, 3, 3, 4, 5)
    rows, cols = ember.tensor([0, 2, 0]), ember.tensor([1, 1, 1])

    def h(a):
        return a.index_put((rows, cols), ember.ones(5), accumulate=True)

    _close(vmap(vmap(h))(x), ember.stack([_loop(h, x[i]) for i in range(2)]))


def test_index_put_accumulate_in_place_on_an_unbatched_self_raises():
    with pytest.raises(RuntimeError, match="vmap: .*index_put_.*is not possible"):
        vmap(lambda b: ember.zeros(4).index_put_((I,), b, accumulate=True))(V)


def test_index_add_with_a_batched_index_equals_a_loop():
    def f(a, i, b):
        return a.index_add(0, i, b, alpha=2)

    _close(vmap(f)(X, BI, V), _loop(f, X, BI, V))
    x3 = ember.arange(24.0).reshape(3, 2, 4)

    def g(a, i):
        return a.index_add(1, i, ember.ones(2, 2))

    _close(vmap(g)(x3, BI), _loop(g, x3, BI))
    _close(
        vmap(lambda a, i, b: a.clone().index_add_(0, i, b))(X, BI, V),
        _loop(lambda a, i, b: a.index_add(0, i, b), X, BI, V),
    )


def test_index_fill_and_put_under_vmap_equal_a_loop():
    _close(
        vmap(lambda a: a.index_fill(0, I, -1.0))(X), _loop(lambda a: a.index_fill(0, I, -1.0), X)
    )
    _close(
        vmap(lambda a: a.clone().index_fill_(0, I, -1.0))(X),
        _loop(lambda a: a.index_fill(0, I, -1.0), X),
    )
    for acc in (False, True):

        def f(a, b, acc=acc):
            return a.put(I, b, accumulate=acc)

        _close(vmap(f)(X, V), _loop(f, X, V))
        _close(
            vmap(lambda a, i, b: a.put(i, b, accumulate=True))(X, BI, V),
            _loop(lambda a, i, b: a.put(i, b, accumulate=True), X, BI, V),
        )
    x = ember.arange(24.0).reshape(3, 2, 4)
    _close(
        vmap(lambda a: a.put(ember.tensor([-1, 0, 7]), ember.ones(3), accumulate=True))(x),
        _loop(lambda a: a.put(ember.tensor([-1, 0, 7]), ember.ones(3), accumulate=True), x),
    )


def test_indexed_accumulation_under_vmap_against_torch():
    torch = pytest.importorskip("torch")
    out = []
    for T in (torch, ember):
        x = T.arange(12.0).reshape(3, 4)
        v = T.arange(6.0).reshape(3, 2) + 1
        i, bi = T.tensor([1, 1]), T.tensor([[0, 1], [2, 2], [3, 0]])
        vm = T.func.vmap
        out.append(
            [
                vm(lambda a, b: a.index_put((i,), b, accumulate=True))(x, v),
                vm(lambda a, j, b: a.index_put((j,), b, accumulate=True))(x, bi, v),
                vm(lambda b: T.zeros(4).index_put((i,), b, accumulate=True))(v),
                vm(lambda a, j, b: a.index_add(0, j, b))(x, bi, v),
                vm(lambda a: a.index_fill(0, i, -1.0))(x),
                vm(lambda a, b: a.put(i, b, accumulate=True))(x, v),
            ]
        )
    for a, b in zip(*out):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


_INPLACE = {
    "add_": lambda b: ember.zeros(2).add_(b),
    "atan2_": lambda b: ember.zeros(2).atan2_(b),
    "mul_": lambda b: ember.zeros(2).mul_(b),
    "copy_": lambda b: ember.zeros(2).copy_(b),
    "masked_fill_": lambda b: ember.ones(2).masked_fill_(b > 2, 0.0),
    "clamp_": lambda b: ember.zeros(2).clamp_(b),
    "pow_": lambda b: ember.ones(2).pow_(b),
    "addcmul_": lambda b: ember.ones(2).addcmul_(b, b),
    "fill_": lambda b: ember.ones(2).fill_(b.sum()),
}


def test_inplace_on_an_unbatched_self_raises_torchs_text():
    v = ember.ones(3, 2) + 1
    shape = "output with shape [2] doesn't match the broadcast shape [3, 2]"
    arith = "vmap: inplace arithmetic(self, *extra_args) is not possible"
    for name, f in _INPLACE.items():
        with pytest.raises(RuntimeError) as info:
            vmap(f)(v)
        text = str(info.value)
        if name in ("add_", "atan2_"):
            assert text == shape
        elif name in ("mul_", "copy_", "masked_fill_"):
            assert text.startswith(arith) and text.endswith("please file a bug report instead.")
        elif name == "fill_":
            assert text.startswith("vmap: fill_(self, *extra_args)") and "in a vmap" in text
        else:
            assert text.startswith(f"vmap: aten::{name}(self") and "over at level 1." in text


def test_inplace_errors_against_torch():
    torch = pytest.importorskip("torch")
    import warnings

    warnings.filterwarnings("ignore", message="There is a performance drop")
    texts = {}
    for T in (torch, ember):
        v = T.ones(3, 2) + 1
        cases = {
            "add_": lambda b, T=T: T.zeros(2).add_(b),
            "sub_": lambda b, T=T: T.zeros(2).sub_(b),
            "clamp_": lambda b, T=T: T.zeros(2).clamp_(b),
            "lerp_": lambda b, T=T: T.ones(2).lerp_(b, 0.5),
            "fill_": lambda b, T=T: T.ones(2).fill_(b.sum()),
            "index_put_": lambda b, T=T: T.zeros(4).index_put_(
                (T.tensor([1, 1]),), b, accumulate=True
            ),
            "index_add_": lambda b, T=T: T.zeros(2).index_add_(0, T.tensor([0, 1]), b),
        }
        out = {}
        for name, f in cases.items():
            with pytest.raises(RuntimeError) as info:
                T.func.vmap(f)(v)
            out[name] = str(info.value)
        texts[T.__name__] = out
    assert texts["ember"] == texts["torch"]
