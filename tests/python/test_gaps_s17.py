"""Gaps found in session 17, each checked against torch 2.13's behaviour on the CPU."""

import pytest

import ember
import ember.nn.functional as F

_STEPS = "params and state_steps"


@pytest.mark.parametrize(
    "name, foreach, names, xla",
    [
        ("Adam", None, _STEPS, True),
        ("Adam", True, _STEPS, False),
        ("AdamW", False, _STEPS, True),
        ("Adamax", True, _STEPS, False),
        ("Adadelta", None, _STEPS, False),
        ("RMSprop", True, _STEPS, True),
        ("Rprop", True, _STEPS, True),
        ("RAdam", None, _STEPS, True),
        ("NAdam", None, "params, mu_products and state_steps", True),
        ("NAdam", True, "params, mu_products, and state_steps", False),
        ("ASGD", True, "params, mus, etas, and state_steps", False),
    ],
)
def test_capturable_on_cpu_refused_at_step(name, foreach, names, xla):
    p = ember.nn.Parameter(ember.ones(3))
    opt = getattr(ember.optim, name)([p], capturable=True, foreach=foreach)
    opt.step()  # no gradient yet: nothing to update, nothing checked (as torch)
    p.grad = ember.ones(3)
    with pytest.raises(AssertionError) as info:
        opt.step()
    devices = "['cuda', 'xpu', 'hpu', 'privateuseone'" + (", 'xla']." if xla else "].")
    assert str(info.value) == f"If capturable=True, {names} must be on supported devices: {devices}"
    assert ember.equal(p.detach(), ember.ones(3))


@pytest.fixture(scope="module")
def qkv():
    q = ember.randn(2, 3, 4, 8)
    k = ember.randn(2, 3, 5, 8)
    return q, k, ember.randn(2, 3, 5, 8)


@pytest.mark.parametrize(
    "mask, error, message",
    [
        (lambda: ember.randn(5), IndexError, "Dimension out of range (expected to be in range of"),
        (lambda: ember.ones(5, dtype=ember.bool), IndexError, "Dimension out of range"),
        (lambda: ember.tensor(0.0), IndexError, "Dimension specified as -2 but tensor has no"),
        (
            lambda: ember.randn(1, 2, 3, 4, 5),
            RuntimeError,
            "output with shape [2, 3, 4, 5] doesn't match the broadcast shape [1, 2, 3, 4, 5]",
        ),
        (
            lambda: ember.ones(4, 5, dtype=ember.int64),
            RuntimeError,
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            "attn_mask.dtype: long int and  query.dtype: float instead.",
        ),
        (lambda: ember.zeros(4, 5, dtype=ember.float64), RuntimeError, "attn_mask.dtype: double"),
    ],
)
def test_sdpa_refuses_masks_as_torch(qkv, mask, error, message):
    with pytest.raises(error) as info:
        F.scaled_dot_product_attention(*qkv, attn_mask=mask())
    assert message in str(info.value)


def test_sdpa_float32_mask_with_half_query():
    torch = pytest.importorskip("torch")
    q = ember.randn(1, 2, 3, 4).to(ember.bfloat16)
    mask = ember.randn(3, 3)
    out = F.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    tq = torch.from_numpy(q.float().numpy()).bfloat16()
    ref = torch.nn.functional.scaled_dot_product_attention(
        tq, tq, tq, attn_mask=torch.from_numpy(mask.numpy())
    )
    assert out.dtype == ember.bfloat16
    assert ember.allclose(out.float(), ember.from_numpy(ref.float().numpy()), atol=2e-2)
