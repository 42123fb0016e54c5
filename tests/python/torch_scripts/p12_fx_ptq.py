"""FX graph mode post-training quantization, as the "(prototype) FX Graph Mode Post Training
Static Quantization" tutorial writes it: get_default_qconfig_mapping("x86"), prepare_fx with
example inputs, calibration, convert_fx, comparing the quantized model with the float one; plus
dynamic quantization through QConfigMapping with the dynamic default qconfig."""

import copy

import torch
import torch.nn as nn
from torch.ao.quantization import (
    QConfigMapping,
    default_dynamic_qconfig,
    get_default_qconfig_mapping,
)
from torch.ao.quantization.quantize_fx import convert_fx, prepare_fx


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc1 = nn.Linear(4 * 4 * 4, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = torch.relu(self.bn(self.conv(x)))
        x = torch.flatten(x, 1)
        return self.fc2(torch.relu(self.fc1(x)))


def det_(m):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-0.4, 0.4, p.numel()).reshape(p.shape) * (1 + 0.1 * k))
    return m


model = det_(Net()).eval()
x = torch.linspace(-1, 1, 3 * 2 * 4 * 4).reshape(3, 2, 4, 4)
ref = model(x)
print("float_out", [round(v, 4) for v in ref.flatten().tolist()])

qmap = get_default_qconfig_mapping("x86")
prepared = prepare_fx(copy.deepcopy(model), qmap, example_inputs=(x,))
obs = [n for n, m in prepared.named_modules() if "observer" in type(m).__name__.lower()]
print("has_observers", len(obs) > 0)
for i in range(3):
    prepared(x * (1.0 - 0.2 * i))
quantized = convert_fx(prepared)
out = quantized(x)
print("q_close", ((out - ref).abs().max() / ref.abs().max()).item() < 0.02)
print("q_out", [round(v, 2) for v in out.flatten().tolist()])
kinds = sorted({type(m).__name__ for _, m in quantized.named_modules()} - {"GraphModule"})
print("q_module_kinds", kinds)
print("quantize_calls", sum(n.target is torch.quantize_per_tensor for n in quantized.graph.nodes))

mlp = det_(nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))).eval()
xi = torch.linspace(-2, 2, 40).reshape(5, 8)
dmap = QConfigMapping().set_object_type(nn.Linear, default_dynamic_qconfig)
dq = convert_fx(prepare_fx(copy.deepcopy(mlp), dmap, example_inputs=(xi,)))
dout = dq(xi)
print("dyn_close", (dout - mlp(xi)).abs().max().item() < 0.05)
print("dyn_kinds", sorted({type(m).__name__ for _, m in dq.named_modules()} - {"GraphModule"}))
