"""View and in-place semantics that programs rely on: views share storage (view, slicing,
transpose, expand, unfold, diagonal, narrow, select, split), `_base`, `is_contiguous`, strides and
storage offsets, data_ptr, version counters, in-place ops through views reaching the base, and
autograd's errors for in-place misuse (leaf, modified saved tensor, views of leaves)."""

import torch


def info(name, t):
    base = t._base is not None
    print(
        f"{name} shape {tuple(t.shape)} stride {t.stride()} offset {t.storage_offset()} "
        f"contig {t.is_contiguous()} base {base}"
    )


def try_(name, fn):
    try:
        out = fn()
        print(f"{name} ok {out}")
    except Exception as e:  # noqa: BLE001 (the exception type is what is compared)
        print(f"{name} {type(e).__name__}")


def main():
    a = torch.arange(12.0)
    v = a.view(3, 4)
    info("view", v)
    info("t", v.t())
    info("slice", v[1:, ::2])
    info("select", v[:, 2])
    info("narrow", v.narrow(1, 1, 2))
    info("diag", v.diagonal())
    info("expand", torch.ones(3, 1).expand(3, 5))
    info("unfold", a.unfold(0, 4, 2))
    info("permute", torch.zeros(2, 3, 4).permute(2, 0, 1))
    info("unsqueeze", v.unsqueeze(1))
    info("reshape_view", v.t().reshape(12) if False else v.reshape(2, 6))
    info("reshape_copy", v.t().reshape(12))
    info("contig", v.t().contiguous())
    info("flatten", v.flatten())
    info("split", v.split(2, dim=1)[1])
    info("chunk", v.chunk(2, dim=0)[1])
    info("unbind", v.unbind(1)[3])
    info("as_strided", a.as_strided((2, 2), (1, 3), 1))
    info("movedim", torch.zeros(2, 3, 4).movedim(0, -1))
    info("real_index", v[[0, 2]])
    info("mask", v[v > 5])
    info("detach", v.detach())
    info("view_as", v.view_as(torch.zeros(2, 6)))
    info("squeeze", torch.zeros(1, 3, 1).squeeze())
    info("view_dtype", torch.zeros(4).view(torch.int32))

    # writes through views reach the base
    v[0, 0] = 100
    v.t()[1, 2] = -1
    v[:, 3].mul_(10)
    a.view(2, 6)[1].zero_()
    print("base_after", a.tolist())
    print("same_ptr", v.data_ptr() == a.data_ptr(), v[1].data_ptr() - a.data_ptr())
    print("shares_storage", v.untyped_storage().data_ptr() == a.untyped_storage().data_ptr())
    print("nbytes", a.untyped_storage().nbytes(), a.element_size(), a.nbytes, a.itemsize)
    c = v.clone()
    c.add_(1)
    print("clone_independent", a[0].item(), c[0, 0].item())

    # version counters
    t = torch.zeros(3)
    print("version0", t._version)
    t.add_(1)
    t[0] = 5
    t.mul_(2)
    w = t.view(3)
    w.sub_(1)
    print("versions", t._version, w._version)

    # in-place op broadcasting rules
    x = torch.ones(2, 3)
    x += torch.arange(3.0)
    print("iadd", x.tolist())
    try_("inplace_broadcast_out", lambda: torch.ones(3).add_(torch.ones(2, 3)))
    try_("inplace_int_float", lambda: torch.ones(3, dtype=torch.long).add_(0.5))
    try_("expand_write", lambda: torch.zeros(3, 1).expand(3, 4).add_(1))
    y = torch.zeros(2, dtype=torch.long)
    y += 3
    y *= 2
    print("long_inplace", y.tolist(), y.dtype)
    z = torch.ones(3)
    z.masked_fill_(torch.tensor([True, False, True]), -2.0).clamp_(min=-1).pow_(3)
    print("chained", z.tolist())

    # autograd with in-place ops
    leaf = torch.ones(3, requires_grad=True)
    try_("leaf_inplace", lambda: leaf.add_(1))
    with torch.no_grad():
        leaf.mul_(3)
    print("nograd_leaf", leaf.tolist(), leaf.requires_grad, leaf.is_leaf)
    p = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    s = p.sigmoid()
    s.mul_(2)

    def modified_saved():
        s.sum().backward()
        return p.grad.tolist()

    try_("sigmoid_inplace_backward", modified_saved)
    q = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    e = q.exp()
    e2 = e * 1
    e.add_(1)

    def modified_exp():
        e2.sum().backward()
        return [round(g, 4) for g in q.grad.tolist()]

    try_("exp_saved_output_modified", modified_exp)
    r = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    h = r * 2
    h[1] = 0.0
    h.relu_()
    h.sum().backward()
    print("grad_through_setitem", r.grad.tolist(), h.grad_fn.name())
    m = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    mm = m.clone()
    view = mm[:2]
    view.mul_(3)
    mm.sum().backward()
    print("grad_view_inplace", m.grad.tolist(), view.grad_fn.name())
    try_("view_of_leaf", lambda: m[:1].mul_(2))
    dv = m.detach()
    dv[0] = 9.0
    print("detach_shares", m.tolist())
    out = torch.empty(3)
    res = torch.add(torch.ones(3), 2, out=out)
    print("out_alias", res is out, out.tolist())
    try_("out_resize", lambda: torch.mul(torch.ones(2, 2), 3, out=torch.empty(1)).shape)
    data = torch.zeros(2)
    par = torch.nn.Parameter(torch.ones(2))
    par.data = data
    print("data_swap", par.data_ptr() == data.data_ptr(), type(par).__name__)
    k = torch.arange(6.0).view(2, 3)
    k.t_()
    print("t_", tuple(k.shape), k.stride())
    k.unsqueeze_(0).squeeze_(0).transpose_(0, 1)
    print("chain_", tuple(k.shape), k.stride())
    rs = torch.arange(4.0)
    rs.resize_(2, 2)
    print("resize_", rs.tolist())


if __name__ == "__main__":
    main()
