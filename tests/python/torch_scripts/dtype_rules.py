# ruff: noqa: E501
"""The dtype rules programs lean on without thinking: promotion between tensors, Python
numbers and 0-dim tensors, integer division and rounding modes, remainder signs, overflow
wrapping of small ints, half/bfloat16 precision and casts, bool arithmetic, bit operations,
result_type / promote_types / can_cast, set_default_dtype, and the errors for lossy in-place ops."""

import torch


def name(dt):
    return str(dt).split(".")[1]


def main():
    kinds = [
        torch.bool,
        torch.uint8,
        torch.int8,
        torch.int32,
        torch.int64,
        torch.float16,
        torch.bfloat16,
        torch.float32,
        torch.float64,
        torch.complex64,
    ]
    table = []
    for a in kinds:
        row = []
        for b in kinds:
            row.append(name(torch.promote_types(a, b)))
        table.append(" ".join(row))
    for a, row in zip(kinds, table):
        print(f"promote_{name(a)} {row}")
    i8 = torch.tensor([100, -100], dtype=torch.int8)
    print(
        f"scalar_mix {name((i8 + 1).dtype)} {name((i8 + 1.5).dtype)} {name((i8 * True).dtype)} {name((torch.ones(2, dtype=torch.float16) + 2.0).dtype)}"
    )
    print(
        f"zero_dim {name((i8 + torch.tensor(5)).dtype)} {name((i8 + torch.tensor(5.0)).dtype)} {name((torch.ones(2, dtype=torch.float16) * torch.tensor(2.0, dtype=torch.float64)).dtype)}"
    )
    print(
        f"complex_scalar {name((torch.ones(2) * 1j).dtype)} {name((torch.ones(2, dtype=torch.float64) + 1j).dtype)}"
    )
    print(
        f"result_type {name(torch.result_type(i8, 2.0))} {name(torch.result_type(torch.tensor(1), torch.tensor([1], dtype=torch.uint8)))} can_cast {torch.can_cast(torch.float32, torch.int32)} {torch.can_cast(torch.int32, torch.float16)}"
    )

    print(
        f"overflow_int8 {(i8 + i8).tolist()} {(i8 * 2).tolist()} uint8_neg {(torch.tensor([3], dtype=torch.uint8) - 5).tolist()}"
    )
    a = torch.tensor([7, -7, 7, -7])
    b = torch.tensor([2, 2, -2, -2])
    print(f"true_div {(a / b).tolist()} {name((a / b).dtype)}")
    print(
        f"floor_div {(a // b).tolist()} trunc {torch.div(a, b, rounding_mode='trunc').tolist()} floor {torch.div(a, b, rounding_mode='floor').tolist()}"
    )
    print(
        f"remainder {(a % b).tolist()} fmod {torch.fmod(a, b).tolist()} float_rem {(torch.tensor([-7.5]) % 2).tolist()}"
    )
    try:
        torch.tensor([1, 2]) // torch.tensor([0, 1])
    except RuntimeError as e:
        print(f"int_div_zero {e}")
    print(f"float_div_zero {(torch.tensor([1.0, -1.0, 0.0]) / 0).tolist()}")

    h = torch.tensor([1.0, 2048.0, 65504.0, 1e-8], dtype=torch.float16)
    print(f"half {h.tolist()} plus1 {(h + 1).tolist()} overflow {(h * 2).tolist()}")
    bf = torch.tensor([1.0, 256.0, 1e38, 3.14159], dtype=torch.bfloat16)
    print(f"bf16 {bf.tolist()} plus1 {(bf + 1).tolist()}")
    print(
        f"casts {torch.tensor([2.7, -2.7, 300.0]).to(torch.int32).tolist()} {torch.tensor([2.5, 3.5, -2.5]).round().tolist()} {torch.tensor([1.2345, 2.5678]).round(decimals=2).tolist()}"
    )
    print(
        f"to_uint8 {torch.tensor([255.0, 0.0, 1.9]).to(torch.uint8).tolist()} bool_cast {torch.tensor([0.0, 0.1, -2.0]).bool().tolist()}"
    )
    m = torch.tensor([True, False, True])
    print(
        f"bool_math {name(m.sum().dtype)} {m.sum().item()} {(m + m).tolist()} {name((m + m).dtype)} {m.float().mean().item():.4f} {(~m).tolist()}"
    )
    print(f"int_mean_error {type(torch.arange(3).float().mean().item()).__name__}")
    try:
        torch.arange(3).mean()
    except RuntimeError as e:
        print(f"mean_int {str(e)[:70]}")
    x = torch.tensor([12, 10, 7], dtype=torch.int32)
    print(
        f"bits {(x & 6).tolist()} {(x | 1).tolist()} {(x ^ 3).tolist()} {(x << 2).tolist()} {(x >> 1).tolist()} {(~x).tolist()}"
    )
    print(
        f"sum_dtypes {name(torch.ones(3, dtype=torch.int8).sum().dtype)} {name(torch.ones(3, dtype=torch.float16).sum().dtype)} {name(torch.ones(3, dtype=torch.int32).cumsum(0).dtype)} {name(torch.ones(3, dtype=torch.uint8).prod().dtype)}"
    )
    print(
        f"sum_dtype_arg {torch.ones(3, dtype=torch.int8).sum(dtype=torch.float32).item()} {name(torch.ones(2).sum(dtype=torch.float64).dtype)}"
    )
    y = torch.zeros(3, dtype=torch.int64)
    try:
        y += 1.5
    except RuntimeError as e:
        print(f"inplace_error {type(e).__name__} {str(e)[str(e).index('result type') :]}")
    f = torch.zeros(2)
    f += torch.tensor([1, 2])
    print(f"inplace_ok {f.tolist()} {name(f.dtype)}")
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    print(
        f"default64 {name(torch.tensor([1.5]).dtype)} {name(torch.arange(3.0).dtype)} {name(torch.zeros(1).dtype)} {name(torch.tensor([1]).dtype)} {name(torch.tensor(1j).dtype)}"
    )
    torch.set_default_dtype(old)
    print(
        f"default_back {name(torch.tensor(1.0).dtype)} {name(torch.tensor([1.0]).to(torch.float16).float().dtype)}"
    )
    print(
        f"iinfo {torch.iinfo(torch.int16).max} {torch.finfo(torch.bfloat16).eps} {torch.finfo(torch.float16).max} {torch.finfo(torch.float32).tiny}"
    )
    print(
        f"is_fp {torch.is_floating_point(torch.ones(1, dtype=torch.bfloat16))} {torch.ones(1, dtype=torch.int8).is_signed()} {torch.ones(1, dtype=torch.uint8).is_signed()} {torch.float16.is_floating_point} {torch.int32.itemsize}"
    )
    print(
        f"where_promote {name(torch.where(m, torch.tensor([1, 2, 3]), 0.5).dtype)} clamp {name(torch.arange(3).clamp(0.5, 1.5).dtype)} {torch.arange(3).clamp(min=1).tolist()}"
    )
    print(
        f"pow_int {(torch.tensor([2, 3]) ** 2).tolist()} {name((torch.tensor([2]) ** 0.5).dtype)} {name((2 ** torch.tensor([1, 2])).dtype)} {name((2.0 ** torch.tensor([1, 2])).dtype)}"
    )


if __name__ == "__main__":
    main()
