"""A grab-bag of APIs a training script reaches for now and then: the Adafactor optimizer,
torch.vmap over a per-example function, registering and using a custom KL divergence, polygamma,
orthogonal_ and trunc_normal_ initialisation (checked through their properties, the draws depend
on the random stream), Hardshrink/Softshrink/Tanhshrink, FractionalMaxPool2d's output size,
parameters_to_vector / vector_to_parameters round trips, and lu_factor / lu_unpack / lu_solve."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Normal, kl_divergence, register_kl
from torch.distributions.kl import kl_divergence as kl_fn
from torch.nn.utils import parameters_to_vector, vector_to_parameters

torch.manual_seed(0)

# Adafactor on a small regression
w = nn.Parameter(torch.linspace(-1, 1, 12).reshape(3, 4))
b = nn.Parameter(torch.zeros(3))
opt = torch.optim.Adafactor([w, b], lr=0.05)
x = torch.linspace(-1, 1, 20).reshape(5, 4)
y = torch.linspace(0, 2, 15).reshape(5, 3)
losses = []
for _ in range(5):
    opt.zero_grad()
    loss = F.mse_loss(x @ w.T + b, y)
    loss.backward()
    opt.step()
    losses.append(round(loss.item(), 5))
print("adafactor_losses", losses)
print("adafactor_state", sorted(opt.state[w].keys()), sorted(opt.state[b].keys()))
print("adafactor_row_var", [round(v, 6) for v in opt.state[w]["row_var"].flatten().tolist()])
print("adafactor_defaults", sorted(opt.defaults))


# torch.vmap over a per-example function
def score(v, m):
    return (m @ v).tanh().sum()


vs = torch.linspace(-1, 1, 12).reshape(3, 4)
m = torch.linspace(-0.5, 0.5, 8).reshape(2, 4)
print("vmap", [round(t, 5) for t in torch.vmap(score, in_dims=(0, None))(vs, m).tolist()])
print(
    "vmap_nested", torch.vmap(torch.vmap(torch.dot))(vs.reshape(3, 2, 2), vs.reshape(3, 2, 2)).shape
)
print("vmap_out_dims", torch.vmap(lambda t: t * 2, out_dims=1)(vs).shape)


# a custom KL divergence
class Shifted(Normal):
    pass


@register_kl(Shifted, Normal)
def _kl_shifted(p, q):
    return kl_fn(Normal(p.loc, p.scale), q) + 1.0


p = Shifted(torch.tensor([0.0, 1.0]), torch.tensor([1.0, 2.0]))
q = Normal(torch.tensor([0.5, 0.0]), torch.tensor([1.5, 1.0]))
print("kl_normal", [round(t, 6) for t in kl_divergence(Normal(p.loc, p.scale), q).tolist()])
print("kl_custom", [round(t, 6) for t in kl_divergence(p, q).tolist()])

t = torch.tensor([0.5, 1.0, 2.5])
print("polygamma", [[round(v, 5) for v in torch.polygamma(n, t).tolist()] for n in range(3)])
print("digamma_eq", torch.allclose(torch.polygamma(0, t), torch.digamma(t)))

q_ = torch.empty(4, 6)
nn.init.orthogonal_(q_, gain=2.0)
print("orthogonal", torch.allclose(q_ @ q_.T, 4 * torch.eye(4), atol=1e-5))
tn = nn.init.trunc_normal_(torch.empty(1000), mean=0.0, std=1.0, a=-0.5, b=0.5)
print("trunc_normal_bounds", bool(tn.min() >= -0.5), bool(tn.max() <= 0.5))

z = torch.linspace(-2, 2, 9)
print("hardshrink", nn.Hardshrink(0.5)(z).tolist())
print("softshrink", [round(v, 4) for v in F.softshrink(z, 0.75).tolist()])
print("tanhshrink", [round(v, 4) for v in nn.Tanhshrink()(z).tolist()])

fmp = nn.FractionalMaxPool2d(3, output_size=(5, 4))
print("frac_pool", tuple(fmp(torch.ones(2, 3, 11, 9)).shape))
fmp2 = nn.FractionalMaxPool2d(2, output_ratio=0.5, return_indices=True)
out, idx = fmp2(torch.arange(64.0).reshape(1, 1, 8, 8))
print(
    "frac_pool_ratio",
    tuple(out.shape),
    idx.dtype,
    bool((out.flatten() == torch.arange(64.0)[idx.flatten()]).all()),
)

net = nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 1))
vec = parameters_to_vector(net.parameters())
print("p2v", vec.shape, vec.requires_grad)
vector_to_parameters(torch.arange(vec.numel(), dtype=torch.float32), net.parameters())
print("v2p", net[0].weight.tolist(), net[1].bias.tolist())

A = torch.tensor([[2.0, 1.0, 0.0], [4.0, 3.0, 1.0], [0.0, 1.0, 5.0]])
LU, piv = torch.linalg.lu_factor(A)
P, L, U = torch.lu_unpack(LU, piv)
print("lu_piv", piv.tolist())
print("lu_U", [[round(v, 4) for v in r] for r in U.tolist()])
print("lu_ok", torch.allclose(P @ L @ U, A))
print(
    "lu_solve",
    [round(v, 5) for v in torch.linalg.lu_solve(LU, piv, torch.ones(3, 1)).flatten().tolist()],
)
