"""User code that checks itself with torch.testing: a hand-written LayerNorm, attention and
GELU compared with the built-ins through assert_close (default and explicit tolerances,
check_dtype=False, equal_nan, nested dicts and lists of tensors, msg as a string and as a
callable), the failures' messages as a test suite would print them, and make_tensor inputs."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.testing import assert_close


def my_layer_norm(x, weight, bias, eps=1e-5):
    mu = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - mu) / torch.sqrt(var + eps) * weight + bias


def my_attention(q, k, v, causal=False):
    s = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if causal:
        n = s.shape[-1]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return s.softmax(-1) @ v


def my_gelu(x):
    return 0.5 * x * (1 + torch.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def check(name, fn):
    try:
        fn()
        print(name, "ok")
    except AssertionError as e:
        lines = [line for line in str(e).splitlines() if line]
        print(name, "FAIL", " | ".join(lines))
    except (TypeError, ValueError) as e:
        print(name, type(e).__name__, e)


def main():
    x = torch.sin(torch.arange(2 * 3 * 8, dtype=torch.float32) * 0.37).view(2, 3, 8)
    ln = nn.LayerNorm(8)
    with torch.no_grad():
        ln.weight.copy_(torch.linspace(0.5, 1.5, 8))
        ln.bias.copy_(torch.linspace(-0.1, 0.1, 8))
    check("layer_norm", lambda: assert_close(my_layer_norm(x, ln.weight, ln.bias), ln(x)))
    q, k, v = x, x.flip(-1), x * 0.5
    check(
        "attention",
        lambda: assert_close(
            my_attention(q, k, v, True), F.scaled_dot_product_attention(q, k, v, is_causal=True)
        ),
    )
    check("gelu_tanh", lambda: assert_close(my_gelu(x), F.gelu(x, approximate="tanh")))
    check("gelu_exact", lambda: assert_close(my_gelu(x), F.gelu(x)))
    check("gelu_loose", lambda: assert_close(my_gelu(x), F.gelu(x), atol=1e-3, rtol=0))
    check("dtype", lambda: assert_close(x.double(), x))
    check("dtype_off", lambda: assert_close(x.double(), x, check_dtype=False))
    check("int_exact", lambda: assert_close(torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])))
    check("bool", lambda: assert_close(torch.tensor([True, False]), torch.tensor([True, True])))
    check(
        "nan",
        lambda: assert_close(torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")])),
    )
    check(
        "nan_ok",
        lambda: assert_close(
            torch.tensor([1.0, float("nan")]), torch.tensor([1.0, float("nan")]), equal_nan=True
        ),
    )
    check("shape", lambda: assert_close(torch.zeros(2, 3), torch.zeros(3, 2)))
    check(
        "nested",
        lambda: assert_close({"a": [torch.ones(2), 1.0]}, {"a": [torch.ones(2), 1.0 + 1e-9]}),
    )
    check(
        "nested_fail",
        lambda: assert_close({"w": {"b": torch.ones(2)}}, {"w": {"b": torch.tensor([1.0, 1.5])}}),
    )
    check("keys", lambda: assert_close({"a": torch.ones(1)}, {"b": torch.ones(1)}))
    check("length", lambda: assert_close([torch.ones(1)], [torch.ones(1), torch.ones(1)]))
    check("scalar", lambda: assert_close(0.1 + 0.2, 0.3))
    check("scalar_fail", lambda: assert_close(1.0, 1.1))
    check("msg_str", lambda: assert_close(torch.ones(2), torch.zeros(2), msg="weights drifted"))
    check(
        "msg_fn",
        lambda: assert_close(
            torch.ones(2), torch.zeros(2), msg=lambda m: f"[epoch 3] {m.splitlines()[0]}"
        ),
    )
    check("rtol_only", lambda: assert_close(torch.ones(2), torch.ones(2), rtol=1e-3))
    check("requires_grad", lambda: assert_close(torch.ones(2, requires_grad=True), torch.ones(2)))
    check(
        "stride", lambda: assert_close(torch.zeros(2, 3).t(), torch.zeros(3, 2), check_stride=True)
    )
    check(
        "big_tensor",
        lambda: assert_close(
            torch.arange(100.0).view(10, 10),
            torch.arange(100.0).view(10, 10) + (torch.arange(100.0).view(10, 10) > 90).float(),
        ),
    )
    check(
        "close_values",
        lambda: torch.testing.assert_close(torch.tensor(1.0), torch.tensor(1.0 + 1e-6)),
    )

    # gradient check of the hand-written norm against autograd of the module
    xg = x.clone().requires_grad_(True)
    my_layer_norm(xg, ln.weight, ln.bias).pow(2).sum().backward()
    g_mine = xg.grad.clone()
    xg.grad = None
    ln(xg).pow(2).sum().backward()
    check("ln_grad", lambda: assert_close(g_mine, xg.grad, atol=1e-5, rtol=1e-4))

    t = torch.testing.make_tensor((3, 4), dtype=torch.float32, device="cpu", low=-2, high=2)
    i = torch.testing.make_tensor((5,), dtype=torch.int64, device="cpu", low=0, high=3)
    nz = torch.testing.make_tensor((6,), dtype=torch.float32, device="cpu", exclude_zero=True)
    print(
        "make_tensor",
        tuple(t.shape),
        t.dtype,
        bool(t.min() >= -2),
        bool(t.max() <= 2),
        bool(i.max() < 3),
        bool((nz != 0).all()),
    )
    nc = torch.testing.make_tensor((3, 4), dtype=torch.float32, device="cpu", noncontiguous=True)
    print("noncontiguous", nc.is_contiguous(), tuple(nc.shape))
    check("roundtrip", lambda: assert_close(my_gelu(t), F.gelu(t, approximate="tanh")))


if __name__ == "__main__":
    main()
