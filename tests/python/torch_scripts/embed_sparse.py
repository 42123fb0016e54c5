# ruff: noqa: E501
"""Recommendation and NLP embedding code: EmbeddingBag in sum/mean/max with offsets,
include_last_offset, per_sample_weights and padding_idx; Embedding.from_pretrained (freeze,
padding_idx), max_norm renormalisation in place, scale_grad_by_freq, sparse gradients with
SparseAdam and SGD, F.embedding / F.embedding_bag, one_hot, and parameters_to_vector round trips
plus conv-bn fusion for inference."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import parameters_to_vector, vector_to_parameters
from torch.nn.utils.fusion import fuse_conv_bn_eval


def r(t, n=4):
    return round(float(t), n)


W = torch.sin(torch.arange(40, dtype=torch.float32) * 0.7).view(10, 4)
ids = torch.tensor([1, 2, 4, 5, 4, 3, 2, 9])
offsets = torch.tensor([0, 2, 2, 5])
for mode in ["sum", "mean", "max"]:
    bag = nn.EmbeddingBag.from_pretrained(W, mode=mode)
    out = bag(ids, offsets)
    print(f"bag_{mode}", tuple(out.shape), [r(v) for v in out.sum(1).tolist()])
bag = nn.EmbeddingBag.from_pretrained(W, mode="sum", include_last_offset=True)
print(
    "bag_last_offset",
    tuple(bag(ids, torch.tensor([0, 2, 5, 8])).shape),
    r(bag(ids, torch.tensor([0, 2, 5, 8])).sum()),
)
psw = torch.linspace(0.5, 2.0, 8)
print("bag_psw", r(F.embedding_bag(ids, W, offsets, mode="sum", per_sample_weights=psw).sum()))
bagp = nn.EmbeddingBag(10, 4, mode="mean", padding_idx=2)
with torch.no_grad():
    bagp.weight.copy_(W)
print("bag_padding_idx", [r(v) for v in bagp(ids, offsets).sum(1).tolist()])
print("bag_2d", tuple(nn.EmbeddingBag.from_pretrained(W)(ids.view(2, 4)).shape))
bg = nn.EmbeddingBag(10, 4, mode="mean")
with torch.no_grad():
    bg.weight.copy_(W)
bg(ids, offsets).pow(2).sum().backward()
print(
    "bag_grad",
    r(bg.weight.grad.sum()),
    bg.weight.grad[0].abs().sum().item(),
    bg.weight.grad[4].tolist() != [0.0] * 4,
)

emb = nn.Embedding.from_pretrained(W, freeze=True, padding_idx=0)
print(
    "from_pretrained",
    emb.weight.requires_grad,
    emb.padding_idx,
    r(emb(torch.tensor([[0, 3]])).sum()),
)
emb2 = nn.Embedding.from_pretrained(W.clone(), freeze=False, max_norm=1.0)
before = emb2.weight[ids].norm(dim=1).max().item()
o = emb2(ids)
print(
    "max_norm",
    round(before, 4),
    r(o.norm(dim=1).max()),
    r(emb2.weight[ids].norm(dim=1).max()),
    r(emb2.weight[0].norm()),
)
emb3 = nn.Embedding(10, 4, scale_grad_by_freq=True, padding_idx=3)
with torch.no_grad():
    emb3.weight.copy_(W)
emb3(ids).sum().backward()
print("scale_grad_by_freq", [r(v) for v in emb3.weight.grad.sum(1).tolist()])
print("padding_row_zero_init", nn.Embedding(5, 2, padding_idx=1).weight[1].tolist())

se = nn.Embedding(10, 4, sparse=True)
with torch.no_grad():
    se.weight.copy_(W)
se(ids).pow(2).sum().backward()
g = se.weight.grad
print(
    "sparse_grad",
    g.is_sparse,
    tuple(g.shape),
    r(g.to_dense().sum()),
    sorted(set(g.coalesce().indices()[0].tolist())),
)
opt = torch.optim.SparseAdam(se.parameters(), lr=0.1)
opt.step()
print("sparse_adam", r(se.weight.sum()), r(se.weight[0].sum()) == r(W[0].sum()))
se.weight.grad = None
se(ids).sum().backward()
torch.optim.SGD(se.parameters(), lr=0.5).step()
print("sparse_sgd", r(se.weight.sum()))
print("F_embedding", r(F.embedding(torch.tensor([[1, 2], [3, 0]]), W, padding_idx=0).sum()))
print(
    "one_hot",
    F.one_hot(torch.tensor([2, 0, 1])).tolist(),
    F.one_hot(torch.tensor([[1], [3]]), num_classes=5).shape,
    F.one_hot(torch.tensor([1])).dtype,
)
try:
    F.one_hot(torch.tensor([1.0]))
except Exception as e:
    print("one_hot_err", type(e).__name__, str(e)[:60])
try:
    emb(torch.tensor([10]))
except Exception as e:
    print("emb_oob", type(e).__name__, str(e)[:40])

net = nn.Sequential(
    nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Linear(64, 2)
)
with torch.no_grad():
    for i, p in enumerate(net.parameters()):
        p.copy_(torch.cos(torch.arange(p.numel(), dtype=torch.float32) * 0.3 + i).view_as(p) * 0.3)
    net[1].running_mean.copy_(torch.tensor([0.1, -0.2, 0.3, 0.0]))
    net[1].running_var.copy_(torch.tensor([1.5, 0.5, 2.0, 1.0]))
vec = parameters_to_vector(net.parameters())
print("p2v", tuple(vec.shape), r(vec.sum()))
vector_to_parameters(vec * 2, net.parameters())
print("v2p", r(parameters_to_vector(net.parameters()).sum()), r(net[4].bias.sum()))
vector_to_parameters(vec, net.parameters())
net.eval()
img = torch.sin(torch.arange(48, dtype=torch.float32)).view(1, 3, 4, 4)
fused = fuse_conv_bn_eval(net[0], net[1])
print(
    "fuse",
    type(fused).__name__,
    torch.allclose(fused(img), net[1](net[0](img)), atol=1e-5),
    r(fused.bias.sum()),
)
