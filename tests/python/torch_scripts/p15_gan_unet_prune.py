"""Three everyday training set-ups on synthetic data: a GAN step loop (two Adam optimizers, the
fake batch detached for the discriminator, BCEWithLogits on real/fake labels, an orthogonal
parametrization on the generator), a small U-Net (MaxPool down, ConvTranspose2d and bilinear
interpolate up, skip concatenation, BCE + soft Dice), and magnitude pruning with
torch.nn.utils.prune (l1/ln structured, global, custom mask, remove) while fine-tuning."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.nn.utils.parametrize as parametrize
import torch.nn.utils.prune as prune
from torch.nn.utils.parametrizations import orthogonal


def det_init(module, scale=0.5):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 2).sin() * scale)


# ---- GAN ----------------------------------------------------------------------------------
G = nn.Sequential(
    nn.Linear(3, 8), nn.LeakyReLU(0.2), nn.Linear(8, 8), nn.LeakyReLU(0.2), nn.Linear(8, 2)
)
D = nn.Sequential(nn.Linear(2, 8), nn.LeakyReLU(0.2), nn.Linear(8, 1))
det_init(G)
det_init(D)
with torch.no_grad():  # full rank: the QR of a rank-deficient weight is not unique
    G[2].weight.add_(torch.eye(8))
orthogonal(G[2])  # square: the matrix_exp map, started from the QR of the weight
print("orth", parametrize.is_parametrized(G[2], "weight"), type(G[2]).__name__)
W = G[2].weight
print("orth_check", torch.allclose(W.T @ W, torch.eye(8), atol=1e-5), round(W[0, 0].item(), 4))
opt_g = torch.optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))
opt_d = torch.optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
crit = nn.BCEWithLogitsLoss()
t = torch.linspace(0, 6.28, 16)
real = torch.stack([t.cos(), t.sin()], 1) * 2
z = torch.stack([t.sin(), (2 * t).cos(), t / 6.28 - 0.5], 1)
ones, zeros = torch.ones(16, 1), torch.zeros(16, 1)
for step in range(6):
    fake = G(z)
    d_loss = crit(D(real), ones) + crit(D(fake.detach()), zeros)
    opt_d.zero_grad()
    d_loss.backward()
    opt_d.step()
    g_loss = crit(D(fake), ones)
    opt_g.zero_grad()
    g_loss.backward()
    opt_g.step()
    if step % 2 == 0:
        print(f"gan {step} d {d_loss.item():.4f} g {g_loss.item():.4f}")
print("d_grad_from_g", D[0].weight.grad is not None, round(D[0].weight.grad.norm().item(), 4))
W = G[2].weight
print("orth_after", torch.allclose(W.T @ W, torch.eye(8), atol=1e-4))
print("orig", list(dict(G[2].parametrizations.weight.named_parameters())))
print("sd_keys", sorted(G.state_dict().keys()))
with parametrize.cached():
    a = G[2].weight
    print("cached_same", a is G[2].weight)
parametrize.remove_parametrizations(G[2], "weight", leave_parametrized=True)
print("removed", parametrize.is_parametrized(G[2]), type(G[2].weight).__name__)


# ---- U-Net ---------------------------------------------------------------------------------
def block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)
    )


class TinyUNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.enc1, self.enc2 = block(1, 4), block(4, 8)
        self.pool = nn.MaxPool2d(2)
        self.up = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.dec = block(8, 4)
        self.out = nn.Conv2d(4, 1, 1)
        self.aux = nn.Conv2d(8, 1, 1)

    def forward(self, x):
        e1 = self.enc1(x)
        e2 = self.enc2(self.pool(e1))
        d = self.dec(torch.cat([self.up(e2), e1], dim=1))
        aux = F.interpolate(self.aux(e2), size=x.shape[-2:], mode="bilinear", align_corners=True)
        return self.out(d), aux


def dice_loss(logits, target, eps=1.0):
    p = torch.sigmoid(logits)
    inter = (p * target).sum(dim=(2, 3))
    union = p.sum(dim=(2, 3)) + target.sum(dim=(2, 3))
    return 1 - ((2 * inter + eps) / (union + eps)).mean()


net = TinyUNet()
det_init(net, 0.3)
yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
img = torch.stack([((xx - c) ** 2 + (yy - c) ** 2).neg().div(6).exp() for c in (2.0, 5.0)])
img = img.unsqueeze(1)
mask = (img > 0.4).float()
opt = torch.optim.SGD(net.parameters(), lr=0.1, momentum=0.9, nesterov=True)
for step in range(5):
    out, aux = net(img)
    loss = F.binary_cross_entropy_with_logits(out, mask) + dice_loss(out, mask)
    loss = loss + 0.4 * F.binary_cross_entropy_with_logits(aux, mask)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(f"unet {step} {loss.item():.4f}")
net.eval()
with torch.no_grad():
    pred = (net(img)[0].sigmoid() > 0.5).float()
    iou = (pred * mask).sum() / ((pred + mask).clamp(max=1).sum() + 1e-6)
print("unet_iou", round(iou.item(), 4), pred.shape, out.grad_fn.name())
print("bn_stats", [round(v, 4) for v in net.enc1[1].running_mean.tolist()])


# ---- pruning -------------------------------------------------------------------------------
class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc2, self.fc3 = nn.Linear(6, 10), nn.Linear(10, 10), nn.Linear(10, 3)

    def forward(self, x):
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


m = MLP()
det_init(m)
prune.l1_unstructured(m.fc1, name="weight", amount=0.3)
prune.ln_structured(m.fc2, name="weight", amount=2, n=2, dim=0)
print("fc1_zeros", int((m.fc1.weight == 0).sum()), sorted(n for n, _ in m.fc1.named_buffers()))
print("fc2_rows", (m.fc2.weight.abs().sum(1) == 0).nonzero().flatten().tolist())
print("fc1_params", sorted(n for n, _ in m.fc1.named_parameters()), prune.is_pruned(m))
prune.global_unstructured(
    [(m.fc1, "weight"), (m.fc3, "weight")], pruning_method=prune.L1Unstructured, amount=20
)
hook = next(h for h in m.fc1._forward_pre_hooks.values() if isinstance(h, prune.BasePruningMethod))
print("container", type(hook).__name__, [type(p).__name__ for p in hook])
print("global_zeros", int((m.fc1.weight == 0).sum()), int((m.fc3.weight == 0).sum()))
prune.custom_from_mask(m.fc3, name="bias", mask=torch.tensor([1.0, 0.0, 1.0]))
x = torch.linspace(-1, 1, 24).reshape(4, 6)
y = torch.tensor([0, 1, 2, 1])
opt = torch.optim.SGD(m.parameters(), lr=0.2)
for step in range(4):
    loss = F.cross_entropy(m(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
print("prune_loss", round(loss.item(), 4), int((m.fc1.weight == 0).sum()), m.fc3.bias[1].item())
print("orig_grad_masked", int((m.fc1.weight_orig.grad == 0).sum()) >= 18)
for mod, name in [(m.fc1, "weight"), (m.fc2, "weight"), (m.fc3, "weight"), (m.fc3, "bias")]:
    prune.remove(mod, name)
print("after_remove", sorted(m.state_dict().keys()), prune.is_pruned(m))
sparsity = sum(int((p == 0).sum()) for p in m.parameters()) / sum(p.numel() for p in m.parameters())
print("sparsity", round(sparsity, 4))
try:
    prune.remove(m.fc1, "weight")
except ValueError as e:
    print("remove_err", e)
