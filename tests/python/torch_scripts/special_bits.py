# ruff: noqa: E501
"""Numerics that scientific and data code leans on: torch.special (gammaln, digamma, polygamma,
multigammaln, erf/erfc/erfinv/erfcx, ndtr/ndtri/log_ndtr, i0/i0e/i1/i1e, xlogy/xlog1py, zeta,
entr, sinc, logit, expit, log_softmax, bessel_j0/j1, spherical_bessel_j0), torch.lgamma /
mvlgamma with gradients; float bit tricks (frexp, ldexp, copysign, nextafter, signbit,
float_power, nan_to_num, isfinite/isposinf), integer arithmetic (gcd, lcm, bitwise and/or/xor/not
and shifts, floor_divide and remainder/fmod on negatives, integer overflow wrap-around, uint8
arithmetic), trapezoid / cumulative_trapezoid, histc / histogram / bucketize / searchsorted,
diff with prepend, logaddexp, hypot, heaviside, and float16/bfloat16 round trips with iinfo/finfo."""

import torch


def r(t, n=5):
    return [
        round(v, n) if v == v and abs(v) != float("inf") else str(v)
        for v in t.detach().flatten().tolist()
    ]


def main():
    x = torch.tensor([0.1, 0.5, 1.0, 2.5, 7.0], dtype=torch.float64)
    sp = torch.special
    print("gammaln", r(sp.gammaln(x)), r(torch.lgamma(-x)))
    print("digamma", r(sp.digamma(x)), r(sp.polygamma(1, x)), r(sp.polygamma(3, x)))
    print("multigammaln", r(sp.multigammaln(x + 2, 3)), r(torch.mvlgamma(x + 1, 2)))
    u = torch.tensor([-2.0, -0.5, 0.0, 0.3, 1.7], dtype=torch.float64)
    print("erf", r(sp.erf(u)), r(sp.erfc(u)), r(sp.erfcx(u)), r(sp.erfinv(u / 2.5)))
    print(
        "ndtr",
        r(sp.ndtr(u)),
        r(sp.ndtri(torch.tensor([0.01, 0.3, 0.5, 0.99], dtype=torch.float64))),
        r(sp.log_ndtr(u * 5)),
    )
    print("bessel_i", r(sp.i0(u)), r(sp.i0e(u)), r(sp.i1(u)), r(sp.i1e(u)))
    print("bessel_j", r(sp.bessel_j0(x)), r(sp.bessel_j1(x)), r(sp.spherical_bessel_j0(x)))
    print(
        "xlogy",
        r(sp.xlogy(torch.tensor([0.0, 1.0, 2.0]), torch.tensor([0.0, 3.0, 0.5]))),
        r(sp.xlog1py(torch.tensor([0.0, 2.0]), torch.tensor([-1.0, 1.0]))),
    )
    print(
        "zeta",
        r(sp.zeta(x + 1.5, torch.tensor(1.0, dtype=torch.float64))),
        r(sp.entr(torch.tensor([0.0, 0.5, 1.0, -1.0]))),
    )
    print(
        "sinc_logit",
        r(sp.sinc(u)),
        r(sp.logit(torch.tensor([0.0, 0.25, 0.9]), eps=1e-6)),
        r(sp.expit(u)),
    )
    print("special_softmax", r(sp.log_softmax(u, 0)), r(sp.softmax(u, 0)), r(sp.logsumexp(u, 0)))
    g = x.clone().requires_grad_(True)
    (
        sp.gammaln(g).sum()
        + sp.digamma(g).sum()
        + torch.special.erfinv(g / 10).sum()
        + torch.special.i0(g).sum()
    ).backward()
    print("special_grad", r(g.grad))

    f = torch.tensor([0.0, 1.0, -3.5, 1024.0, 1e-3, 6.0])
    mant, expo = torch.frexp(f)
    print("frexp", r(mant), expo.tolist(), expo.dtype, r(torch.ldexp(mant, expo)))
    print(
        "copysign",
        r(torch.copysign(torch.tensor([1.0, -2.0, 3.0]), torch.tensor([-0.0, 1.0, -1.0]))),
        torch.signbit(torch.tensor([-0.0, 0.0, -1.0])).tolist(),
    )
    print(
        "nextafter",
        torch.nextafter(torch.tensor([1.0, 0.0]), torch.tensor([2.0, -1.0]))
        .sub(torch.tensor([1.0, 0.0]))
        .tolist(),
    )
    print(
        "float_power",
        torch.float_power(torch.tensor([2, 3]), 2.5).dtype,
        r(torch.float_power(torch.tensor([2, 3]), 2.5)),
    )
    bad = torch.tensor([float("nan"), float("inf"), -float("inf"), 1.0])
    print(
        "nan_to_num",
        r(torch.nan_to_num(bad, nan=0.0, posinf=9.0)),
        r(torch.nan_to_num(bad))[1:3] != [9.0, -9.0],
        torch.isposinf(bad).tolist(),
        torch.isfinite(bad).tolist(),
    )

    a = torch.tensor([12, -18, 7, 0, 100])
    b = torch.tensor([8, 12, -3, 5, 75])
    print("gcd_lcm", torch.gcd(a, b).tolist(), torch.lcm(a, b).tolist())
    print(
        "bitwise",
        (a & b).tolist(),
        (a | b).tolist(),
        (a ^ b).tolist(),
        (~a).tolist(),
        (a << 2).tolist(),
        (a >> 1).tolist(),
    )
    print(
        "bitwise_fn",
        torch.bitwise_and(a, 6).tolist(),
        torch.bitwise_left_shift(a, torch.tensor([1, 2, 3, 4, 0])).tolist(),
        torch.bitwise_xor(torch.tensor([True, False]), torch.tensor([True, True])).tolist(),
    )
    print(
        "divmod",
        torch.floor_divide(a, b).tolist(),
        torch.remainder(a, b).tolist(),
        torch.fmod(a, b).tolist(),
        (a // 7).tolist(),
        (a % -7).tolist(),
    )
    print(
        "div_modes",
        torch.div(a, b, rounding_mode="trunc").tolist(),
        torch.div(a, b, rounding_mode="floor").tolist(),
        r(torch.div(a, b)),
    )
    big = torch.tensor([2**62, -(2**62)], dtype=torch.int64)
    print(
        "overflow", (big * 4).tolist(), (torch.tensor([2**31 - 1], dtype=torch.int32) + 1).tolist()
    )
    u8 = torch.tensor([250, 3, 128], dtype=torch.uint8)
    print(
        "uint8",
        (u8 + 10).tolist(),
        (u8 * 2).tolist(),
        (u8 - 5).tolist(),
        (u8 + 10).dtype,
        (u8 + 1.5).dtype,
        (-u8).tolist(),
    )
    print(
        "int8",
        (torch.tensor([120, -120], dtype=torch.int8) * 2).tolist(),
        torch.tensor([100], dtype=torch.int8).to(torch.uint8).tolist(),
        torch.tensor([-1.7, 300.0]).to(torch.uint8).tolist()[:1],
    )

    t = torch.linspace(0, 3.14159, 9)
    y = torch.sin(t)
    print(
        "trapezoid",
        round(torch.trapezoid(y, t).item(), 5),
        round(torch.trapezoid(y, dx=t[1].item()).item(), 5),
        r(torch.cumulative_trapezoid(y, t))[-3:],
    )
    print(
        "trapz_2d",
        r(torch.trapezoid(torch.arange(6.0).view(2, 3), dim=0)),
        r(torch.trapezoid(torch.arange(6.0).view(2, 3))),
    )
    data = torch.tensor([0.5, 1.5, 1.7, 2.2, 3.9, 4.0, -1.0, 2.0])
    print(
        "histc",
        torch.histc(data, bins=4, min=0, max=4).tolist(),
        torch.histc(data, bins=3).tolist(),
    )
    hist, edges = torch.histogram(data, bins=4, range=(0.0, 4.0))
    print("histogram", hist.tolist(), edges.tolist())
    hw, he = torch.histogram(
        data, bins=torch.tensor([-1.0, 0.0, 2.0, 5.0]), weight=torch.ones(8) * 0.5, density=True
    )
    print("histogram_w", r(hw), he.tolist())
    bounds = torch.tensor([0.0, 1.0, 2.0, 4.0])
    print(
        "bucketize",
        torch.bucketize(data, bounds).tolist(),
        torch.bucketize(data, bounds, right=True).tolist(),
        torch.bucketize(data, bounds, out_int32=True).dtype,
    )
    srt = torch.tensor([[1, 3, 5, 7], [2, 4, 6, 8]])
    print(
        "searchsorted",
        torch.searchsorted(srt, torch.tensor([[3, 6], [1, 9]])).tolist(),
        torch.searchsorted(srt, torch.tensor([[3, 6], [1, 9]]), side="right").tolist(),
        torch.searchsorted(torch.tensor([5, 1, 3]), 2, sorter=torch.tensor([1, 2, 0])).item(),
    )
    print(
        "diff",
        torch.diff(a).tolist(),
        torch.diff(a, n=2, prepend=torch.tensor([0])).tolist(),
        torch.diff(
            torch.arange(6).view(2, 3), dim=0, append=torch.zeros(1, 3, dtype=torch.long)
        ).tolist(),
    )
    print(
        "misc",
        r(torch.logaddexp(u, u.flip(0))),
        r(torch.logaddexp2(u, u * 2)),
        r(torch.hypot(u, u + 1)),
        torch.heaviside(u, torch.tensor(0.5, dtype=torch.float64)).tolist(),
    )

    vals = torch.tensor([1.0 / 3, 65504.0, 70000.0, 1e-8, 3.14159])
    print("float16", vals.half().tolist(), vals.half().float().sub(vals).abs().max().item() > 0)
    print(
        "bfloat16",
        vals.bfloat16().tolist(),
        (vals.bfloat16() + vals.bfloat16()).dtype,
        (vals.half() + vals.bfloat16()).dtype,
    )
    print(
        "finfo",
        torch.finfo(torch.float16).max,
        torch.finfo(torch.bfloat16).eps,
        torch.finfo(torch.float16).tiny,
        torch.finfo(torch.float32).resolution,
        torch.finfo().bits,
    )
    print(
        "iinfo",
        torch.iinfo(torch.int8).min,
        torch.iinfo(torch.uint8).max,
        torch.iinfo(torch.int32).max,
        torch.iinfo(torch.int16).bits,
        torch.iinfo(torch.int64).dtype,
    )
    print(
        "promote",
        torch.promote_types(torch.uint8, torch.int8),
        torch.promote_types(torch.float16, torch.bfloat16),
        torch.result_type(torch.tensor([1], dtype=torch.int8), 2.5),
        torch.can_cast(torch.float32, torch.int32),
    )


if __name__ == "__main__":
    main()
