"""ember.masked's reductions and normalizations with mask=, compared with torch.masked.

(MaskedTensor makes a Tensor subclass and installs the subclass dispatch mode: its checks run
in test_nested_s18.py's subprocess.)"""

import math
import warnings

import numpy as np
import pytest

import ember

_X = [[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]]
_M = [[True, False, True], [False, False, False]]  # row 1 fully masked out


def _calls(t, x, m):
    """(name, call) pairs over t.masked (t: torch or ember)."""
    M = t.masked
    xi = (x * 2).int()
    return [
        ("sum", lambda: M.sum(x, 1, mask=m)),
        ("sum all", lambda: M.sum(x, mask=m)),
        (
            "sum keepdim f64",
            lambda: M.sum(x, 1, keepdim=True, dtype=t.float64, mask=m),
        ),
        ("sum int", lambda: M.sum(xi, 1, mask=m)),
        ("sum row mask", lambda: M.sum(x, 1, mask=m[0])),
        ("mean", lambda: M.mean(x, 1, mask=m)),
        ("mean dims", lambda: M.mean(x, (0, 1), mask=m)),
        ("amax", lambda: M.amax(x, 1, mask=m)),
        ("amin", lambda: M.amin(x, 0, mask=m)),
        ("amax int", lambda: M.amax(xi, 1, mask=m)),
        ("prod", lambda: M.prod(x, 1, mask=m)),
        ("argmax", lambda: M.argmax(x, 1, mask=m)),
        ("argmin", lambda: M.argmin(x, 1, mask=m)),
        ("logsumexp", lambda: M.logsumexp(x, 1, mask=m)),
        ("norm", lambda: M.norm(x, 2.0, 1, mask=m)),
        ("norm inf", lambda: M.norm(x, float("inf"), 1, mask=m)),
        ("var", lambda: M.var(x, 1, unbiased=False, mask=m)),
        ("var default", lambda: M.var(x, 1, mask=m)),
        ("std correction", lambda: M.std(x, 1, correction=0, mask=m)),
        ("softmax", lambda: M.softmax(x, 1, mask=m)),
        ("log_softmax", lambda: M.log_softmax(x, 1, mask=m)),
        ("softmin", lambda: M.softmin(x, -1, mask=m)),
        ("cumsum", lambda: M.cumsum(x, 1, mask=m)),
        ("cumprod", lambda: M.cumprod(x, 1, mask=m)),
        ("normalize", lambda: M.normalize(x, 2.0, 1, mask=m)),
        ("median", lambda: M.median(x, 1, mask=m)),
        ("no mask", lambda: M.sum(x, 1)),
        ("logaddexp", lambda: M.logaddexp(x, -x, input_mask=m, other_mask=m)),
        ("mean int", lambda: M.mean(xi, 1, mask=m)),
        ("bad dim", lambda: M.sum(x, 2, mask=m)),
        ("repeated dim", lambda: M.sum(x, (1, 1), mask=m)),
        ("big mask", lambda: M.sum(x, 1, mask=m[None])),
    ]


def _outcome(call):
    try:
        r = call()
    except Exception as e:  # noqa: BLE001 - the class and text are what is compared
        return type(e).__name__, str(e)
    return str(r.dtype).split(".")[-1], r.detach().numpy()


def test_masked_ops_match_torch():
    torch = pytest.importorskip("torch")
    ours = _calls(ember, ember.tensor(_X), ember.tensor(_M))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = _calls(torch, torch.tensor(_X), torch.tensor(_M))
        pairs = [(name, _outcome(a), _outcome(b)) for (name, a), (_, b) in zip(ours, theirs)]
    for name, got, want in pairs:
        assert got[0] == want[0], (name, got, want)
        if isinstance(want[1], str):
            assert got[1] == want[1], name
        else:
            np.testing.assert_allclose(got[1], want[1], rtol=1e-6, equal_nan=True, err_msg=name)


def test_masked_gradients_match_torch():
    torch = pytest.importorskip("torch")
    grads = []
    for m in (ember, torch):
        x = m.tensor(_X, requires_grad=True)
        mask = m.tensor(_M)
        m.masked.softmax(x, 1, mask=mask).nan_to_num().mul(m.tensor(_X)).sum().backward()
        m.masked.sum(x, 0, mask=mask).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-6)


def test_masked_ops_without_torch():
    x, m = ember.tensor(_X), ember.tensor(_M)
    assert ember.masked.sum(x, 1, mask=m).tolist() == [4.0, 0.0]
    assert ember.masked.amax(x, 1, mask=m).tolist() == [3.0, -math.inf]
    mean = ember.masked.mean(x, 1, mask=m)
    assert mean[0].item() == 2.0 and math.isnan(mean[1].item())
    sm = ember.masked.softmax(x, 1, mask=m)
    assert sm[0, 1].item() == 0.0 and abs(sm[0].sum().item() - 1) < 1e-6
    assert ember.masked.sum(x.int(), 1, mask=m).dtype == ember.int64
    with pytest.raises(ValueError, match="Could not infer output dtype"):
        ember.masked.mean(x.int(), 1, mask=m)
