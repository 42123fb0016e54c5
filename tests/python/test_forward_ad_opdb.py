"""Forward-mode AD over the op table (op_db) against torch: for every op with float64 samples,
the tangents forward_ad gives equal torch.func.jvp's, and an op torch has no forward formula for
raises torch's NotImplementedError text in ember too."""

import numpy as np
import pytest
import test_ops as TO
from op_db import OP_DB
from op_db_core import is_float

import ember
import ember.autograd.forward_ad as fwAD


def _samples(op):
    def usable(s):
        floats = [t for t in TO.tensors_of(s) if is_float(t.dtype)]
        return s.grad_ok and floats and all(t.values.size for t in floats)

    return [s for s in op.samples("float64") if usable(s)][:2]


FLOAT_OPS = [
    pytest.param(op, id=op.name) for op in OP_DB if "float64" in op.dtypes and _samples(op)
]


def _ember_tangents(op, sample, tangents):
    fn, inputs = TO.differentiable_call(ember, op, sample)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(x.detach(), t) for x, t in zip(inputs, tangents)]
        return [fwAD.unpack_dual(o).tangent for o in fn(*duals)]


@pytest.mark.parametrize("op", FLOAT_OPS)
def test_forward_ad_matches_torch_jvp(op, torch):
    for sample in _samples(op):
        fn, inputs = TO.differentiable_call(torch, op, sample)
        rng = np.random.default_rng(1)
        tans = [rng.standard_normal(tuple(x.shape)) for x in inputs]
        try:
            outs = fn(*inputs)
            _, expected = torch.func.jvp(
                fn, tuple(x.detach() for x in inputs), tuple(torch.tensor(t) for t in tans)
            )
        except NotImplementedError as e:
            with pytest.raises(NotImplementedError) as info:
                _ember_tangents(op, sample, [ember.tensor(t) for t in tans])
            assert str(info.value) == str(e)
            return
        except RuntimeError as e:
            if "non-empty output" in str(e):  # no floating output: nothing to compare
                continue
            raise
        got = _ember_tangents(op, sample, [ember.tensor(t) for t in tans])
        for g, r, o in zip(got, expected, outs):
            if g is None:  # torch's forward_ad gives none either where its output has none
                assert not o.requires_grad or not r.any(), (op.name, sample)
                continue
            assert tuple(g.shape) == tuple(r.shape), (op.name, sample)
            np.testing.assert_allclose(
                g.numpy(), r.numpy(), rtol=1e-7, atol=1e-7, err_msg=f"{op.name} {sample}"
            )


def test_unsupported_ops_raise_torchs_text(torch):
    def run(M, fn):
        x = M.tensor([[1.5, -2.0], [0.5, 3.0]], dtype=M.float64)
        with M.autograd.forward_ad.dual_level():
            d = M.autograd.forward_ad.make_dual(x, M.ones_like(x))
            with pytest.raises(NotImplementedError) as info:
                fn(M, d)
        return str(info.value)

    for fn in (
        lambda M, d: M.floor_divide(d, 2.0),
        lambda M, d: d // 2.0,
        lambda M, d: M.unique(d),
        lambda M, d: d.unique(sorted=False),
        lambda M, d: M.unique_consecutive(d),
    ):
        assert run(ember, fn) == run(torch, fn)
    # an integer floor division beside a level is untouched
    with fwAD.dual_level():
        assert ember.floor_divide(ember.tensor([7]), 2).tolist() == [3]


def test_complex_intermediates_never_give_a_silent_zero_tangent(torch):
    # ember's forward AD carries real tangents only: a complex result of a dual input raises
    # torch's NotImplementedError text rather than leaving a zero tangent downstream; once
    # complex tangents are carried, the value must be torch's
    x = np.random.default_rng(3).standard_normal(16)
    for fn in (
        lambda M, z: z.to(M.complex128).real * z,
        lambda M, z: M.stft(z, 4, return_complex=True).abs(),
        lambda M, z: M.view_as_complex(z.reshape(8, 2)).abs(),
    ):
        _, expected = torch.func.jvp(lambda z: fn(torch, z), (torch.tensor(x),), (torch.ones(16),))
        try:
            _, got = ember.func.jvp(lambda z: fn(ember, z), (ember.tensor(x),), (ember.ones(16),))
        except NotImplementedError as e:
            assert str(e).startswith("Trying to use forward AD with ")
            continue
        np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-9, atol=1e-12)
