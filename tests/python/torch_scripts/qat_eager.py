# ruff: noqa: E501
"""Eager-mode quantization as the PyTorch quantization tutorials write it: QuantStub/DeQuantStub
around a conv-bn-relu + linear model, fuse_modules (conv,bn,relu) for QAT, a qconfig from
get_default_qat_qconfig, prepare_qat, a few training steps with fake quantization, freezing the
observers and BN statistics, convert to a quantized model; then post-training dynamic
quantization of an MLP with quantize_dynamic, and per-tensor quantize_per_tensor arithmetic."""

import copy

import torch
import torch.ao.quantization as tq
import torch.nn as nn


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.29 + 0.011 * k * k + i) * scale).view_as(p))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.quant = tq.QuantStub()
        self.conv = nn.Conv2d(1, 4, 3, bias=False)
        self.bn = nn.BatchNorm2d(4)
        self.relu = nn.ReLU()
        self.fc = nn.Linear(4 * 4 * 4, 3)
        self.dequant = tq.DeQuantStub()

    def forward(self, x):
        x = self.quant(x)
        x = self.relu(self.bn(self.conv(x)))
        x = self.fc(torch.flatten(x, 1))
        return self.dequant(x)


def main():
    print(
        f"engine_default {torch.backends.quantized.engine} supported {sorted(torch.backends.quantized.supported_engines)}"
    )
    torch.backends.quantized.engine = (
        "fbgemm" if "fbgemm" in torch.backends.quantized.supported_engines else "qnnpack"
    )
    x = torch.cos(torch.arange(8 * 36, dtype=torch.float32) * 0.27).view(8, 1, 6, 6)
    y = torch.tensor([0, 1, 2, 0, 1, 2, 0, 1])
    model = Net()
    det_init(model)
    float_out = model.eval()(x)

    model.train()
    fused = tq.fuse_modules_qat(model, [["conv", "bn", "relu"]])
    print(
        f"fused_types {type(fused.conv).__name__} {type(fused.bn).__name__} {type(fused.relu).__name__}"
    )
    fused.qconfig = tq.get_default_qat_qconfig("fbgemm")
    prepared = tq.prepare_qat(fused)
    print(
        f"prepared_conv {type(prepared.conv).__name__} has_fake_quant {hasattr(prepared.conv, 'weight_fake_quant')}"
    )
    opt = torch.optim.SGD(prepared.parameters(), lr=0.05)
    losses = []
    for epoch in range(4):
        opt.zero_grad()
        loss = nn.functional.cross_entropy(prepared(x), y)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 3))
        if epoch == 2:
            prepared.apply(tq.disable_observer)
            prepared.apply(nn.intrinsic.qat.freeze_bn_stats)
    print(f"qat_losses {losses}")
    prepared.eval()
    quantized = tq.convert(copy.deepcopy(prepared))
    print(
        f"converted {type(quantized.conv).__name__} {type(quantized.fc).__name__} {type(quantized.quant).__name__}"
    )
    qout = quantized(x)
    fq_out = prepared(x)
    print(
        f"int8_vs_fakequant_close {bool((qout - fq_out).abs().max() < 0.15)} argmax_agree {(qout.argmax(1) == fq_out.argmax(1)).float().mean().item():.3f}"
    )
    print(f"float_vs_int8_shape {tuple(float_out.shape)} {tuple(qout.shape)} dtype {qout.dtype}")

    mlp = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    det_init(mlp)
    dq = tq.quantize_dynamic(mlp, {nn.Linear}, dtype=torch.qint8)
    inp = torch.sin(torch.arange(5 * 16, dtype=torch.float32) * 0.19).view(5, 16)
    ref = mlp(inp)
    out = dq(inp)
    print(f"dynamic_types {[type(m).__name__ for m in dq]}")
    print(f"dynamic_err_small {bool((out - ref).abs().max() < 0.05)} out_dtype {out.dtype}")

    t = torch.tensor([-1.0, -0.26, 0.0, 0.3, 0.999, 2.5])
    q = torch.quantize_per_tensor(t, scale=0.1, zero_point=10, dtype=torch.quint8)
    print(f"q_int {q.int_repr().tolist()} deq {[round(v, 4) for v in q.dequantize().tolist()]}")
    print(f"q_meta {q.q_scale()} {q.q_zero_point()} {q.dtype} {q.is_quantized}")
    qc = torch.quantize_per_channel(
        torch.linspace(-1, 1, 6).view(2, 3),
        torch.tensor([0.01, 0.02]),
        torch.tensor([0, 0]),
        0,
        torch.qint8,
    )
    print(f"per_channel {qc.int_repr().tolist()} axis {qc.q_per_channel_axis()}")
    fq = torch.fake_quantize_per_tensor_affine(t, 0.1, 10, 0, 255)
    print(f"fake_quant {[round(v, 4) for v in fq.tolist()]}")


if __name__ == "__main__":
    main()
