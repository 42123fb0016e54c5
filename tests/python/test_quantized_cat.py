"""cat of quantized tensors (torch's QuantizedCPU cat): the dispatcher takes a list argument's
quantized tensors to the integer path (Note [Quantized tensors]), the result has the first
tensor's scale and zero point, and a tensor with other parameters is requantized to them (with
torch's warning). FloatFunctional.cat and QFunctional.cat on top. Checked against numbers
computed here and, where torch is installed, against torch."""

import warnings

import numpy as np
import pytest
from _docs_check import _libs


def _q(T, values, scale, zp, dtype="quint8"):
    return T.quantize_per_tensor(T.tensor(values), scale, zp, getattr(T, dtype))


def _desc(q):
    return (
        str(q.dtype).split(".")[-1],
        tuple(q.shape),
        q.int_repr().tolist(),
        round(q.q_scale(), 6),
        q.q_zero_point(),
    )


def _each(case):
    results = [case(T) for T in _libs()]
    for r in results[1:]:
        assert r == results[0]
    return results[0]


A = [[0.1, -0.5, 1.2], [0.7, 0.0, -0.2]]
B = [[2.0, -1.0, 0.3], [0.4, 0.5, -0.6]]


def test_cat_of_shared_parameters_concatenates_the_integers():
    def case(T):
        a, b = _q(T, A, 0.1, 3), _q(T, B, 0.1, 3)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no requantization warning here
            out = T.cat([a, b])
        assert out.is_quantized and out.qscheme() == T.per_tensor_affine
        return _desc(out), _desc(T.cat([a, b], dim=1)), _desc(T.cat((a, b), -1))

    first = _each(case)
    a = np.clip(np.round(np.array(A) / 0.1) + 3, 0, 255)
    b = np.clip(np.round(np.array(B) / 0.1) + 3, 0, 255)
    assert first[0] == ("quint8", (4, 3), np.concatenate([a, b]).tolist(), 0.1, 3)
    assert first[1][2] == np.concatenate([a, b], 1).tolist()


def test_cat_requantizes_to_the_first_tensors_parameters():
    def case(T):
        a, b = _q(T, A, 0.1, 3), _q(T, B, 0.2, 5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = T.cat([a, b], 1)
        assert any("same quantization parameters" in str(x.message) for x in w)
        # b's part is b dequantized and quantized again with a's parameters
        again = T.quantize_per_tensor(b.dequantize(), 0.1, 3, T.quint8)
        assert [row[3:] for row in out.int_repr().tolist()] == again.int_repr().tolist()
        return _desc(out)

    out = _each(case)
    assert out[3:] == (0.1, 3)
    assert [row[:3] for row in out[2]] == np.clip(np.round(np.array(A) / 0.1) + 3, 0, 255).tolist()


def test_cat_of_qint8_and_stack():
    def case(T):
        a, b = _q(T, A, 0.05, 0, "qint8"), _q(T, B, 0.05, 0, "qint8")
        return _desc(T.cat([a, b, a])), _desc(T.stack([a, b]))

    cat, stack = _each(case)
    assert cat[1] == (6, 3) and cat[0] == "qint8"
    assert stack[1] == (2, 2, 3)


@pytest.mark.parametrize(
    "make,exc,text",
    [
        (lambda T: [_q(T, A, 0.1, 3), T.tensor(A)], NotImplementedError, "aten::qscheme"),
        (lambda T: [T.tensor(A), _q(T, A, 0.1, 3)], NotImplementedError, "Could not run"),
        (
            lambda T: [_q(T, A, 0.1, 3), _q(T, A, 0.1, 3, "qint8")],
            RuntimeError,
            "All dtypes must be the same.",
        ),
        (
            lambda T: (
                [
                    T.quantize_per_channel(
                        T.tensor(A), T.tensor([0.1, 0.2]), T.tensor([0, 0]), 0, T.qint8
                    )
                ]
                * 2
            ),
            RuntimeError,
            "Only per-tensor quantization is supported in 'cat'!",
        ),
    ],
)
def test_cat_errors(make, exc, text):
    for T in _libs():
        with pytest.raises(exc, match=text.replace("(", r"\(").replace(".", r"\.")):
            T.cat(make(T))


def test_float_functional_and_qfunctional_cat():
    def case(T):
        nnq = T.ao.nn.quantized
        a, b = _q(T, A, 0.1, 3), _q(T, B, 0.2, 5)
        ff = nnq.FloatFunctional()
        float_out = ff.cat([T.tensor(A), T.tensor(B)], dim=0)  # float inputs, observed by Identity
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            q_out = ff.cat([a, a], dim=1)
        qf = nnq.QFunctional()
        qf.scale, qf.zero_point = 0.25, 7
        return (
            np.round(float_out.numpy(), 6).tolist(),
            _desc(q_out),
            _desc(qf.cat([a, b], dim=0)),
            _desc(qf.cat([a, b], dim=1)),
        )

    f, q, qf0, qf1 = _each(case)
    assert f == np.round(np.concatenate([np.float32(A), np.float32(B)]), 6).tolist()
    assert q[1] == (2, 6) and q[3:] == (0.1, 3)
    assert qf0[3:] == (0.25, 7) and qf0[1] == (4, 3)
    assert qf1[1] == (2, 6)
