# ruff: noqa: E501
"""Sparse and complex tensors in everyday code: a COO adjacency built with duplicates and
coalesced, sparse @ dense with gradients to the dense side and to the values, sparse.sum and
sparse.softmax, CSR conversion and its index arrays, Embedding(sparse=True) trained by
SparseAdam; complex: conj / resolve_conj, polar/angle, a complex linear layer trained on |z|^2,
FFT convolution against conv1d, and an STFT/ISTFT round trip."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F


def main():
    idx = torch.tensor([[0, 1, 1, 2, 0, 3], [1, 0, 2, 1, 1, 3]])
    val = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    A = torch.sparse_coo_tensor(idx, val, (4, 4))
    print(f"coo {A.is_sparse} {A.layout} coalesced {A.is_coalesced()} nnz {A._nnz()}")
    C = A.coalesce()
    print(f"coalesce {C.indices().tolist()} {C.values().tolist()}")
    print(f"dense {C.to_dense().tolist()}")
    X = torch.cos(torch.arange(12, dtype=torch.float32)).view(4, 3).requires_grad_()
    Y = torch.sparse.mm(C, X)
    Y.sum().backward()
    print(f"spmm {[round(v, 5) for v in Y.sum(1).tolist()]} dense_grad {X.grad[:, 0].tolist()}")
    vals = C.values().clone().requires_grad_()
    Av = torch.sparse_coo_tensor(C.indices(), vals, (4, 4))
    (torch.sparse.mm(Av, X.detach())).pow(2).sum().backward()
    print(f"value_grad {[round(v, 4) for v in vals.grad.tolist()]}")
    print(
        f"matmul_op {torch.allclose(C @ X.detach(), C.to_dense() @ X.detach())} addmm {torch.allclose(torch.addmm(torch.ones(4, 3), C, X.detach()), 1 + C.to_dense() @ X.detach())}"
    )
    print(
        f"sparse_sum {torch.sparse.sum(C).item()} dim1 {torch.sparse.sum(C, dim=1).to_dense().tolist()}"
    )
    sm = torch.sparse.softmax(C, dim=1).to_dense()
    print(f"sparse_softmax {[round(v, 5) for v in sm[1].tolist()]}")
    csr = C.to_sparse_csr()
    print(
        f"csr {csr.layout} crow {csr.crow_indices().tolist()} col {csr.col_indices().tolist()} vals {csr.values().tolist()}"
    )
    print(
        f"csr_mv {(csr @ torch.ones(4)).tolist()} back {torch.equal(csr.to_dense(), C.to_dense())}"
    )
    print(
        f"to_sparse {torch.eye(3).to_sparse().indices().tolist()} mul {(C * 2).coalesce().values().tolist()}"
    )
    print(f"sparse_add {(C + C).coalesce().values().tolist()}")

    emb = nn.Embedding(10, 3, sparse=True)
    with torch.no_grad():
        emb.weight.copy_(torch.sin(torch.arange(30, dtype=torch.float32)).view(10, 3))
    opt = torch.optim.SparseAdam(emb.parameters(), lr=0.1)
    ids = torch.tensor([[1, 2, 4], [4, 3, 2]])
    for _ in range(3):
        loss = emb(ids).pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    g = emb.weight.grad
    print(f"sparse_grad {g.is_sparse} {g.coalesce().indices().tolist()} loss {loss.item():.5f}")
    print(
        f"untouched_row {emb.weight[0].tolist() == torch.sin(torch.arange(3, dtype=torch.float32)).tolist()}"
    )

    z = torch.tensor([1 + 2j, 3 - 1j, -0.5j], dtype=torch.complex64)
    zc = z.conj()
    print(
        f"conj {zc.tolist()} resolved {zc.resolve_conj().tolist()} physical {torch.conj_physical(z).tolist()}"
    )
    print(f"conj_of_real {torch.ones(2).conj().tolist()} imag {zc.imag.tolist()}")
    p = torch.polar(torch.tensor([2.0, 1.0]), torch.tensor([math.pi / 2, math.pi]))
    print(
        f"polar {[(round(c.real, 5), round(c.imag, 5)) for c in p.tolist()]} angle {torch.angle(z).tolist()} abs {z.abs().tolist()}"
    )
    print(f"complex_mm {(z.unsqueeze(0) @ zc.unsqueeze(1)).item()} vdot {torch.vdot(z, z).item()}")
    lin = nn.Linear(2, 2, dtype=torch.cfloat)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[1 + 1j, 0.5], [-1j, 2 - 1j]]))
        lin.bias.zero_()
    inp = torch.tensor([[1 - 1j, 0.5 + 0.5j]])
    opt = torch.optim.SGD(lin.parameters(), lr=0.05)
    for _ in range(5):
        loss = lin(inp).abs().pow(2).sum()
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(
        f"complex_train {loss.item():.5f} w00 {lin.weight[0, 0].item()} grad_dtype {lin.weight.grad.dtype}"
    )

    sig = torch.sin(torch.arange(32, dtype=torch.float32) * 0.4)
    ker = torch.tensor([0.25, 0.5, 0.25, -0.1])
    n = sig.numel() + ker.numel() - 1
    fft_conv = torch.fft.irfft(torch.fft.rfft(sig, n) * torch.fft.rfft(ker, n), n)
    ref = F.conv1d(F.pad(sig, (3, 3)).view(1, 1, -1), ker.flip(0).view(1, 1, -1)).flatten()
    print(f"fft_conv {torch.allclose(fft_conv, ref, atol=1e-5)} {fft_conv[:3].tolist()}")
    win = torch.hann_window(16)
    spec = torch.stft(sig, n_fft=16, hop_length=4, window=win, return_complex=True)
    rec = torch.istft(spec, n_fft=16, hop_length=4, window=win, length=32)
    print(
        f"stft {tuple(spec.shape)} {spec.dtype} istft_ok {torch.allclose(rec, sig, atol=1e-5)} mag {spec.abs()[:3, 2].tolist()}"
    )
    img = torch.cos(torch.arange(64, dtype=torch.float32).view(8, 8) * 0.3)
    f2 = torch.fft.fftshift(torch.fft.fft2(img))
    low = torch.zeros(8, 8)
    low[2:6, 2:6] = 1
    smooth = torch.fft.ifft2(torch.fft.ifftshift(f2 * low)).real
    print(
        f"lowpass {smooth[0, :3].tolist()} energy_kept {(smooth.pow(2).sum() / img.pow(2).sum()).item():.5f}"
    )


if __name__ == "__main__":
    main()
