"""op_db's table, continued: reductions, scans and the sort family."""

from __future__ import annotations

import numpy as np
from op_db_core import (  # noqa: F401
    _SUM_TOL,
    ALL,
    FLOATS,
    INTS,
    INTS_FLOATS,
    _dim_oor,
    _err,
    _errors,
    _f,
    _op,
    _reduction,
    accumulate,
    floating,
    method,
    tensor,
    to_int64,
    values_and_indices,
    with_indices_if_dim,
)
from op_db_refs import (  # noqa: F401
    _GATHER_REDUCED,
    _arg_ref,
    _argsort,
    _as_float64,
    _axis,
    _cummax_ref,
    _histc_ref,
    _logcumsumexp_ref,
    _logsumexp_ref,
    _minmax_ref,
    _mode_ref,
    _norm_ref,
    _reduce,
    _reduced_pick,
    _sort_ref,
    _topk_canon,
    _topk_ref,
    _unique_canon,
    _unique_ref,
    _var_mean_ref,
    _var_ref,
    gather_indices,
)
from op_db_samples import (  # noqa: F401
    bincount_samples,
    histc_samples,
    kthvalue_samples,
    median_samples,
    mode_samples,
    norm_samples,
    sort_samples,
    topk_samples,
    unique_samples,
    var_samples,
)

REDUCTION_OPS = [
    _op(
        "sum",
        _reduce(np.sum),
        ALL,
        _reduction(empty_ok=True, dtype_kw="float64"),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(
            _dim_oor(dim=2),
            _dim_oor(dim=(0, -3)),
            _err("repeated dim", RuntimeError, _f((3, 4)), dim=(0, 0)),
        ),
    ),
    _op(
        "mean",
        _reduce(np.mean),
        FLOATS,
        _reduction(dtype_kw="float64"),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(
            _err("mean of an integer tensor", RuntimeError, _f((3,), "int64")), _dim_oor(dim=-3)
        ),
    ),
    _op(
        "prod",
        _reduce(np.prod),
        ALL,
        _reduction(tuple_dims=False, empty_ok=True, dtype_kw="float64"),
        domain=(-2, 2),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "amax",
        _reduce(np.amax),
        ALL,
        _reduction(),
        differentiable=True,
        error_inputs=_errors(
            _dim_oor(dim=2), _err("reducing a zero-size dim", IndexError, _f((0, 3)), dim=0)
        ),
    ),
    _op(
        "amin",
        _reduce(np.amin),
        ALL,
        _reduction(),
        differentiable=True,
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "max",
        _minmax_ref(np.max, np.argmax),
        ALL,
        _reduction(tuple_dims=False),
        differentiable=True,
        out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(
            _dim_oor(dim=2), _err("reducing a zero-size dim", IndexError, _f((0, 3)), dim=0)
        ),
    ),
    _op(
        "min",
        _minmax_ref(np.min, np.argmin),
        ALL,
        _reduction(tuple_dims=False),
        differentiable=True,
        out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "argmax",
        _arg_ref(np.argmax),
        INTS_FLOATS,
        _reduction(tuple_dims=False),
        out_dtype=to_int64,
        canonicalize=gather_indices(reduced=True, default_dim=None, index_only=True),
        error_inputs=_errors(
            _dim_oor(dim=2), _err("argmax of bool", RuntimeError, _f((3,), "bool"))
        ),
    ),
    _op(
        "argmin",
        _arg_ref(np.argmin),
        INTS_FLOATS,
        _reduction(tuple_dims=False),
        out_dtype=to_int64,
        canonicalize=gather_indices(reduced=True, default_dim=None, index_only=True),
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "var",
        _var_ref(np.var),
        FLOATS,
        var_samples,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(
            _dim_oor(dim=2), _err("var of an integer tensor", RuntimeError, _f((3,), "int64"))
        ),
    ),
    _op(
        "std",
        _var_ref(np.std),
        FLOATS,
        var_samples,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_err("std of an integer tensor", RuntimeError, _f((3,), "int64"))),
    ),
    _op(
        "var_mean",
        _var_mean_ref,
        FLOATS,
        var_samples,
        method=None,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "norm",
        _norm_ref,
        FLOATS,
        norm_samples,
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_err("norm of an integer tensor", RuntimeError, _f((3,), "int64"))),
    ),
    _op(
        "logsumexp",
        _as_float64(_logsumexp_ref),
        ALL,
        _reduction(dim_required=True),
        differentiable=True,
        out_dtype=floating(),
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "all",
        _reduce(np.all),
        ALL,
        _reduction(empty_ok=True, discrete=True),
        domain=(-1, 1),
        out_dtype=lambda d, s: "uint8" if d == "uint8" else "bool",
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "any",
        _reduce(np.any),
        ALL,
        _reduction(empty_ok=True, discrete=True),
        domain=(-1, 1),
        out_dtype=lambda d, s: "uint8" if d == "uint8" else "bool",
    ),
    _op(
        "count_nonzero",
        _reduce(np.count_nonzero),
        ALL,
        _reduction(keepdim=False, empty_ok=True, discrete=True),
        domain=(-1, 1),
        out_dtype=to_int64,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "cumsum",
        lambda a, dim, dtype=None: np.cumsum(a, axis=_axis(a, dim), dtype=dtype).reshape(a.shape),
        ALL,
        _reduction(
            dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True, dtype_kw="float64"
        ),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "cumprod",
        lambda a, dim, dtype=None: np.cumprod(a, axis=_axis(a, dim), dtype=dtype).reshape(a.shape),
        ALL,
        _reduction(
            dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True, dtype_kw="float64"
        ),
        domain=(-2, 2),
        differentiable=True,
        out_dtype=accumulate,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "logcumsumexp",
        _as_float64(_logcumsumexp_ref),
        FLOATS,
        _reduction(dim_required=True, tuple_dims=False, keepdim=False, empty_ok=True),
        differentiable=True,
        tol=_SUM_TOL,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "cummax",
        _cummax_ref,
        ALL,
        _reduction(dim_required=True, tuple_dims=False, keepdim=False),
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=gather_indices(reduced=False),
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
]

SORTING_OPS = [
    _op(
        "sort",
        _sort_ref,
        ALL,
        sort_samples,
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=gather_indices(reduced=False),
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "argsort",
        _argsort,
        ALL,
        sort_samples,
        out_dtype=to_int64,
        canonicalize=gather_indices(reduced=False, index_only=True),
        error_inputs=_errors(_dim_oor(dim=-3)),
    ),
    _op(
        "topk",
        lambda a, k, dim=-1, largest=True, sorted=True: _topk_ref(a, k, dim, largest),
        INTS_FLOATS,
        topk_samples,
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=_topk_canon,
        error_inputs=_errors(
            _err("k larger than the dim", RuntimeError, _f((3, 4)), 5), _dim_oor(2, dim=2)
        ),
    ),
    _op(
        "kthvalue",
        lambda a, k, dim=-1, keepdim=False: _reduced_pick(a, dim, keepdim, lambda n: k - 1),
        INTS_FLOATS,
        kthvalue_samples,
        differentiable=True,
        out_dtype=values_and_indices,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(
            _err("k out of range", RuntimeError, _f((3, 4)), 5),
            _err("k = 0", RuntimeError, _f((3, 4)), 0),
        ),
    ),
    _op(
        "median",
        lambda a, dim=None, keepdim=False: (
            np.sort(a.reshape(-1))[(a.size - 1) // 2]
            if dim is None
            else _reduced_pick(a, dim, keepdim, lambda n: (n - 1) // 2)
        ),
        INTS_FLOATS,
        median_samples,
        differentiable=True,
        out_dtype=with_indices_if_dim,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=2)),
        torch_bug=lambda layout, s: (
            "torch 2.13 CPU median(dim) returns wrong values when reducing a "
            "stride-0 (expanded) dim"
            if layout == "expanded" and s.kwargs.get("dim") == 0
            else None
        ),
    ),
    # mode has a backward in torch, but nudging one of the repeated values changes the mode,
    # so finite differences can't check it
    _op(
        "mode",
        _mode_ref,
        ALL,
        mode_samples,
        out_dtype=values_and_indices,
        canonicalize=_GATHER_REDUCED,
        error_inputs=_errors(_dim_oor(dim=3)),
    ),
    _op(
        "unique",
        _unique_ref,
        ALL,
        unique_samples,
        canonicalize=_unique_canon,
        out_dtype=lambda d, s: (
            (d,)
            + ("int64",) * sum(bool(s.kwargs.get(k)) for k in ("return_inverse", "return_counts"))
        ),
    ),
    _op(
        "bincount",
        lambda a, weights=None, minlength=0: np.bincount(a.astype(np.int64), weights, minlength),
        INTS,
        bincount_samples,
        # no weights: int64; float32 weights stay float32; any other weights give float64
        out_dtype=lambda d, s: (
            "int64"
            if "weights" not in s.kwargs
            else ("float32" if s.kwargs["weights"].dtype == "float32" else "float64")
        ),
        error_inputs=_errors(
            _err("negative values", RuntimeError, tensor([1, -1], "int64")),
            _err("2-D input", RuntimeError, tensor(np.ones((2, 2)), "int64")),
            _err("float input", RuntimeError, _f((3,))),
        ),
    ),
    _op(
        "histc",
        _histc_ref,
        FLOATS,
        histc_samples,
        error_inputs=_errors(
            _err("histc of an integer tensor", RuntimeError, _f((3,), "int64")),
            _err("max < min", RuntimeError, _f((3,)), min=2, max=1),
        ),
    ),
]
