"""Explicit forward-mode rules for linear algebra whose tangent torch defines for any input
tangent, where the rule built on the reverse formula would see only the symmetric part (that
formula assumes a symmetric cotangent). forward_ad dispatches here by op name."""


def _cholesky_factor_tangent(L, dA, upper):
    """torch's Cholesky tangent for A = L·Lᴴ: dL = L·Φ(L⁻¹·dA·L⁻ᴴ), Φ taking the lower
    triangle with the diagonal halved. dA is used as given, not symmetrized, as torch does."""
    from ..linalg import solve_triangular

    low = L.mH if upper else L
    x = solve_triangular(low, dA, upper=False, left=True)
    x = solve_triangular(low.mH, x, upper=True, left=False)
    x = x.tril() - (x.diagonal(0, -2, -1) * 0.5).diag_embed()
    dL = low @ x
    return dL.mH if upper else dL


def _upper(args, kwargs):
    return bool(kwargs.get("upper", args[1] if len(args) > 1 else False))


def cholesky(args, kwargs, out, tangents):
    return [_cholesky_factor_tangent(out, tangents[id(args[0])], _upper(args, kwargs))]


def cholesky_ex(args, kwargs, out, tangents):
    L = out[0]
    return [_cholesky_factor_tangent(L, tangents[id(args[0])], _upper(args, kwargs)), None]


RULES = {"cholesky": cholesky, "cholesky_ex": cholesky_ex}
