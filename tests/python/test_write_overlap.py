"""Writing into a tensor whose elements share memory (an expanded tensor): elementwise in-place
ops, copy_ and out= raise torch's RuntimeError instead of writing each element several times;
fills and index fills work, as in torch."""

import pytest

import ember

MESSAGE = "more than one element of the written-to tensor refers to a single memory location"

REFUSED = {
    "add_": lambda t, M: t.add_(1),
    "mul_": lambda t, M: t.mul_(2),
    "exp_": lambda t, M: t.exp_(),
    "relu_": lambda t, M: t.relu_(),
    "sigmoid_": lambda t, M: t.sigmoid_(),
    "clamp_": lambda t, M: t.clamp_(0, 1),
    "addcmul_": lambda t, M: t.addcmul_(M.ones(2, 3), M.ones(2, 3)),
    "lerp_": lambda t, M: t.lerp_(M.ones(2, 3), 0.5),
    "copy_": lambda t, M: t.copy_(M.ones(2, 3)),
    "out=": lambda t, M: M.add(M.ones(2, 3), 1, out=t),
}
ALLOWED = {
    "fill_": (lambda t, M: t.fill_(1), [[1.0] * 3] * 2),
    "zero_": (lambda t, M: t.zero_(), [[0.0] * 3] * 2),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused(name):
    t = ember.zeros(1, 3).expand(2, 3)
    with pytest.raises(RuntimeError, match=MESSAGE):
        REFUSED[name](t, ember)
    assert t.tolist() == [[0.0] * 3] * 2  # nothing was written
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError, match=MESSAGE):
        REFUSED[name](torch.zeros(1, 3).expand(2, 3), torch)


@pytest.mark.parametrize("name", sorted(ALLOWED))
def test_allowed(name):
    fn, want = ALLOWED[name]
    t = ember.zeros(1, 3).expand(2, 3)
    fn(t, ember)
    assert t.tolist() == want


def test_a_broadcast_input_is_fine():
    t = ember.zeros(2, 3)
    t.add_(ember.ones(1, 3).expand(2, 3))
    assert t.tolist() == [[1.0] * 3] * 2
