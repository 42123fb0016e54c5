# ruff: noqa: E501
"""Neural tangent kernels as the torch.func tutorial computes them: a small CNN made functional
with functional_call over detached params, the empirical NTK by Jacobian contraction (vmap over
jacrev, einsum over parameters) in full, trace and diagonal modes, the same kernel from
vector-Jacobian / Jacobian-vector products (vjp + vmap + jvp), jacfwd against jacrev, hessian of
a scalar loss in the parameters, and linearize's jvp function against jvp."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call, hessian, jacfwd, jacrev, jvp, linearize, vjp, vmap


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.37 + 0.013 * k * k + i) * scale).view_as(p))


class CNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3)
        self.conv2 = nn.Conv2d(4, 4, 3)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.adaptive_avg_pool2d(x, 1).flatten(1)
        return self.fc(x)


def fmt(t, n=6):
    return [round(v, 4) for v in t.flatten()[:n].tolist()]


def main():
    net = CNN()
    det_init(net)
    x_train = torch.cos(torch.arange(5 * 49, dtype=torch.float32) * 0.21).view(5, 1, 7, 7)
    x_test = torch.sin(torch.arange(3 * 49, dtype=torch.float32) * 0.17).view(3, 1, 7, 7)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    def ntk_jac(fnet_single, params, x1, x2, compute="full"):
        jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = [j.flatten(2) for j in jac1.values()]
        jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = [j.flatten(2) for j in jac2.values()]
        eq = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}[compute]
        return torch.stack([torch.einsum(eq, j1, j2) for j1, j2 in zip(jac1, jac2)]).sum(0)

    full = ntk_jac(fnet_single, params, x_train, x_test)
    print(f"ntk_full_shape {tuple(full.shape)} vals {fmt(full)}")
    trace = ntk_jac(fnet_single, params, x_train, x_test, "trace")
    diag = ntk_jac(fnet_single, params, x_train, x_test, "diagonal")
    print(
        f"ntk_trace {fmt(trace)} consistent {torch.allclose(trace, full.diagonal(dim1=2, dim2=3).sum(-1), atol=1e-5)}"
    )
    print(
        f"ntk_diag_shape {tuple(diag.shape)} consistent {torch.allclose(diag, full.diagonal(dim1=2, dim2=3), atol=1e-5)}"
    )

    def ntk_vps(fnet_single, params, x1, x2):
        def get_ntk(x1, x2):
            def func_x1(params):
                return fnet_single(params, x1)

            def func_x2(params):
                return fnet_single(params, x2)

            output, vjp_fn = vjp(func_x1, params)

            def get_ntk_slice(vec):
                vjps = vjp_fn(vec)
                _, jvps = jvp(func_x2, (params,), vjps)
                return jvps

            basis = torch.eye(output.numel(), dtype=output.dtype).view(output.numel(), -1)
            return vmap(get_ntk_slice)(basis)

        result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
        return result

    vps = ntk_vps(fnet_single, params, x_train, x_test)
    print(
        f"ntk_vps_shape {tuple(vps.shape)} match {torch.allclose(vps, full, atol=1e-4)} maxdiff_small {(vps - full).abs().max().item() < 1e-4}"
    )

    w = params["fc.weight"]

    def out_of_w(w):
        p = dict(params)
        p["fc.weight"] = w
        return fnet_single(p, x_train[0])

    jr = jacrev(out_of_w)(w)
    jf = jacfwd(out_of_w)(w)
    print(
        f"jac_shape {tuple(jr.shape)} fwd_eq_rev {torch.allclose(jr, jf, atol=1e-6)} vals {fmt(jr[0, 0])}"
    )

    target = torch.tensor([0, 2, 1, 1, 0])

    def loss_of_fc(w, b):
        p = dict(params)
        p["fc.weight"], p["fc.bias"] = w, b
        logits = functional_call(net, p, (x_train,))
        return F.cross_entropy(logits, target)

    H = hessian(loss_of_fc, argnums=(0, 1))(w, params["fc.bias"])
    print(f"hessian_shapes {[tuple(h.shape) for row in H for h in row]}")
    hb = H[1][1]
    print(
        f"hess_bias {fmt(hb, 9)} symmetric {torch.allclose(hb, hb.T, atol=1e-6)} psd {bool((torch.linalg.eigvalsh(hb) > -1e-6).all())}"
    )

    tangent = torch.cos(torch.arange(w.numel(), dtype=torch.float32)).view_as(w)
    out, jvp_fn = linearize(out_of_w, w)
    _, ref = jvp(out_of_w, (w,), (tangent,))
    print(
        f"linearize_out {fmt(out)} jvp {fmt(jvp_fn(tangent))} equal {torch.allclose(jvp_fn(tangent), ref, atol=1e-6)}"
    )


if __name__ == "__main__":
    main()
