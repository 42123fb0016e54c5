"""ember.sparse: sparse COO and CSR tensors and the functions of torch.sparse.

The tensors are made by ember.sparse_coo_tensor, ember.sparse_csr_tensor, Tensor.to_sparse and
Tensor.to_sparse_csr; see _tensor.py for how they are stored and docs/ARCHITECTURE.md ("Sparse
tensors") for why.
"""

import functools

from .. import _C
from . import _ops, _pattern_ops, _shape_ops
from . import _tensor as st
from ._tensor import SparseTensor, sparse_coo_tensor, sparse_csr_tensor

__all__ = ["addmm", "log_softmax", "mm", "softmax", "sum"]

# torch.sparse names outside its __all__
sampled_addmm = _pattern_ops.sampled_addmm
spdiags = _pattern_ops.spdiags


def mm(mat1, mat2, reduce="sum"):
    """mm(mat1, mat2, reduce='sum') -> Tensor

    The matrix product with a sparse operand: sparse @ dense and dense @ sparse are dense,
    sparse @ sparse is sparse. The gradient of a sparse operand is sparse, of its pattern."""
    if reduce != "sum":
        raise NotImplementedError("ember.sparse.mm: only reduce='sum' is supported")
    return _ops.mm(mat1, mat2)


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """addmm(mat, mat1, mat2, *, beta=1., alpha=1.) -> Tensor

    beta * mat + alpha * (mat1 @ mat2) with a sparse mat1."""
    return _ops.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


def sum(input, dim=None, dtype=None):  # noqa: A001  (torch.sparse.sum)
    """sum(input, dim=None, dtype=None) -> Tensor

    The sum of the stored entries over dim (all dims: a dense 0-d tensor); the result stays
    sparse while sparse dims remain."""
    if not isinstance(input, SparseTensor):
        return input.sum() if dim is None else input.sum(dim, dtype=dtype)
    return _ops.sparse_sum(input, dim, dtype)


def softmax(input, dim, *, dtype=None):
    """softmax(input, dim, *, dtype=None) -> Tensor

    softmax over the stored entries along dim: entries not stored count as -inf (they stay
    absent), so each group of stored entries sums to one."""
    return _ops.softmax(input, dim, dtype)


def log_softmax(input, dim, *, dtype=None):
    """log_softmax(input, dim, *, dtype=None) -> Tensor

    log of sparse.softmax over the stored entries along dim."""
    return _ops.log_softmax(input, dim, dtype)


# --- what ember and Tensor get ----------------------------------------------------------------


def _to_dense(self, dtype=None, *, masked_grad=None):
    """to_dense(dtype=None, *, masked_grad=None) -> Tensor

    The dense tensor (self itself when it is already dense)."""
    if isinstance(self, SparseTensor):
        return st.to_dense(self, dtype)
    return self if dtype is None else self.to(dtype)


def _to_sparse(self, *args, **kwargs):
    """to_sparse(sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None) -> Tensor

    The nonzero entries as a coalesced sparse COO tensor (the leading sparse_dim dims sparse,
    the rest stored densely in each value)."""
    return st.dense_to_sparse(self, *args, **kwargs)


def _to_sparse_csr(self, dense_dim=None):
    """to_sparse_csr(dense_dim=None) -> Tensor

    The 2-D tensor in CSR layout."""
    if dense_dim:
        raise NotImplementedError("to_sparse_csr: dense dims are not supported")
    return st.dense_to_csr(self)


def _to_sparse_coo(self):
    """to_sparse_coo() -> Tensor

    The tensor in COO layout."""
    return st.dense_to_sparse(self)


def _sparse_mask(self, mask):
    """sparse_mask(mask) -> Tensor

    self's values at the entries of the sparse tensor mask, as a sparse tensor of mask's
    pattern."""
    return _ops.sparse_mask(self, mask)


def _false(self):
    return False


def _sparse_dim_dense(self):
    """sparse_dim() -> int

    0 for a dense tensor."""
    return 0


def _dense_dim_dense(self):
    """dense_dim() -> int

    Every dim of a dense tensor."""
    return self.dim()


def dense_tensor_methods():
    """{name: attribute} for Tensor's table (ember/_ops/_tensor_methods.py)."""
    return {
        "to_dense": _to_dense,
        "to_sparse": _to_sparse,
        "to_sparse_csr": _to_sparse_csr,
        "to_sparse_coo": _to_sparse_coo,
        "sparse_mask": _sparse_mask,
        "sparse_dim": _sparse_dim_dense,
        "dense_dim": _dense_dim_dense,
        "is_sparse_csr": property(_false, doc="is_sparse_csr -> bool\n\nFalse for a dense tensor."),
    }


def _method(fn, name, doc=None):
    @functools.wraps(fn)
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)

    method.__name__ = name
    if doc:
        method.__doc__ = doc
    return method


def _unsupported(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"{name}: not supported for sparse tensors (layout {self.layout!r}); call "
            "to_dense() first"
        )

    method.__name__ = name
    method.__doc__ = f"{name}(...)\n\nRaises: not supported for sparse tensors."
    return method


# Tensor methods that are right for a sparse tensor as the binding has them (they act on the
# autograd identity, which is the values', or say nothing about the layout).
_KEEP = set(
    "requires_grad_ backward register_hook retain_grad element_size is_floating_point is_complex "
    "get_device is_signed is_inference is_shared is_pinned pin_memory share_memory_ detach_ "
    "register_post_accumulate_grad_hook dim_order is_set_to is_nonzero is_same_size "
    "smm sspaddmm".split()  # these two take sparse self (ember/_ops/tensor_api_s12.py)
)
_OPERATOR_DUNDERS = (
    "__getitem__ __setitem__ __lt__ __le__ __gt__ __ge__ __and__ __or__ __xor__ __mod__ "
    "__floordiv__ __rfloordiv__ __rpow__ __rtruediv__ __iter__ __invert__ __lshift__ "
    "__rshift__ __array__ __index__ __iadd__ __isub__ __itruediv__ __imatmul__"
).split()


def _sparse_class_methods():
    from .._C import Tensor

    methods = {
        "to_dense": _method(st.to_dense, "to_dense", _to_dense.__doc__),
        "to_sparse": _method(st.dense_to_sparse, "to_sparse", _to_sparse.__doc__),
        "to_sparse_csr": _method(st.dense_to_csr, "to_sparse_csr", _to_sparse_csr.__doc__),
        "to_sparse_coo": _method(st.dense_to_sparse, "to_sparse_coo", _to_sparse_coo.__doc__),
        "coalesce": _method(
            st.coalesce,
            "coalesce",
            "coalesce() -> Tensor\n\nSorted unique indices, the values of duplicates summed.",
        ),
        "t": _ops.t,
        "transpose": _ops.transpose,
        "mm": _ops.mm,
        "matmul": _ops.matmul,
        "__matmul__": _ops.matmul,
        "__rmatmul__": lambda self, other: _ops.matmul(other, self),
        "mul": _ops.mul,
        "__mul__": _ops.mul,
        "__rmul__": _ops.mul,
        "div": _ops.div,
        "__truediv__": _ops.div,
        "add": _ops.add,
        "__add__": _ops.add,
        "__radd__": lambda self, other: _ops.add(other, self),
        "sub": _ops.sub,
        "__sub__": _ops.sub,
        "__rsub__": lambda self, other: _ops.sub(other, self),
        "neg": _ops.neg,
        "__neg__": _ops.neg,
        "negative": _ops.neg,
        "pow": _ops.pow,
        "__pow__": _ops.pow,
        "to": _ops.to,
        "sum": lambda self, dim=None, keepdim=False, dtype=None: _ops.sparse_sum(self, dim, dtype),
        "softmax": lambda self, dim, dtype=None: _ops.softmax(self, dim, dtype),
        "log_softmax": lambda self, dim, dtype=None: _ops.log_softmax(self, dim, dtype),
        "zero_": _ops.zero_,
        "mul_": _ops.mul_,
        "__imul__": _ops.mul_,
        "add_": _ops.add_,
        "sparse_mask": _ops.sparse_mask,
        "unsqueeze": _shape_ops.unsqueeze,
        "index_select": _shape_ops.index_select,
        "norm": _shape_ops.norm,
        "cpu": lambda self, memory_format=None: self,
        "float": lambda self, memory_format=None: _ops.to(self, st._C.float32),
        "double": lambda self, memory_format=None: _ops.to(self, st._C.float64),
        "half": lambda self, memory_format=None: _ops.to(self, st._C.float16),
        "bfloat16": lambda self, memory_format=None: _ops.to(self, st._C.bfloat16),
        "long": lambda self, memory_format=None: _ops.to(self, st._C.int64),
        "int": lambda self, memory_format=None: _ops.to(self, st._C.int32),
        "bool": lambda self, memory_format=None: _ops.to(self, st._C.bool),
    }
    for name in _ops.ZERO_PRESERVING:
        methods[name] = _ops.unary(name)
    methods["__abs__"] = methods["abs"]
    for name, fn in list(methods.items()):
        if getattr(fn, "__name__", "") == "<lambda>":
            fn.__name__ = name
    own = set(vars(SparseTensor)) | set(methods)
    for name in dir(Tensor):
        if name in own or name in _KEEP:
            continue
        value = getattr(Tensor, name, None)
        public = not name.startswith("_") or name in _OPERATOR_DUNDERS
        if public and callable(value) and not isinstance(value, type):
            methods[name] = _unsupported(name)
    return methods


def guarded_functions(namespace):
    """{name: function} for the package root: these functions take their sparse path when an
    operand is a sparse tensor, and run as before otherwise."""
    paths = {
        "mm": _ops.mm,
        "matmul": _ops.matmul,
        "addmm": lambda input, mat1, mat2, *, beta=1, alpha=1, out=None: _ops.addmm(
            input, mat1, mat2, beta=beta, alpha=alpha
        ),
        "mul": _ops.mul,
        "add": _ops.add,
        "sub": _ops.sub,
        "div": _ops.div,
        "neg": _ops.neg,
        "negative": _ops.neg,
        "t": _ops.t,
        "transpose": _ops.transpose,
        "sum": lambda input, dim=None, keepdim=False, *, dtype=None: _ops.sparse_sum(
            input, dim, dtype
        ),
        "pow": _ops.pow,
        "norm": _shape_ops.norm,
        "zeros_like": _shape_ops.zeros_like,
        "empty_like": _shape_ops.zeros_like,
        "cat": _shape_ops.cat,
        "stack": _shape_ops.stack,
        "unsqueeze": _shape_ops.unsqueeze,
        "index_select": lambda input, dim, index, *, out=None: _shape_ops.index_select(
            input, dim, index
        ),
    }
    for name in _ops.ZERO_PRESERVING:
        paths[name] = _ops.unary(name)
    paths["concat"] = paths["concatenate"] = paths["cat"]
    paths["absolute"] = paths["abs"]
    paths["multiply"], paths["subtract"] = paths["mul"], paths["sub"]
    paths["divide"] = paths["true_divide"] = paths["div"]
    out = {}
    for name, path in paths.items():
        orig = namespace.get(name)
        if orig is not None:
            out[name] = _guard(orig, path)
    from ._method_guards import function_guards

    # every other binding function refuses a sparse argument instead of reading its values
    out.update(function_guards(namespace, set(out)))
    out["smm"] = _smm
    out["sparse_coo_tensor"] = sparse_coo_tensor
    out["sparse_csr_tensor"] = sparse_csr_tensor
    for name in ("sparse_coo", "sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        out[name] = getattr(st, name)
    return out


# nn.functional's activations that would read a sparse argument's values array: relu and tanh
# (and tanhshrink, from them) take their sparse forms, the alpha dropouts pass the input through
# when not training, and the rest refuse, as torch's dispatcher does.
_F_SPARSE_REFUSED = (
    "celu dropout elu gelu glu hardshrink hardsigmoid hardswish hardtanh leaky_relu logsigmoid "
    "mish relu6 rrelu selu sigmoid silu softplus softshrink softsign"
).split()


def _passthrough_dropout(name):
    def path(input, p=0.5, training=False, inplace=False):
        if not training:
            return input
        from ._method_guards import _refuse

        _refuse(name, (input,), {})

    return path


def functional_guards(namespace):
    """{name: guard} for ember.nn.functional (which installs them in its own namespace)."""
    from ._method_guards import _refuse

    relu, tanh = _ops.unary("relu"), _ops.unary("tanh")
    paths = {
        "relu": lambda input, inplace=False: relu(input),
        "tanh": lambda input: tanh(input),
        "tanhshrink": lambda input: _ops.sub(input, tanh(input)),
        "alpha_dropout": _passthrough_dropout("alpha_dropout"),
        "feature_alpha_dropout": _passthrough_dropout("feature_alpha_dropout"),
    }
    for name in _F_SPARSE_REFUSED:

        def path(*args, __name=name, **kwargs):
            _refuse(__name, args, kwargs)

        paths[name] = path
    return {
        name: _guard(namespace[name], path) for name, path in paths.items() if name in namespace
    }


def _smm(input, mat):
    """smm(input, mat) -> Tensor

    The product of the sparse matrix input with the dense matrix mat, as a sparse tensor (as
    Tensor.smm)."""
    return _ops.mm(input, mat).to_sparse()


def _guard(orig, path):
    """orig behind ember._C._sparse_guard: calls with a sparse operand go to path (checked in
    C++, so a dense call costs no Python frame)."""
    return functools.update_wrapper(_C._sparse_guard(orig, path), orig)


def tensor_method_guards(attrs):
    """{name: guard} for Tensor's table (ember/_ops/_tensor_methods.py): its methods and
    operators behind the sparse guard (_method_guards.py)."""
    from ._method_guards import tensor_method_guards as guards

    return guards(attrs, _KEEP)


def install():
    """Puts the sparse tensors' methods on their class (after Tensor's table is installed, so
    that every Tensor method is either given a sparse form or refused)."""
    st._add_methods(_sparse_class_methods())
    _C._set_sparse_type(SparseTensor)
