"""Tensor methods and properties of torch's that the binding lacked (session 12): the sparse
accessors on a dense tensor (torch's errors; ember.sparse's class has its own), the deprecated
forms programs still call (resize, volatile, reinforce), storage identity (is_set_to,
slice_inverse), module_load (nn.Module.load_state_dict's hook), map2_, smm/sspaddmm, and the
device queries that are constants on ember's CPU tensors. _tensor_methods fills them into Tensor
(FILL: never over a binding's method)."""

import functools
import warnings

__all__ = []


def _named(name, sig, doc):
    def deco(fn):
        fn.__name__ = fn.__qualname__ = name
        fn.__doc__ = f"{name}{sig}\n\n{doc}"
        return fn

    return deco


def _sparse_only(name, kind):
    layout = f"sparse {kind} tensor layout" if kind else "sparse tensor layout"

    @_named(name, "() -> Tensor", f"Only for tensors of {layout}: raises on a dense one.")
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected {layout} but got Strided")

    return method


def _not_on_cpu(name, exc, text):
    @_named(name, "(device=None, non_blocking=False) -> Tensor", f"Raises: {text}.")
    def method(self, *args, **kwargs):
        raise exc(text)

    return method


def _no_cpu_kernel(name, sig):
    @_named(name, sig, "No CPU kernel for a strided tensor (torch's NotImplementedError).")
    def method(self, *args, **kwargs):
        raise NotImplementedError(
            f"Could not run 'aten::{name}' with arguments from the 'CPU' backend. This could be "
            "because the operator doesn't exist for this backend"
        )

    return method


@_named(
    "storage_type",
    "() -> type",
    "The class of self.storage() (ember has one typed storage class for every dtype).",
)
def storage_type(self):
    return type(self.storage())


@_named("is_distributed", "() -> bool", "False: ember tensors are never distributed tensors.")
def is_distributed(self):
    return False


@_named(
    "is_set_to",
    "(tensor) -> bool",
    "Whether self and tensor share one storage, with the same offset, sizes and strides.",
)
def is_set_to(self, tensor):
    return (
        self._storage_ptr() == tensor._storage_ptr()
        and self.storage_offset() == tensor.storage_offset()
        and tuple(self.shape) == tuple(tensor.shape)
        and tuple(self.stride()) == tuple(tensor.stride())
    )


@_named(
    "slice_inverse",
    "(src, dim=0, start=None, end=None, step=1) -> Tensor",
    "The inverse of slicing src: a view of self's storage with src's sizes, strides and offset.",
)
def slice_inverse(self, src, dim=0, start=None, end=None, step=1):
    return self.as_strided(tuple(src.shape), tuple(src.stride()), src.storage_offset())


@_named(
    "reinforce",
    "(reward) -> None",
    "Removed from torch (raises RuntimeError naming torch.distributions as the replacement).",
)
def reinforce(self, reward):
    raise RuntimeError(
        "reinforce() was removed.\nUse torch.distributions instead.\n"
        "See https://pytorch.org/docs/main/distributions.html"
    )


@_named(
    "resize",
    "(*sizes) -> Tensor",
    "Deprecated: a differentiable reshape that keeps the number of elements (warns).",
)
def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    n = functools.reduce(lambda a, b: a * b, sizes, 1)
    if n != self.numel():
        want = "x".join(str(s) for s in sizes)
        have = "x".join(str(s) for s in self.shape)
        raise RuntimeError(
            f"requested resize to {want} ({n} elements in total), but the given tensor has a "
            f"size of {have} ({self.numel()} elements). autograd's resize can only change the "
            "shape of a given tensor, while preserving the number of elements. "
        )
    return self.contiguous().view(sizes)


@_named(
    "module_load",
    "(other, assign=False) -> Tensor",
    "What nn.Module.load_state_dict puts in place of self: other.detach() when assign, else "
    "self.copy_(other).detach().",
)
def module_load(self, other, assign=False):
    if assign:
        return other.detach()
    return self.copy_(other).detach()


@_named(
    "map2_",
    "(x, y, callable) -> Tensor",
    "In place: each element becomes callable(self_i, x_i, y_i), x and y broadcast to self.",
)
def map2_(self, x, y, callable):
    from .creation import tensor as _tensor

    xs = x.expand(self.shape).reshape(-1).tolist()
    ys = y.expand(self.shape).reshape(-1).tolist()
    flat = self.reshape(-1).tolist()
    out = [callable(a, b, c) for a, b, c in zip(flat, xs, ys)]
    return self.copy_(_tensor(out, dtype=self.dtype).reshape(self.shape))


@_named(
    "smm",
    "(mat2) -> Tensor",
    "The sparse self times the dense mat2, as a sparse tensor (torch.smm).",
)
def smm(self, mat2):
    if not getattr(self, "is_sparse", False):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    return (self.to_dense() @ mat2).to_sparse()


@_named(
    "sspaddmm",
    "(mat1, mat2, *, beta=1, alpha=1) -> Tensor",
    "beta * self + alpha * (mat1 @ mat2), self and mat1 sparse, as a sparse tensor.",
)
def sspaddmm(self, mat1, mat2, *, beta=1, alpha=1):
    if not getattr(self, "is_sparse", False):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    dense = mat1.to_dense() if getattr(mat1, "is_sparse", False) else mat1
    return (self.to_dense() * beta + (dense @ mat2) * alpha).to_sparse()


def _volatile(self):
    warnings.warn("volatile was removed (Variable.volatile is always False)", stacklevel=2)
    return False


METHODS = {
    "indices": _sparse_only("indices", "coordinate"),
    "values": _sparse_only("values", ""),
    "coalesce": _sparse_only("coalesce", "coordinate"),
    "is_coalesced": _sparse_only("is_coalesced", "coordinate"),
    "crow_indices": _sparse_only("crow_indices", "row compressed"),
    "col_indices": _sparse_only("col_indices", "row compressed"),
    "ccol_indices": _sparse_only("ccol_indices", "column compressed"),
    "row_indices": _sparse_only("row_indices", "column compressed"),
    "is_distributed": is_distributed,
    "is_set_to": is_set_to,
    "slice_inverse": slice_inverse,
    "reinforce": reinforce,
    "resize": resize,
    "module_load": module_load,
    "map2_": map2_,
    "smm": smm,
    "sspaddmm": sspaddmm,
    "storage_type": storage_type,
    "to_padded_tensor": _no_cpu_kernel("to_padded_tensor", "(padding, output_size=None) -> Tensor"),
    "resize_as_sparse_": _no_cpu_kernel("resize_as_sparse_", "(the_template) -> Tensor"),
    "sparse_resize_": _no_cpu_kernel("sparse_resize_", "(size, sparse_dim, dense_dim) -> Tensor"),
    "sparse_resize_and_clear_": _no_cpu_kernel(
        "sparse_resize_and_clear_", "(size, sparse_dim, dense_dim) -> Tensor"
    ),
    "ipu": _not_on_cpu("ipu", RuntimeError, "PyTorch is not linked with support for ipu devices"),
    "xpu": _not_on_cpu("xpu", AssertionError, "Torch not compiled with XPU enabled"),
    "mtia": _not_on_cpu("mtia", AssertionError, "Torch not compiled with MTIA enabled"),
}

_FALSE = ("is_ipu", "is_maia", "is_mkldnn", "is_mtia", "is_vulkan", "is_xla")

PROPERTIES = {name: (lambda self: False) for name in _FALSE}
PROPERTIES.update(
    {
        "name": lambda self: None,
        "volatile": _volatile,
        "grad_dtype": lambda self: self.dtype,
    }
)

PROPERTY_DOCS = {
    name: f"{name} -> bool\n\nFalse: every ember tensor is a strided CPU tensor." for name in _FALSE
}
PROPERTY_DOCS.update(
    {
        "name": "name -> None\n\nNone, as for torch's tensors outside TorchScript.",
        "volatile": "volatile -> bool\n\nRemoved from torch: always False (warns).",
        "grad_dtype": "grad_dtype -> dtype\n\nThe dtype a gradient of this tensor has: its own.",
    }
)
