"""Padding layers, Fold/Unfold patch round trips, the legacy weight_norm API and conv-bn fusion
for inference."""

import torch
import torch.nn as nn
from torch.nn.utils import fuse_conv_bn_eval, remove_weight_norm, weight_norm


def r(t, n=5):
    return [round(v, n) for v in t.flatten().tolist()]


x = torch.arange(12.0).reshape(1, 1, 3, 4)
for layer in (
    nn.CircularPad2d((1, 2, 1, 0)),
    nn.ZeroPad2d((1, 1, 0, 2)),
    nn.ReplicationPad2d(1),
    nn.ReflectionPad2d((2, 1, 1, 1)),
    nn.ConstantPad2d((0, 1, 1, 0), 3.5),
):
    y = layer(x)
    print(type(layer).__name__, tuple(y.shape), r(y[0, 0, 0]), r(y[0, 0, -1]))
seq = torch.arange(5.0).reshape(1, 1, 5)
print("CircularPad1d", r(nn.CircularPad1d(2)(seq)))
print("ZeroPad1d", r(nn.ZeroPad1d((1, 3))(seq)))
vol = torch.arange(8.0).reshape(1, 1, 2, 2, 2)
print("CircularPad3d", tuple(nn.CircularPad3d(1)(vol).shape), nn.CircularPad3d(1)(vol).sum().item())
print("ZeroPad3d", tuple(nn.ZeroPad3d((1, 0, 0, 1, 1, 0))(vol).shape))
print("repr", repr(nn.CircularPad2d((1, 2, 1, 0))), repr(nn.ZeroPad2d(2)))

# overlapping patches: fold(unfold(x)) counts each pixel once per patch covering it
img = torch.linspace(0, 1, 2 * 3 * 6 * 6).reshape(2, 3, 6, 6)
unfold = nn.Unfold(kernel_size=3, stride=2, padding=1)
fold = nn.Fold(output_size=(6, 6), kernel_size=3, stride=2, padding=1)
cols = unfold(img)
print("unfold_shape", tuple(cols.shape))
ones = torch.ones_like(img)
divisor = fold(unfold(ones))
print("divisor_row", r(divisor[0, 0, 0]))
recon = fold(cols) / divisor
print("fold_roundtrip", torch.allclose(recon, img, atol=1e-6))
patches = nn.functional.unfold(img, kernel_size=(2, 3), dilation=(2, 1), stride=(1, 3))
print("unfold_dilated", tuple(patches.shape), round(patches.sum().item(), 4))

# legacy weight_norm hooks
lin = nn.Linear(4, 3)
with torch.no_grad():
    lin.weight.copy_(torch.linspace(-1, 1, 12).reshape(3, 4))
    lin.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
wn = weight_norm(lin, name="weight", dim=0)
print("wn_params", sorted(n for n, _ in wn.named_parameters()))
print("wn_g", r(wn.weight_g))
xin = torch.linspace(-1, 1, 8).reshape(2, 4)
out = wn(xin)
out.sum().backward()
print("wn_grad_g", r(wn.weight_g.grad))
print("wn_grad_v", r(wn.weight_v.grad, 4))
with torch.no_grad():
    wn.weight_g.mul_(2)
print("wn_scaled_out", r(wn(xin)))
remove_weight_norm(wn)
print("removed_params", sorted(n for n, _ in wn.named_parameters()))
print("removed_out", r(wn(xin)))

# conv + bn folded for inference
conv = nn.Conv2d(2, 3, 3, padding=1, bias=False)
bn = nn.BatchNorm2d(3)
with torch.no_grad():
    conv.weight.copy_(torch.linspace(-0.5, 0.5, conv.weight.numel()).reshape(conv.weight.shape))
    bn.weight.copy_(torch.tensor([1.0, 0.5, 2.0]))
    bn.bias.copy_(torch.tensor([0.0, 0.1, -0.1]))
    bn.running_mean.copy_(torch.tensor([0.2, -0.1, 0.0]))
    bn.running_var.copy_(torch.tensor([1.5, 0.5, 2.0]))
conv.eval()
bn.eval()
fused = fuse_conv_bn_eval(conv, bn)
z = torch.linspace(-1, 1, 2 * 2 * 4 * 4).reshape(2, 2, 4, 4)
print("fused_has_bias", fused.bias is not None)
print("fused_same", torch.allclose(fused(z), bn(conv(z)), atol=1e-5))
print("fused_bias", r(fused.bias))
