"""Runs one fuzz case on ember and on the reference, and classifies the outcome.

A case is library-neutral (tensors are op_db ``T`` values + a layout), so the same case is
realised on ember and on torch. Outcomes:
  matched          both succeeded and agree (dtype, shape, values within tolerance);
  raised_as_torch  both raised the same exception class, ember's message naming the op;
  checked          no reference could judge it (no torch, no numpy ref): ember did not crash;
  a finding        everything else, by category (see CATEGORIES).
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import sys
import warnings
from dataclasses import dataclass, field

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
from op_db import NP_CARRIER, OPS_BY_NAME, Dt, T, is_float

import ember

try:
    import torch
except ImportError:  # numpy references only
    torch = None

# must-fix categories first; crash and hang are detected by run_fuzz's parent process
CATEGORIES = (
    "crash",
    "hang",
    "torch_crash",
    "torch_hang",
    "wrong_values",
    "wrong_dtype",
    "wrong_shape",
    "exc_class",
    "ember_raises",
    "torch_raises",
    "unnamed_message",
    "bad_exception",
)
MUST_FIX = ("crash", "hang", "wrong_values", "wrong_dtype", "wrong_shape", "bad_exception")

# the classes PyTorch raises for user errors, most specific first
EXC_CLASSES = (
    NotImplementedError,
    IndexError,
    TypeError,
    ValueError,
    OverflowError,
    AttributeError,
    ZeroDivisionError,
    AssertionError,
    RuntimeError,
)
# (rtol, atol) by result dtype: looser than test_ops' because cases reduce and chain more
MAX_COMPARED = 1 << 20  # larger results (stride-0 views) are compared by shape and dtype
TOL = {
    "float16": (1e-2, 1e-2),
    "bfloat16": (5e-2, 5e-2),
    "float32": (1e-4, 1e-4),
    "float64": (1e-7, 1e-7),
}
TOL_COMPLEX = {"complex64": "float32", "complex128": "float64"}  # each part as its real dtype


@dataclass
class Case:
    """fn: 'op:<op_db name>', 'F.<functional>', 'Tensor.<method>', 'setitem' or '<module function>'.

    compare: 'values' (default), 'shape' (random results, or index outputs where ties allow
    several answers) or 'first' (only output 0's values, the rest by shape).
    """

    fn: str
    args: tuple
    kwargs: dict = field(default_factory=dict)
    compare: str = "values"
    numpy_ok: bool = False  # an unmutated op_db sample: its numpy ref applies without torch
    family: str = ""  # the strategy that drew it (run_fuzz's table has a row per family)

    @property
    def op_name(self):
        return self.fn.split(":")[-1].split(".")[-1]

    def __repr__(self):
        kw = "".join(f", {k}={v!r}" for k, v in self.kwargs.items())
        return f"{self.fn}({', '.join(map(repr, self.args))}{kw})"


@dataclass
class Outcome:
    kind: str  # matched / raised_as_torch / checked / one of CATEGORIES
    detail: str = ""


# ----------------------------------------------------------------------------- realising cases


def _contiguous(m, values, dtype):
    x = m.tensor(np.array(values, order="C"))
    return x.to(m.bfloat16) if dtype == "bfloat16" else x


def make_tensor(m, t: T):
    """The tensor `t` on module m, laid out in memory as t.layout asks (values unchanged)."""
    v, layout = t.values, t.layout
    if layout == "transposed" and v.ndim >= 2:
        return _contiguous(m, np.swapaxes(v, -1, -2), t.dtype).transpose(-1, -2)
    if layout == "permuted" and v.ndim >= 2:
        perm = np.roll(np.arange(v.ndim), 1)  # stored with the last dim first
        return _contiguous(m, np.transpose(v, perm), t.dtype).permute(*np.argsort(perm).tolist())
    if layout == "sliced" and v.ndim >= 1:  # storage offset 1, step 2 in the last dim
        index = (slice(1, None),) + (slice(None),) * (v.ndim - 2) + (slice(None, None, 2),)
        if v.ndim == 1:
            index = (slice(1, None, 2),)
            base_shape = (2 * v.shape[0] + 1,)
        else:
            base_shape = (v.shape[0] + 1,) + v.shape[1:-1] + (2 * v.shape[-1],)
        base = np.zeros(base_shape, dtype=v.dtype)
        base[index] = v
        return _contiguous(m, base, t.dtype)[index]
    if layout == "expanded" and v.ndim >= 1 and v.shape[0] > 0:  # stride 0 along dim 0
        return _contiguous(m, v[:1], t.dtype).expand(*v.shape)
    return _contiguous(m, v, t.dtype)


def realise(m, obj):
    """T -> tensor and Dt -> dtype inside nested tuples/lists/dicts; anything else as is."""
    if isinstance(obj, T):
        return make_tensor(m, obj)
    if isinstance(obj, Dt):
        return getattr(m, obj.name)
    if isinstance(obj, list):
        return [realise(m, o) for o in obj]
    if isinstance(obj, tuple):
        return tuple(realise(m, o) for o in obj)
    if isinstance(obj, dict):
        return {k: realise(m, v) for k, v in obj.items()}
    return obj


def call(m, case: Case):
    args, kwargs = realise(m, case.args), realise(m, case.kwargs)
    kind, _, name = case.fn.partition(".")
    if case.fn.startswith("op:"):
        return OPS_BY_NAME[case.fn[3:]].op(m, *args, **kwargs)
    if case.fn.startswith("prog:"):  # a short program: edge_, wide_ or deep_cases.py
        from deep_cases import DEEP_PROGRAMS
        from edge_cases import PROGRAMS
        from wide_cases import WIDE_PROGRAMS

        return {**PROGRAMS, **WIDE_PROGRAMS, **DEEP_PROGRAMS}[case.fn[5:]](m, *args, **kwargs)
    if case.fn == "setitem":
        x, index, value = args
        x[index] = value
        return x
    if kind == "F":
        return getattr(m.nn.functional, name)(*args, **kwargs)
    if kind == "Tensor":
        return getattr(args[0], name)(*args[1:], **kwargs)
    if kind in ("linalg", "fft", "sparse", "special"):  # a submodule's function
        return getattr(getattr(m, kind), name)(*args, **kwargs)
    return getattr(m, case.fn)(*args, **kwargs)


# ----------------------------------------------------------------------------- comparing


def _leaves(out):
    """Tensors and plain values of a result, flattened (tuples, lists, namedtuples, Size)."""
    if isinstance(out, (tuple, list)) and not _is_size(out):
        return [leaf for o in out for leaf in _leaves(o)]
    return [out]


def _is_size(out):
    return type(out).__name__ == "Size"


def _dtype_name(x):
    return str(x.dtype).rsplit(".", 1)[-1]


def _to_numpy(x):
    """(dtype name, array) of a tensor; (type name, value) of anything else."""
    if hasattr(x, "dtype") and hasattr(x, "detach"):
        name = _dtype_name(x)
        x = x.detach()
        x = x.float() if name == "bfloat16" else x
        try:
            return name, x.numpy()
        except RuntimeError:  # torch's ZeroTensor (a double backward's zero grad) needs force
            return name, x.numpy(force=True)
    if _is_size(x):
        return "size", np.asarray(tuple(x), np.int64)
    return type(x).__name__, np.asarray(x)


def _canonical(case, outs):
    """op_db's canonical form of numpy outputs, where ties allow several right index results."""
    op = OPS_BY_NAME[case.fn[3:]] if case.fn.startswith("op:") else None
    if op is None or op.canonicalize is None:
        return outs
    conv = lambda x: x.values if isinstance(x, T) else np.dtype(NP_CARRIER[x.name])
    return tuple(op.canonicalize(outs, _map(case.args, conv), _map(case.kwargs, conv)))


def compare(case: Case, got, want) -> Outcome:
    got, want = _leaves(got), _leaves(want)
    if (
        case.fn.startswith("op:")
        and OPS_BY_NAME[case.fn[3:]].canonicalize
        and len(got) == len(want)
    ):
        dtypes = [(_dtype_name(g), _dtype_name(w)) for g, w in zip(got, want)]
        if any(g != w for g, w in dtypes):
            return Outcome(
                "wrong_dtype", f"{[d[0] for d in dtypes]}, reference {[d[1] for d in dtypes]}"
            )
        try:
            got_c = _canonical(case, tuple(_to_numpy(g)[1] for g in got))
            want_c = _canonical(case, tuple(_to_numpy(w)[1] for w in want))
        except Exception:  # noqa: BLE001 -- a mutated sample op_db's helper can't read
            case = dataclasses.replace(case, compare="first")
        else:
            return _compare_arrays(case, got_c, want_c, [d[0] for d in dtypes])
    if len(got) != len(want):
        return Outcome("wrong_shape", f"{len(got)} outputs, reference has {len(want)}")
    for i, (g, w) in enumerate(zip(got, want)):
        if (
            max(_numel(w), _numel(g)) > MAX_COMPARED or max(_ndim(w), _ndim(g)) > 64
        ):  # a huge (stride-0 or empty) result, or one past numpy's 64 dims: compare geometry
            if (tuple(g.shape), _dtype_name(g)) != (tuple(w.shape), _dtype_name(w)):
                return Outcome(
                    "wrong_shape",
                    f"output {i}: {tuple(g.shape)} {g.dtype}, reference {tuple(w.shape)}",
                )
            continue
        (gd, ga), (wd, wa) = _to_numpy(g), _to_numpy(w)
        if gd != wd:
            return Outcome("wrong_dtype", f"output {i}: {gd}, reference {wd}")
        if ga.shape != wa.shape:
            return Outcome("wrong_shape", f"output {i}: {ga.shape}, reference {wa.shape}")
        if case.compare == "shape" or (case.compare == "first" and i > 0):
            continue
        if not _close(ga, wa, gd):
            return Outcome("wrong_values", f"output {i} differs: {_diff(ga, wa)}")
    return Outcome("matched")


def _compare_arrays(case, got, want, dtypes):
    for i, (ga, wa, dt) in enumerate(zip(got, want, dtypes)):
        ga, wa = np.asarray(ga), np.asarray(wa)
        if ga.shape != wa.shape:
            return Outcome("wrong_shape", f"output {i}: {ga.shape}, reference {wa.shape}")
        if case.compare == "values" and not _close(ga, wa, dt):
            return Outcome("wrong_values", f"output {i} differs: {_diff(ga, wa)}")
    return Outcome("matched")


def _numel(x):
    """Elements of a tensor result, counting zero-size dims as 1: numpy can't even build an
    empty array with a dim of 2**62."""
    return math.prod(max(abs(s), 1) for s in x.shape) if hasattr(x, "detach") else 0


def _ndim(x):
    return len(x.shape) if hasattr(x, "detach") else 0


def _close(a, b, dtype):
    if a.dtype.kind not in "fc" and b.dtype.kind not in "fc":
        return np.array_equal(a, b)
    rtol, atol = TOL.get(dtype, (1e-4, 1e-4))
    if a.dtype.kind == "c" or b.dtype.kind == "c":  # fft's results: real and imaginary parts
        a, b = np.asarray(a, np.complex128), np.asarray(b, np.complex128)
        part = TOL_COMPLEX.get(dtype)
        return _close(a.real, b.real, part) and _close(a.imag, b.imag, part)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    finite = np.isfinite(b64)
    scale = float(np.abs(b64[finite]).max()) if finite.any() else 1.0
    return bool(np.allclose(a64, b64, rtol=rtol, atol=atol * max(1.0, scale), equal_nan=True))


def _diff(a, b):
    kind = np.complex128 if "c" in (a.dtype.kind, b.dtype.kind) else np.float64
    a64, b64 = np.asarray(a, kind).ravel(), np.asarray(b, kind).ravel()
    bad = ~np.isclose(a64, b64, equal_nan=True)
    i = int(np.argmax(bad)) if bad.any() else 0
    return (
        f"{int(bad.sum())}/{a64.size} elements, e.g. [{i}] {a64[i]!r} vs {b64[i]!r}"
        if a64.size
        else ""
    )


_STANDARD = {c.__name__ for c in EXC_CLASSES}


def exc_class(e: BaseException) -> str:
    for cls in EXC_CLASSES:
        if isinstance(e, cls):
            return cls.__name__
    return type(e).__name__


def names_op(case: Case, msg: str) -> bool:
    """ember's messages start '[op] ...'; nanobind's type errors start 'op(): ...'."""
    return case.op_name in msg or re.search(r"\[[\w.]+\]", msg) is not None or "()" in msg


# ----------------------------------------------------------------------------- running


def _run(m, case):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return call(m, case), None
        except Exception as e:  # noqa: BLE001 -- every exception is an outcome here
            return None, e


def _numpy_reference(case):
    """op_db's numpy reference for an unmutated sample, wrapped as a fake result."""
    op = OPS_BY_NAME[case.fn[3:]]
    dtype = next(a for a in _leaves(case.args) if isinstance(a, T)).dtype
    conv = lambda x: (
        np.dtype(NP_CARRIER[x.name])
        if isinstance(x, Dt)
        else x.values.astype(np.float64)
        if is_float(x.dtype)
        else x.values.copy()
    )
    args = _map(case.args, conv)
    kwargs = _map(case.kwargs, conv)
    if op.ref_needs_dtype:
        kwargs["_dtype"] = dtype
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = op.ref(*args, **kwargs)
    return tuple(np.asarray(o) for o in (out if isinstance(out, (tuple, list)) else (out,)))


def _map(obj, fn):
    if isinstance(obj, (T, Dt)):
        return fn(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(o, fn) for o in obj)
    if isinstance(obj, dict):
        return {k: _map(v, fn) for k, v in obj.items()}
    return obj


def run_case(case: Case, ember_done=lambda: None) -> Outcome:
    """ember_done() is called between ember's call and torch's (a hang after it is torch's)."""
    got, err = _run(ember, case)
    ember_done()
    if err is not None and (exc_class(err) not in _STANDARD or "internal assert" in str(err)):
        return Outcome("bad_exception", f"{type(err).__name__}: {err}")
    if torch is None:
        return _judge_without_torch(case, got, err)
    want, terr = _run(torch, case)
    if err is not None and terr is not None:
        if exc_class(err) != exc_class(terr):
            return Outcome(
                "exc_class", f"ember {exc_class(err)}: {err} | torch {exc_class(terr)}: {terr}"
            )
        if not names_op(case, str(err)):
            return Outcome("unnamed_message", f"{exc_class(err)}: {err}")
        return Outcome("raised_as_torch")
    if err is not None:
        return Outcome("ember_raises", f"{exc_class(err)}: {err}")
    if terr is not None:
        return Outcome("torch_raises", f"torch {exc_class(terr)}: {terr}")
    try:
        return compare(case, got, want)
    except Exception as e:  # noqa: BLE001 -- e.g. .numpy() of a result failing
        return Outcome("bad_exception", f"comparing results: {type(e).__name__}: {e}")


def _judge_without_torch(case, got, err):
    if err is not None:
        return Outcome("checked" if names_op(case, str(err)) else "unnamed_message", str(err))
    if not case.numpy_ok:
        return Outcome("checked")
    op = OPS_BY_NAME[case.fn[3:]]
    if op.canonicalize:  # tie-breaking indices: the numpy side can't be compared exactly
        return Outcome("checked")
    outs = _leaves(got)
    want = _numpy_reference(case)
    if len(outs) != len(want):
        return Outcome("wrong_shape", f"{len(outs)} outputs, numpy has {len(want)}")
    for i, (g, w) in enumerate(zip(outs, want)):
        gd, ga = _to_numpy(g)
        if ga.shape != w.shape:
            return Outcome("wrong_shape", f"output {i}: {ga.shape}, numpy {w.shape}")
        if not _close(ga, w, gd):
            return Outcome("wrong_values", f"output {i} differs from numpy: {_diff(ga, w)}")
    return Outcome("matched")
