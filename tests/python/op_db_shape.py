"""op_db's table, continued: shape ops and linear algebra."""

from __future__ import annotations

import numpy as np
from op_db_core import (  # noqa: F401
    ALL,
    INTS_FLOATS,
    _dim_oor,
    _err,
    _errors,
    _f,
    _op,
    method,
    tensor,
)
from op_db_refs import (  # noqa: F401
    _addmm_ref,
    _broadcast_to_ref,
    _chunk_ref,
    _split_ref,
)
from op_db_samples import (  # noqa: F401
    _einsum_dtype,
    _matrices,
    addmm_samples,
    broadcast_to_samples,
    cat_samples,
    chunk_samples,
    einsum_samples,
    flip_samples,
    hvstack_samples,
    meshgrid_samples,
    movedim_samples,
    repeat_interleave_samples,
    repeat_samples,
    roll_samples,
    split_samples,
    stack_samples,
    tile_samples,
    unbind_samples,
)

SHAPE_OPS = [
    _op(
        "cat",
        lambda ts, dim=0: np.concatenate(ts, axis=dim),
        ALL,
        cat_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(
            _err("sizes differ outside dim", RuntimeError, [_f((3, 4)), _f((3, 5))]),
            _err("dim out of range", IndexError, [_f((3, 4)), _f((3, 4))], dim=2),
        ),
    ),
    _op(
        "stack",
        lambda ts, dim=0: np.stack(ts, axis=dim),
        ALL,
        stack_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(
            _err("shapes differ", RuntimeError, [_f((3, 4)), _f((4, 3))]),
            _err("dim out of range", IndexError, [_f((3, 4)), _f((3, 4))], dim=3),
        ),
    ),
    _op(
        "hstack",
        np.hstack,
        ALL,
        hvstack_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(_err("rows differ", RuntimeError, [_f((3, 4)), _f((2, 4))])),
    ),
    _op(
        "vstack",
        np.vstack,
        ALL,
        hvstack_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(_err("columns differ", RuntimeError, [_f((3, 4)), _f((3, 2))])),
    ),
    _op(
        "split",
        _split_ref,
        ALL,
        split_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("sizes don't add up", RuntimeError, _f((3, 4)), [1, 1]), _dim_oor(2, dim=2)
        ),
    ),
    _op(
        "chunk",
        _chunk_ref,
        ALL,
        chunk_samples,
        differentiable=True,
        error_inputs=_errors(_err("zero chunks", RuntimeError, _f((3, 4)), 0)),
    ),
    _op(
        "unbind",
        lambda a, dim=0: tuple(np.moveaxis(a, dim, 0)),
        ALL,
        unbind_samples,
        differentiable=True,
        error_inputs=_errors(_dim_oor(dim=2)),
    ),
    _op(
        "flip",
        lambda a, dims: np.flip(a, axis=tuple(dims)) if a.ndim else a.copy(),
        ALL,
        flip_samples,
        differentiable=True,
        error_inputs=_errors(
            _dim_oor((2,)), _err("repeated dim", RuntimeError, _f((3, 4)), (0, 0))
        ),
    ),
    _op(
        "roll",
        lambda a, shifts, dims=None: np.roll(a, shifts, axis=dims),
        ALL,
        roll_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("shifts and dims differ in length", RuntimeError, _f((3, 4)), (1, 2), dims=(0,))
        ),
    ),
    _op(
        "repeat",
        lambda a, *reps: np.tile(a, reps),
        ALL,
        repeat_samples,
        fn=method("repeat"),
        differentiable=True,
        error_inputs=_errors(_err("fewer repeats than dims", RuntimeError, _f((3, 4)), 2)),
    ),
    _op("tile", lambda a, reps: np.tile(a, reps), ALL, tile_samples, differentiable=True),
    _op(
        "repeat_interleave",
        lambda a, repeats, dim=None: np.repeat(a, repeats, axis=dim),
        ALL,
        repeat_interleave_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("negative repeats", RuntimeError, _f((3,)), -1),
            _err(
                "repeats don't match the dim",
                RuntimeError,
                _f((3,)),
                tensor([1, 2], "int64"),
                dim=0,
            ),
        ),
    ),
    _op(
        "meshgrid",
        lambda *ts, indexing: tuple(np.meshgrid(*ts, indexing=indexing)),
        ALL,
        meshgrid_samples,
        method=None,
        differentiable=True,
        error_inputs=_errors(
            _err("unknown indexing", RuntimeError, _f((3,)), _f((2,)), indexing="ab")
        ),
    ),
    _op(
        "broadcast_to",
        _broadcast_to_ref,
        ALL,
        broadcast_to_samples,
        differentiable=True,
        error_inputs=_errors(
            _err("incompatible shape", RuntimeError, _f((3, 4)), (3, 5)),
            _err("fewer dims than the input", RuntimeError, _f((3, 4)), (4,)),
        ),
    ),
    _op(
        "movedim",
        np.moveaxis,
        ALL,
        movedim_samples,
        differentiable=True,
        error_inputs=_errors(
            _dim_oor(2, 0), _err("repeated source dim", RuntimeError, _f((3, 4)), (0, 0), (0, 1))
        ),
    ),
]

# small operands keep integer matmuls from overflowing; the float16/bfloat16 tolerances allow
# for a different accumulation order, as for reductions
_LINALG = dict(
    domain=(-2, 2), differentiable=True, tol={"float16": (2e-3, 1e-2), "bfloat16": (1.6e-2, 5e-2)}
)

LINALG_OPS = [
    _op(
        "matmul",
        np.matmul,
        INTS_FLOATS,
        _matrices(
            [
                ((4,), (4,)),
                ((3, 4), (4,)),
                ((4,), (4, 2)),
                ((3, 4), (4, 2)),
                ((2, 1, 3, 4), (5, 4, 2)),
                ((2, 3, 4), (4,)),
                ((4,), (2, 4, 3)),
                ((0, 4), (4, 2)),
                ((3, 0), (0, 2)),
            ]
        ),
        **_LINALG,
        error_inputs=_errors(
            _err("inner dims differ", RuntimeError, _f((3, 4)), _f((3, 4))),
            _err("0-d operand", RuntimeError, _f(()), _f((3, 4))),
            _err("dtypes differ", RuntimeError, _f((3, 4)), _f((4, 2), "int64")),
        ),
    ),
    _op(
        "mm",
        np.matmul,
        INTS_FLOATS,
        _matrices([((3, 4), (4, 2)), ((0, 4), (4, 2)), ((3, 0), (0, 2))]),
        **_LINALG,
        error_inputs=_errors(
            _err("1-D operand", RuntimeError, _f((4,)), _f((4, 2))),
            _err("inner dims differ", RuntimeError, _f((3, 4)), _f((3, 4))),
        ),
    ),
    _op(
        "bmm",
        np.matmul,
        INTS_FLOATS,
        _matrices([((2, 3, 4), (2, 4, 2)), ((0, 3, 4), (0, 4, 2))]),
        **_LINALG,
        error_inputs=_errors(
            _err("2-D operands", RuntimeError, _f((3, 4)), _f((4, 3))),
            _err("batch sizes differ", RuntimeError, _f((2, 3, 4)), _f((3, 4, 2))),
        ),
    ),
    _op(
        "mv",
        np.matmul,
        INTS_FLOATS,
        _matrices([((3, 4), (4,)), ((0, 4), (4,))]),
        **_LINALG,
        error_inputs=_errors(_err("sizes differ", RuntimeError, _f((3, 4)), _f((3,)))),
    ),
    _op(
        "dot",
        np.dot,
        INTS_FLOATS,
        _matrices([((4,), (4,)), ((0,), (0,))]),
        **_LINALG,
        error_inputs=_errors(
            _err("2-D operands", RuntimeError, _f((3, 4)), _f((3, 4))),
            _err("lengths differ", RuntimeError, _f((4,)), _f((3,))),
            _err("dtypes differ", RuntimeError, _f((4,)), _f((4,), "int64")),
        ),
    ),
    _op("outer", np.outer, ALL, _matrices([((3,), (4,)), ((0,), (2,))]), **_LINALG),
    _op(
        "addmm",
        _addmm_ref,
        INTS_FLOATS,
        addmm_samples,
        **_LINALG,
        error_inputs=_errors(
            _err("inner dims differ", RuntimeError, _f((3, 3)), _f((3, 4)), _f((3, 4)))
        ),
    ),
    _op(
        "baddbmm",
        _addmm_ref,
        INTS_FLOATS,
        lambda op, d, r: addmm_samples(op, d, r, batched=True),
        **_LINALG,
        error_inputs=_errors(
            _err("inner dims differ", RuntimeError, _f((1, 3, 3)), _f((1, 3, 4)), _f((1, 3, 4)))
        ),
    ),
    _op(
        "einsum",
        np.einsum,
        INTS_FLOATS,
        einsum_samples,
        method=None,
        out_dtype=_einsum_dtype,
        **_LINALG,
        error_inputs=_errors(
            _err("subscript sizes differ", RuntimeError, "ij,jk->ik", _f((3, 4)), _f((3, 4))),
            _err("too few operands", RuntimeError, "ij,jk->ik", _f((3, 4))),
        ),
    ),
]
