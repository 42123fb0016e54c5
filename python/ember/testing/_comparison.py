"""assert_close: torch.testing.assert_close's pairing of nested inputs, default tolerances and
mismatch messages, computed with numpy on the tensors' values."""

import cmath
import collections.abc

from .._C import Tensor, promote_types
from .._ops.creation import tensor

# (rtol, atol) by dtype name; every other dtype compares for equality.
_TOLERANCES = {
    "torch.float16": (1e-3, 1e-5),
    "torch.bfloat16": (1.6e-2, 1e-5),
    "torch.float32": (1.3e-6, 1e-5),
    "torch.float64": (1e-7, 1e-7),
    "torch.complex32": (1e-3, 1e-5),
    "torch.complex64": (1.3e-6, 1e-5),
    "torch.complex128": (1e-7, 1e-7),
}
_NUMBER_DTYPES = {bool: "torch.int64", int: "torch.int64", float: "torch.float64"}
_NUMBER_DTYPES[complex] = "torch.complex128"


class _Failure(Exception):
    """A failed comparison: the exception type to raise, its message and the item's path."""

    def __init__(self, type, msg, id=()):
        super().__init__(msg)
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None):
        if isinstance(msg, str):
            return self.type(msg)
        text = self.msg
        if self.id:
            text += "\n\nThe failure occurred for item " + "".join(str([i]) for i in self.id)
        return self.type(msg(text) if callable(msg) else text)


class _Unsupported(Exception):
    pass


def _tolerances(*dtype_names, rtol, atol, id):
    if (rtol is None) ^ (atol is None):
        raise _Failure(
            ValueError,
            "Both 'rtol' and 'atol' must be either specified or omitted, but got no "
            f"{'rtol' if rtol is None else 'atol'}.",
            id,
        )
    if rtol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(name, (0.0, 0.0)) for name in dtype_names]
    return max(p[0] for p in pairs), max(p[1] for p in pairs)


def _mismatch_msg(identifier, extra, abs_diff, abs_idx, atol, rel_diff, rel_idx, rtol):
    equality = rtol == 0 and atol == 0

    def line(kind, diff, idx, tol):
        if idx is None:
            text = f"{kind.title()} difference: {diff}"
        else:
            text = f"Greatest {kind} difference: {diff} at index {idx}"
        return text + ("" if equality else f" (up to {tol} allowed)") + "\n"

    msg = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        msg += extra.strip() + "\n"
    msg += line("absolute", abs_diff, abs_idx, atol)
    msg += line("relative", rel_diff, rel_idx, rtol)
    return msg.strip()


def _scalar_msg(actual, expected, rtol, atol):
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    extra = f"Expected {expected} but got {actual}."
    return _mismatch_msg("Scalars", extra, abs_diff, None, atol, rel_diff, None, rtol)


def _numpy(t):
    """The values as a numpy array, and the rounding that the tensor's dtype applies to each
    result (bfloat16, which numpy lacks, is held in float32 and rounded back after each op)."""
    t = t.detach()
    if str(t.dtype) == "torch.bfloat16":
        return t.float().numpy(), _round_bfloat16
    return t.numpy(), _exact


def _exact(x):
    return x


def _round_bfloat16(x):
    import numpy as np

    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    out = rounded.astype(np.uint32).view(np.float32)
    return np.where(np.isnan(x), x, out)


def _isclose(a, e, rtol, atol, equal_nan, r=_exact):
    """torch.isclose on numpy arrays: exact matches, NaN pairs when `equal_nan`, and finite
    differences within atol + |rtol * e| (computed in the arrays' own precision)."""
    import numpy as np

    close = a == e
    if a.dtype.kind == "f" and equal_nan:
        close |= np.isnan(a) & np.isnan(e)
    if rtol == 0 and atol == 0:
        return close
    if a.dtype.kind != "f":
        a, e = a.astype(np.float64), e.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = r(np.abs(a - e))
        return close | (np.isfinite(err) & (err <= r(atol + r(np.abs(r(rtol * e))))))


def _tensor_msg(a, e, matches, rtol, atol, r=_exact):
    import numpy as np

    n = matches.size
    bad = n - int(matches.sum())
    extra = f"Mismatched elements: {bad} / {n} ({bad / n:.1%})"
    af, ef, mf = a.reshape(-1), e.reshape(-1), matches.reshape(-1)
    if af.dtype.kind != "f":
        af, ef = af.astype(np.int64), ef.astype(np.int64)
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        abs_diff = r(np.abs(af - ef))
        abs_diff[mf] = 0
        rel_diff = r(abs_diff / np.abs(ef))
        if af.dtype.kind != "f":  # torch divides integers in the default dtype
            rel_diff = rel_diff.astype(np.float32)
    rel_diff[mf] = 0

    def greatest(d):
        i = int(np.argmax(d))  # NaN counts as the greatest, as torch.max's
        return d[i].item(), tuple(int(k) for k in np.unravel_index(i, matches.shape))

    (ad, ai), (rd, ri) = greatest(abs_diff), greatest(rel_diff)
    return _mismatch_msg("Tensor-likes", extra, ad, ai, atol, rd, ri, rtol)


class _Pair:
    def __init__(self, actual, expected, id):
        self.actual, self.expected, self.id = actual, expected, id

    def fail(self, type, msg):
        raise _Failure(type, msg, self.id)


class _NonePair(_Pair):
    def __init__(self, actual, expected, id, **options):
        if not (actual is None or expected is None):
            raise _Unsupported
        super().__init__(actual, expected, id)

    def compare(self):
        if not (self.actual is None and self.expected is None):
            self.fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


def _numpy_types(*names):
    try:
        import numpy as np
    except ImportError:
        return ()
    return tuple(getattr(np, n) for n in names)


class _BooleanPair(_Pair):
    def __init__(self, actual, expected, id, **options):
        types = (bool, *_numpy_types("bool_"))
        if not (isinstance(actual, types) and isinstance(expected, types)):
            raise _Unsupported
        super().__init__(bool(actual), bool(expected), id)

    def compare(self):
        if self.actual is not self.expected:
            self.fail(AssertionError, f"Booleans mismatch: {self.actual} is not {self.expected}")


class _NumberPair(_Pair):
    def __init__(self, actual, expected, id, rtol, atol, equal_nan, check_dtype, **options):
        types = (int, float, complex, *_numpy_types("number"))
        if not (isinstance(actual, types) and isinstance(expected, types)):
            raise _Unsupported
        actual, expected = (x.item() if hasattr(x, "item") else x for x in (actual, expected))
        super().__init__(actual, expected, id)
        names = [_NUMBER_DTYPES[type(x)] for x in (actual, expected)]
        self.rtol, self.atol = _tolerances(*names, rtol=rtol, atol=atol, id=id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self):
        a, e = self.actual, self.expected
        if self.check_dtype and type(a) is not type(e):
            self.fail(AssertionError, f"The (d)types do not match: {type(a)} != {type(e)}.")
        if a == e:
            return
        if self.equal_nan and cmath.isnan(a) and cmath.isnan(e):
            return
        diff = abs(a - e)
        if cmath.isfinite(diff) and diff <= self.atol + self.rtol * abs(e):
            return
        self.fail(AssertionError, _scalar_msg(a, e, self.rtol, self.atol))


class _TensorLikePair(_Pair):
    def __init__(self, actual, expected, id, allow_subclasses, rtol, atol, **options):
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or (not allow_subclasses and type(actual) is not type(expected)):
            raise _Unsupported
        actual, expected = (self._to_tensor(x) for x in (actual, expected))
        super().__init__(actual, expected, id)
        names = (str(actual.dtype), str(expected.dtype))
        self.rtol, self.atol = _tolerances(*names, rtol=rtol, atol=atol, id=id)
        self.options = options

    @staticmethod
    def _to_tensor(x):
        if isinstance(x, Tensor):
            return x
        try:
            return tensor(x)
        except Exception:
            raise _Unsupported from None

    def compare(self):
        a, e, o = self.actual, self.expected, self.options

        def attribute(name, x, y):
            if x != y:
                self.fail(
                    AssertionError,
                    f"The values for attribute '{name}' do not match: {x} != {y}.",
                )

        attribute("shape", a.shape, e.shape)
        if o["check_layout"]:
            attribute("layout", a.layout, e.layout)
        if o["check_stride"]:
            attribute("stride()", a.stride(), e.stride())
        if o["check_device"]:
            attribute("device", a.device, e.device)
        if o["check_dtype"]:
            attribute("dtype", a.dtype, e.dtype)
        if a.device != e.device:
            a, e = a.cpu(), e.cpu()
        if a.dtype != e.dtype:
            common = promote_types(a.dtype, e.dtype)
            a, e = a.to(common), e.to(common)
        (an, r), (en, _) = _numpy(a), _numpy(e)
        matches = _isclose(an, en, self.rtol, self.atol, o["equal_nan"], r)
        if matches.all():
            return
        if a.dim() == 0:
            self.fail(AssertionError, _scalar_msg(a.item(), e.item(), self.rtol, self.atol))
        self.fail(AssertionError, _tensor_msg(an, en, matches, self.rtol, self.atol, r))


_PAIR_TYPES = (_NonePair, _BooleanPair, _NumberPair, _TensorLikePair)


def _originate(actual, expected, id, options):
    seq, mapping = collections.abc.Sequence, collections.abc.Mapping
    if (
        isinstance(actual, seq)
        and not isinstance(actual, str)
        and isinstance(expected, seq)
        and not isinstance(expected, str)
    ):
        if len(actual) != len(expected):
            raise _Failure(
                AssertionError,
                f"The length of the sequences mismatch: {len(actual)} != {len(expected)}",
                id,
            )
        out = []
        for i in range(len(actual)):
            out += _originate(actual[i], expected[i], (*id, i), options)
        return out
    if isinstance(actual, mapping) and isinstance(expected, mapping):
        ak, ek = set(actual.keys()), set(expected.keys())
        if ak != ek:
            raise _Failure(
                AssertionError,
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(ek - ak)}\n"
                f"Additional keys in the actual mapping: {sorted(ak - ek)}",
                id,
            )
        try:
            keys = sorted(ak)
        except Exception:
            keys = list(ak)
        out = []
        for k in keys:
            out += _originate(actual[k], expected[k], (*id, k), options)
        return out
    for pair_type in _PAIR_TYPES:
        try:
            return [pair_type(actual, expected, id, **options)]
        except _Unsupported:
            continue
    raise _Failure(
        TypeError,
        f"No comparison pair was able to handle inputs of type {type(actual)} and "
        f"{type(expected)}.",
        id,
    )


def assert_close(
    actual,
    expected,
    *,
    allow_subclasses=True,
    rtol=None,
    atol=None,
    equal_nan=False,
    check_device=True,
    check_dtype=True,
    check_layout=True,
    check_stride=False,
    msg=None,
):
    """assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None, equal_nan=False, check_device=True, check_dtype=True, check_layout=True, check_stride=False, msg=None)

    Asserts that `actual` and `expected` are close: tensors, numbers, None, booleans, and
    sequences and mappings of them compared element by element. Tensors must match in shape (and
    in device, dtype, layout and stride as the flags ask) and in values up to
    |actual - expected| <= atol + rtol * |expected|; without rtol/atol the defaults by dtype are
    torch's (float16 1e-3/1e-5, bfloat16 1.6e-2/1e-5, float32 1.3e-6/1e-5, float64 1e-7/1e-7,
    others exact). A failure raises AssertionError with torch's message (mismatched elements, the
    greatest absolute and relative differences and their indices); `msg` replaces it, or, as a
    callable, edits it.
    """  # noqa: E501
    __tracebackhide__ = True
    options = dict(
        allow_subclasses=allow_subclasses,
        rtol=rtol,
        atol=atol,
        equal_nan=equal_nan,
        check_device=check_device,
        check_dtype=check_dtype,
        check_layout=check_layout,
        check_stride=check_stride,
    )
    try:
        for pair in _originate(actual, expected, (), options):
            pair.compare()
    except _Failure as failure:
        raise failure.to_error(msg) from None
