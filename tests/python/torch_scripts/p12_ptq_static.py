"""Post-training static quantization in eager mode, as the PyTorch "static quantization"
tutorial writes it: QuantStub/DeQuantStub around a conv-bn-relu + linear model, fuse_modules
in eval mode, the x86 default qconfig, prepare (observers), calibration on a few batches,
convert to quantized modules, and the quantized model's outputs, scales and zero points."""

import torch
import torch.ao.quantization as tq
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4, 3)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu(self.bn(self.conv(x)))
        x = self.pool(x).flatten(1)
        x = self.fc(x)
        return self.dequant(x)


def det_(m):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-0.5, 0.5, p.numel()).reshape(p.shape) * (1 + 0.1 * k))
        m.bn.running_mean.copy_(torch.tensor([0.1, -0.1, 0.05, 0.0]))
        m.bn.running_var.copy_(torch.tensor([1.0, 0.5, 2.0, 1.5]))


model = Net()
det_(model)
model.eval()
x = torch.linspace(-1, 1, 2 * 2 * 6 * 6).reshape(2, 2, 6, 6)
ref = model(x)
print("float_out", [round(v, 4) for v in ref.flatten().tolist()])

fused = tq.fuse_modules(model, [["conv", "bn", "relu"]])
print("fused_types", type(fused.conv).__name__, type(fused.bn).__name__, type(fused.relu).__name__)
print("fused_close", torch.allclose(fused(x), ref, atol=1e-5))

fused.qconfig = tq.get_default_qconfig("x86")
print("qconfig_act", type(fused.qconfig.activation()).__name__)
print("qconfig_w", type(fused.qconfig.weight()).__name__)
prepared = tq.prepare(fused)
print("observer_on_conv", hasattr(prepared.conv, "activation_post_process"))
for i in range(4):
    prepared(x * (0.5 + 0.25 * i))
obs = prepared.quant.activation_post_process
print("calib_range", round(obs.min_val.item(), 4), round(obs.max_val.item(), 4))

quantized = tq.convert(prepared)
print(
    "q_types",
    type(quantized.quant).__name__,
    type(quantized.conv).__name__,
    type(quantized.fc).__name__,
    type(quantized.dequant).__name__,
)
print("quant_scale", round(float(quantized.quant.scale), 6), int(quantized.quant.zero_point))
print("conv_scale", round(quantized.conv.scale, 6), quantized.conv.zero_point)
w = quantized.conv.weight()
print("conv_weight", w.dtype, w.qscheme(), list(w.shape))
print("conv_w_int", w.int_repr().flatten()[:8].tolist())
print("conv_w_scales", [round(s, 6) for s in w.q_per_channel_scales().tolist()])
out = quantized(x)
print("q_out", [round(v, 3) for v in out.flatten().tolist()])
print("q_err_small", (out - ref).abs().max().item() < 0.05)
qx = quantized.quant(x)
print("qx", qx.dtype, round(qx.q_scale(), 6), qx.q_zero_point(), qx.int_repr()[0, 0, 0].tolist())
