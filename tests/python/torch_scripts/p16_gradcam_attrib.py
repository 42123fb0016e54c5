"""Model interpretability as tutorials write it: Grad-CAM from a forward hook that keeps the
activation and a full backward hook that keeps its gradient, saliency maps from input
gradients, SmoothGrad over fixed noise, integrated gradients over a batch of interpolated
inputs, occlusion sensitivity with F.unfold patches, and hooks removed afterwards."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 4, 3, padding=1),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(4, 6, 3, padding=1),
            nn.ReLU(),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(6, 3)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


model = Net().eval()
with torch.no_grad():
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape).mul(i + 2).sin() * 0.6)

yy, xx = torch.meshgrid(torch.arange(8.0), torch.arange(8.0), indexing="ij")
img = (torch.exp(-((yy - 2) ** 2 + (xx - 5) ** 2) / 4) - 0.3 * torch.cos(xx / 2)).view(1, 1, 8, 8)

store = {}
target_layer = model.features[3]
h1 = target_layer.register_forward_hook(lambda m, i, o: store.__setitem__("act", o.detach()))
h2 = target_layer.register_full_backward_hook(
    lambda m, gi, go: store.__setitem__("grad", go[0].detach())
)
logits = model(img)
cls = logits.argmax(1).item()
print("logits", [round(v, 5) for v in logits[0].tolist()], cls)
model.zero_grad()
logits[0, cls].backward()
weights = store["grad"].mean(dim=(2, 3), keepdim=True)
cam = F.relu((weights * store["act"]).sum(1, keepdim=True))
cam = F.interpolate(cam, size=(8, 8), mode="bilinear", align_corners=False)
cam = (cam - cam.min()) / (cam.max() - cam.min() + 1e-8)
print("cam", tuple(cam.shape), round(cam.mean().item(), 5), cam.flatten().argmax().item())
print("hook_grad", tuple(store["grad"].shape), round(store["grad"].abs().sum().item(), 6))
h1.remove()
h2.remove()
print("hooks_left", len(target_layer._forward_hooks), len(target_layer._backward_hooks))

# saliency
x = img.clone().requires_grad_(True)
model(x)[0, cls].backward()
sal = x.grad.abs().squeeze()
print("saliency", round(sal.max().item(), 6), divmod(sal.argmax().item(), 8))

# SmoothGrad with fixed "noise"
noise = torch.sin(torch.arange(5 * 64, dtype=torch.float32) * 1.7).view(5, 1, 8, 8) * 0.1
xb = (img + noise).requires_grad_()
out = model(xb)[:, cls].sum()
(g,) = torch.autograd.grad(out, xb)
smooth = g.mean(0).squeeze()
print("smoothgrad", round(smooth.abs().sum().item(), 6))

# integrated gradients, 16 steps, zero baseline
alphas = torch.linspace(0, 1, 17)[1:].view(-1, 1, 1, 1)
path = (alphas * img).requires_grad_(True)
probs = F.softmax(model(path), dim=1)[:, cls]
(gp,) = torch.autograd.grad(probs.sum(), path)
ig = img * gp.mean(0, keepdim=True)
with torch.no_grad():
    gap = F.softmax(model(img), 1)[0, cls] - F.softmax(model(torch.zeros_like(img)), 1)[0, cls]
print("ig", round(ig.sum().item(), 5), round(gap.item(), 5))

# occlusion with 4x4 patches, stride 2
patches = F.unfold(img, kernel_size=4, stride=2)
print("patches", tuple(patches.shape))
masks = torch.ones(patches.shape[-1], 1, 8, 8)
ones = torch.ones(1, 16, patches.shape[-1])
for k in range(patches.shape[-1]):
    sel = torch.zeros_like(ones)
    sel[..., k] = 1
    masks[k] = 1 - F.fold(sel, output_size=(8, 8), kernel_size=4, stride=2).clamp(max=1)[0]
with torch.no_grad():
    base = F.softmax(model(img), 1)[0, cls]
    occluded = F.softmax(model(img * masks), 1)[:, cls]
drop = (base - occluded).view(3, 3)
print("occlusion", [[round(v, 5) for v in r] for r in drop.tolist()])
print("most_important", drop.flatten().topk(2).indices.tolist())
