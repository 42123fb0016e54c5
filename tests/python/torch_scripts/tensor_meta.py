# ruff: noqa: E501
"""Code that inspects tensors rather than computing with them, as debugging utilities and library
internals do: _base and views, _version counters, is_leaf and grad_fn names along view chains,
storage sharing (data_ptr, storage_offset, untyped_storage), strides of transposes, expands and
channels_last, as_strided / unfold / set_ / resize_, and conj / resolve_conj / mH values."""

import torch

x = torch.arange(12.0).view(3, 4)
base = torch.arange(12.0)
v = base.view(3, 4)
print(
    "base_of",
    v._base.data_ptr() == base.data_ptr(),
    base._base is None,
    v[1:]._base.shape,
    v.t()._base.shape,
)
print("base_chain", v.view(-1)._base.shape, v.reshape(2, 6)._base.shape, v.contiguous()._base.shape)
print("is_view", v._is_view(), base._is_view(), v.clone()._is_view())
print("version0", base._version, v._version)
v.add_(1)
v[0, 0] = 5
print("version_after", base._version, v._version)
w = torch.zeros(3, requires_grad=True)
print("leaf", w.is_leaf, (w * 2).is_leaf, w.detach().is_leaf, w.grad_fn)
chain = w.unsqueeze(0).expand(2, 3)
print(
    "grad_fns",
    chain.grad_fn.name(),
    w[1:].grad_fn.name(),
    w.view(3, 1).grad_fn.name(),
    w.t().grad_fn.name() if w.dim() > 1 else "-",
    w.reshape(1, 3).grad_fn.name(),
)
print(
    "grad_fns2",
    w.as_strided((2,), (1,)).grad_fn.name(),
    w[[0, 2]].grad_fn.name(),
    w.unbind(0)[0].grad_fn.name(),
    w.narrow(0, 0, 2).grad_fn.name(),
)
print(
    "next_functions",
    [type(f[0]).__name__ if f[0] is not None else None for f in (w * 2 + 1).grad_fn.next_functions],
)
print("detach_shares", w.detach().data_ptr() == w.data_ptr(), w.detach()._base is None)

t = torch.arange(24.0).view(2, 3, 4)
s = t[:, 1:, ::2]
print("strides", t.stride(), s.stride(), s.storage_offset(), s.is_contiguous(), s.shape)
print(
    "transpose",
    t.transpose(0, 2).stride(),
    t.transpose(0, 2).is_contiguous(),
    t.permute(2, 0, 1).contiguous().stride(),
)
e = torch.tensor([1.0, 2.0]).expand(3, 2)
print("expand", e.stride(), e.is_contiguous(), e.contiguous().stride())
img = torch.zeros(2, 3, 4, 5)
cl = img.contiguous(memory_format=torch.channels_last)
print(
    "channels_last",
    cl.stride(),
    cl.is_contiguous(),
    cl.is_contiguous(memory_format=torch.channels_last),
)
print(
    "storage",
    t.untyped_storage().nbytes(),
    s.untyped_storage().data_ptr() == t.untyped_storage().data_ptr(),
    t.element_size(),
    t.nbytes,
    s.nbytes,
)
print("same_storage", s.data_ptr() - t.data_ptr(), t.untyped_storage().size())
a = torch.arange(10.0)
print("as_strided", torch.as_strided(a, (3, 3), (2, 1), 1).tolist())
print("unfold", a.unfold(0, 4, 3).tolist(), a.unfold(0, 4, 3).stride())
b = torch.empty(0)
b.set_(a.untyped_storage(), 2, (2, 2), (3, 1))
print("set_", b.tolist(), b.is_set_to(a), b.storage_offset())
c = torch.arange(6.0)
c.resize_(2, 2)
print("resize_", c.tolist(), c.shape)
c.resize_as_(torch.zeros(3))
print("resize_as_", c.tolist())
print(
    "is_shared",
    a.is_shared(),
    a.is_pinned(),
    a.is_floating_point(),
    a.is_complex(),
    torch.is_nonzero(torch.tensor([1])),
)

z = torch.tensor([1 + 2j, 3 - 1j])
zc = z.conj()
print("conj_values", zc.tolist(), zc.resolve_conj().tolist(), torch.conj_physical(z).tolist())
print(
    "conj_mH", torch.tensor([[1 + 1j, 2j]]).mH.tolist(), torch.tensor([[1 + 1j]]).adjoint().tolist()
)
print(
    "conj_ops", (zc * z).tolist(), zc.abs().tolist(), torch.view_as_real(zc.resolve_conj()).tolist()
)
