"""The forward-mode rules that need no reverse graph: which calls carry tangents and how views,
linear, multilinear and arithmetic ops map their inputs' tangents (forward_ad dispatches here)."""

from .._C import Tensor

_property_names = {}


def _op_name(func):
    """The op's name; a Tensor property getter is named "property:<name>"."""
    name = getattr(func, "__name__", None)
    if name == "__get__":
        owner = getattr(func, "__self__", None)
        if id(owner) not in _property_names:
            from .. import overrides

            # While a mode is active, Tensor's attributes are routing wrappers; the getter
            # belongs to the original property, which the patch table keeps.
            for _cls, attr, original in list(overrides._patches):
                if original is owner:
                    _property_names[id(owner)] = "property:" + attr
        return _property_names.get(id(owner), "property:?")
    return name or repr(func)


# Properties that are views (their tangent is the same view of the tangent); other properties
# (shape, dtype, grad_fn, requires_grad, ...) pass through.
_VIEW_PROPERTIES = {
    "property:T": "T",
    "property:mT": "mT",
    "property:H": "H",
    "property:mH": "mH",
    "property:real": "real",
    "property:imag": "imag",
}

# Calls whose results are not tensors (or carry no tangent) and run untouched.
_PASS_THROUGH = frozenset(
    "size dim ndimension numel nelement stride storage_offset is_contiguous data_ptr "
    "element_size untyped_storage is_floating_point is_complex is_signed tolist item numpy "
    "__len__ __bool__ __int__ __float__ __index__ __format__ __repr__ __str__ __contains__ "
    "__hash__ equal allclose isclose eq ne lt le gt ge __eq__ __ne__ __lt__ __le__ __gt__ "
    "__ge__ logical_and logical_or logical_not logical_xor isnan isinf isfinite isreal signbit "
    "any all count_nonzero".split()
)


def _is_float(t):
    return isinstance(t, Tensor) and t.is_floating_point()


def _is_diff(t):
    """Floating or complex: a tensor the real-linear rules give a tangent (the rules built on
    reverse formulas take floating tensors only, see _complex_dual)."""
    return isinstance(t, Tensor) and (t.is_floating_point() or t.is_complex())


def _flat_tensors(args, kwargs):
    for a in (*args, *kwargs.values()):
        if isinstance(a, Tensor):
            yield a
        elif isinstance(a, (list, tuple)):
            for b in a:
                if isinstance(b, Tensor):
                    yield b


def _map_args(fn, args, kwargs):
    def one(a):
        if isinstance(a, Tensor):
            return fn(a)
        if isinstance(a, (list, tuple)) and any(isinstance(b, Tensor) for b in a):
            return type(a)(fn(b) if isinstance(b, Tensor) else b for b in a)
        return a

    return tuple(one(a) for a in args), {k: one(v) for k, v in kwargs.items()}


def _out_tensors(out):
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [o if isinstance(o, Tensor) else None for o in out]
    return []


def _zeros_tangent(t):
    from .._ops.creation import zeros_like

    return zeros_like(t)


def _conform(tangent, out):
    """The tangent given the output's shape and dtype (broadcast results get a full tangent)."""
    if tangent is None or not isinstance(tangent, Tensor):
        return None
    if tangent.dtype != out.dtype:
        tangent = tangent.to(out.dtype)
    if tuple(tangent.shape) != tuple(out.shape):
        tangent = tangent.expand(tuple(out.shape)).contiguous()
    return tangent


def _not_supported(name, cause=None):
    err = NotImplementedError(
        f"Trying to use forward AD with {name} that does not support it because it has not been "
        "implemented yet.\nPlease file an issue to PyTorch at https://github.com/pytorch/pytorch/"
        "issues/new?template=feature-request.yml so that we can prioritize its implementation or "
        "submit a PR adding the implementation to derivatives.yaml"
    )
    if cause is not None:
        err.__cause__ = cause
    return err


# Ops whose outputs never carry a tangent (torch marks them non-differentiable).
_NO_TANGENT = frozenset(
    "detach detach_ data requires_grad_ retain_grad register_hook backward numpy tolist item "
    "zeros_like ones_like empty_like full_like rand_like randn_like randint_like new_zeros "
    "new_ones new_empty new_full new_tensor share_memory_ pin_memory record_stream grad "
    "argmax argmin argsort nonzero bucketize searchsorted sign_bit isnan isinf isfinite "
    "dropout_mask bernoulli multinomial histc histogram bincount "
    "poisson rand randn randint one_hot".split()
)

# Ops torch gives no forward formula (a dual input raises), by the name torch's error uses: the
# short form for ops torch declares non-differentiable, the long one for those not implemented.
_UNSUPPORTED = {
    "floor_divide": "aten::floor_divide",
    "__floordiv__": "aten::floor_divide",
    "__rfloordiv__": "aten::floor_divide",
    "floor_divide_": "aten::floor_divide",
    "__ifloordiv__": "aten::floor_divide",
    "unique": "_unique2",
    "unique_consecutive": "unique_consecutive",
}


def _unsupported_error(name):
    target = _UNSUPPORTED[name]
    if target.startswith("aten::"):
        return NotImplementedError(
            f"Trying to use forward AD with {target} that does not support it."
        )
    return _not_supported(target)


# Ops linear in their floating tensor arguments together: the tangent is the same op applied to
# the tangents (zeros for floating inputs without one). Views among them give views of tangents.
_LINEAR = frozenset(
    "view view_as reshape reshape_as flatten unflatten ravel squeeze unsqueeze transpose "
    "swapaxes swapdims permute movedim moveaxis t T mT H mH expand broadcast_to select narrow "
    "diagonal unfold split split_with_sizes chunk unbind tensor_split hsplit vsplit dsplit "
    "__getitem__ as_strided contiguous clone flip fliplr flipud roll rot90 repeat tile "
    "repeat_interleave sum mean cumsum trace tril triu diag diag_embed diagflat neg negative "
    "__neg__ __pos__ positive to type float double half bfloat16 cpu cuda cat concat concatenate "
    "stack hstack vstack dstack column_stack row_stack real index_select gather take "
    "take_along_dim masked_select narrow_copy select_scatter_zero imag conj conj_physical "
    "resolve_conj resolve_neg view_as_real view_as_complex complex adjoint".split()
)
# ember.fft's transforms are real-linear too (all of them, the Hermitian ones included): a
# complex tangent goes through the same transform.
_FFT = frozenset(
    "fft ifft rfft irfft hfft ihfft fft2 ifft2 rfft2 irfft2 hfft2 ihfft2 fftn ifftn rfftn irfftn "
    "hfftn ihfftn fftshift ifftshift".split()
)
# expand_as/view_as/reshape_as/type_as take a second tensor for its shape or dtype only.
_SHAPE_ONLY_SECOND = frozenset("expand_as view_as reshape_as type_as".split())
_LINEAR = _LINEAR | _SHAPE_ONLY_SECOND | _FFT

# Ops multilinear in their floating tensor arguments: the tangent is the sum over each argument
# of the op with that argument replaced by its tangent.
_MULTILINEAR = frozenset(
    "mul multiply __mul__ __rmul__ matmul __matmul__ __rmatmul__ mm bmm mv dot vdot outer ger "
    "inner einsum tensordot kron stft".split()
)

# Elementwise ops of one tensor (scalar arguments aside): their Jacobian is diagonal, so when the
# op is a single autograd node its backward applied to the tangent is the forward derivative
# (torch's "auto_element_wise" formulas); one formula call instead of two backward passes.
_ELEMENTWISE = frozenset(
    "exp exp2 expm1 log log2 log10 log1p sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "asinh acosh atanh sigmoid erf erfc erfinv reciprocal sinc abs __abs__ absolute relu frac "
    "square relu6 gelu silu mish softplus elu selu celu leaky_relu hardtanh hardswish "
    "hardsigmoid logsigmoid softsign tanhshrink softshrink hardshrink threshold logit "
    "nan_to_num clamp clip clamp_min clamp_max pow __pow__ float_power digamma lgamma i0 expit "
    "arcsin arccos arctan arcsinh arccosh arctanh deg2rad rad2deg".split()
)

_INPLACE_DUNDERS = {
    "__iadd__": "add",
    "__isub__": "sub",
    "__imul__": "mul",
    "__itruediv__": "div",
    "__idiv__": "div",
    "__imatmul__": "matmul",
}


def _is_inplace(name):
    return name in _INPLACE_DUNDERS or (
        name.endswith("_") and not name.startswith("__") and name not in _NO_TANGENT
    )


def _linear_tangent(func, name, args, kwargs, tangents):
    def sub(a):
        if not _is_diff(a):
            return a
        t = tangents.get(id(a))
        return t if t is not None else _zeros_tangent(a)

    if name in _SHAPE_ONLY_SECOND:
        rest = args[1:]
        return func(sub(args[0]), *rest, **kwargs)
    targs, tkwargs = _map_args(sub, args, kwargs)
    return func(*targs, **tkwargs)


def _multilinear_tangent(func, args, kwargs, tangents):
    total = None
    positions = []
    for i, a in enumerate(args):
        if _is_diff(a) and id(a) in tangents:
            positions.append(("a", i))
        elif isinstance(a, (list, tuple)):
            for j, b in enumerate(a):
                if _is_diff(b) and id(b) in tangents:
                    positions.append(("l", i, j))
    for k, v in kwargs.items():
        if _is_diff(v) and id(v) in tangents:
            positions.append(("k", k))
    for pos in positions:
        a2, k2 = list(args), dict(kwargs)
        if pos[0] == "a":
            a2[pos[1]] = tangents[id(args[pos[1]])]
        elif pos[0] == "l":
            lst = list(args[pos[1]])
            lst[pos[2]] = tangents[id(lst[pos[2]])]
            a2[pos[1]] = type(args[pos[1]])(lst)
        else:
            k2[pos[1]] = tangents[id(kwargs[pos[1]])]
        term = func(*a2, **k2)
        total = term if total is None else total + term
    return total


def _arith_tangent(name, args, kwargs, out, tangents):
    """add/sub/div and their operator forms; None if the rule does not apply."""
    a = args[0]
    b = args[1] if len(args) > 1 else kwargs.get("other")
    ta = tangents.get(id(a)) if isinstance(a, Tensor) else None
    tb = tangents.get(id(b)) if isinstance(b, Tensor) else None
    alpha = kwargs.get("alpha", args[2] if len(args) > 2 and name in ("add", "sub") else 1)
    if name in ("add", "__add__", "__radd__", "sub", "subtract", "__sub__"):
        sign = -1 if name in ("sub", "subtract", "__sub__") else 1
        terms = []
        if ta is not None:
            terms.append(ta)
        if tb is not None:
            coef = sign * alpha
            terms.append(tb if coef == 1 else tb * coef)
        total = terms[0]
        for t in terms[1:]:
            total = total + t
        return total
    if name == "__rsub__":  # b - a
        return -ta if ta is not None else None
    if name in ("div", "divide", "true_divide", "__truediv__"):
        if kwargs.get("rounding_mode") is not None:
            return _zeros_tangent(out)
        num = None
        if ta is not None:
            num = ta
        if tb is not None:
            term = out * tb
            num = -term if num is None else num - term
        return num / b
    if name == "__rtruediv__":  # b / a
        return -(out * ta) / a if ta is not None else None
    return None


def _linear_fn_tangent(args, kwargs, tangents):
    from ..nn.functional import linear

    x = args[0]
    w = args[1] if len(args) > 1 else kwargs.get("weight")
    b = args[2] if len(args) > 2 else kwargs.get("bias")
    total = None
    for term in (
        linear(tangents[id(x)], w) if id(x) in tangents else None,
        linear(x, tangents[id(w)]) if isinstance(w, Tensor) and id(w) in tangents else None,
        tangents.get(id(b)) if isinstance(b, Tensor) else None,
    ):
        if term is not None:
            total = term if total is None else total + term
    return total


_ARITH = frozenset(
    "add __add__ __radd__ sub subtract __sub__ __rsub__ div divide true_divide __truediv__ "
    "__rtruediv__".split()
)


# Calls whose rules hold for complex tensors: the real-linear ops map complex tangents as they
# map real ones, and the products and quotients are complex-differentiable, so their formulas
# are the complex ones too.
_COMPLEX_SAFE = _LINEAR | _MULTILINEAR | _ARITH | frozenset({"linear"})
_COMPLEX_INPLACE = frozenset("add sub mul div copy".split())
_ABS = frozenset({"abs", "__abs__", "absolute"})


def _complex_dual(args, kwargs, tangents, inplace):
    """Whether the call involves complex tensors the rules built on reverse formulas do not
    cover: a complex input carrying a tangent, or an in-place op writing a complex tensor."""
    if any(t.is_complex() and id(t) in tangents for t in _flat_tensors(args, kwargs)):
        return True
    return inplace and isinstance(args[0], Tensor) and args[0].is_complex()


def _complex_abs_tangent(z, t):
    """|z|'s tangent for complex z: Re(conj(sgn z)·t), zero where z is zero (torch's rule)."""
    return (z.sgn().conj() * t).real
