# ruff: noqa: E501
"""Mixed precision on the CPU as the AMP docs describe it: training under
torch.autocast("cpu", dtype=torch.bfloat16) with fp32 master weights, the dtypes autocast
picks per op (linear / matmul / conv in bfloat16; softmax, losses, norms and sums in float32),
nested autocast(enabled=False) regions, torch.amp.GradScaler("cpu") driving the step, a
custom autograd.Function with torch.amp.custom_fwd / custom_bwd, and bf16 vs fp32 results
compared with tolerances."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, (name, p) in enumerate(module.named_parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.31 + 0.017 * k * k + i) * scale).view_as(p))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(2, 6, 3, padding=1)
        self.norm = nn.LayerNorm(6 * 8)
        self.fc1 = nn.Linear(6 * 8, 32)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        h = F.relu(self.conv(x)).flatten(1)
        h = self.norm(h)
        return self.fc2(F.gelu(self.fc1(h)))


class ScaledTanh(torch.autograd.Function):
    @staticmethod
    @torch.amp.custom_fwd(device_type="cpu", cast_inputs=torch.float32)
    def forward(ctx, x, scale):
        ctx.save_for_backward(x)
        ctx.scale = scale
        return torch.tanh(x) * scale

    @staticmethod
    @torch.amp.custom_bwd(device_type="cpu")
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * ctx.scale * (1 - torch.tanh(x) ** 2), None


def main():
    torch.manual_seed(0)
    n = 48
    t = torch.arange(n * 16, dtype=torch.float32)
    x = torch.sin(t * 0.13).view(n, 2, 8) + 0.1 * torch.cos(t * 1.7).view(n, 2, 8)
    y = (x[:, 0].sum(1) > 0).long() + (x[:, 1, :4].sum(1) > 0.5).long()

    with torch.autocast("cpu", dtype=torch.bfloat16):
        a = torch.ones(2, 3)
        b = torch.ones(3, 4)
        mm = a @ b
        lin = F.linear(a, torch.ones(5, 3))
        sm = F.softmax(mm, dim=-1)
        ls = F.log_softmax(mm, dim=-1)
        ce = F.cross_entropy(lin, torch.tensor([0, 1]))
        add = mm + 1.0
        s = mm.sum()
        ln = F.layer_norm(mm, (4,))
        conv = F.conv1d(torch.ones(1, 2, 5), torch.ones(3, 2, 2))
        bmm = torch.bmm(torch.ones(2, 2, 3), torch.ones(2, 3, 2))
        with torch.autocast("cpu", enabled=False):
            inner = a @ b
        print(
            f"is_autocast {torch.is_autocast_enabled('cpu')} dtype {torch.get_autocast_dtype('cpu')}"
        )
    print(
        f"dtypes mm {mm.dtype} linear {lin.dtype} softmax {sm.dtype} log_softmax {ls.dtype} ce {ce.dtype} add {add.dtype} sum {s.dtype} layer_norm {ln.dtype} conv {conv.dtype} bmm {bmm.dtype} disabled {inner.dtype}"
    )

    def train(use_amp, steps=30):
        model = Net()
        det_init(model)
        opt = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        scaler = torch.amp.GradScaler("cpu", enabled=use_amp, init_scale=2.0**8)
        for step in range(steps):
            opt.zero_grad()
            with torch.autocast(device_type="cpu", dtype=torch.bfloat16, enabled=use_amp):
                out = model(x)
                loss = F.cross_entropy(out, y)
            scaler.scale(loss).backward()
            scaler.unscale_(opt)
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            scaler.step(opt)
            scaler.update()
        with torch.no_grad():
            acc = (model(x).argmax(1) == y).float().mean().item()
        return model, loss, out, acc, scaler

    m32, l32, o32, acc32, _ = train(False)
    m16, l16, o16, acc16, scaler = train(True)
    print(f"fp32 loss {l32.item():.5f} acc {acc32:.4f} out_dtype {o32.dtype}")
    print(
        f"bf16 loss_dtype {l16.dtype} out_dtype {o16.dtype} master {m16.fc1.weight.dtype} grad {m16.fc1.weight.grad.dtype} scale {scaler.get_scale()}"
    )
    print(
        f"bf16_close_to_fp32 {abs(l16.item() - l32.item()) < 0.1} acc_close {abs(acc16 - acc32) <= 0.1}"
    )

    xs = torch.tensor([0.5, -1.0], requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = ScaledTanh.apply(xs.to(torch.bfloat16), 2.0)
        inside = torch.mm(out.view(1, 2), torch.ones(2, 1))
    out.sum().backward()
    print(
        f"custom_fwd out {out.dtype} {[round(v, 4) for v in out.tolist()]} mm_inside {inside.dtype} grad {xs.grad.dtype} {[round(v, 2) for v in xs.grad.tolist()]}"
    )
    with torch.autocast("cpu", dtype=torch.bfloat16):
        r = torch.ones(3, 3, dtype=torch.float64) @ torch.ones(3, 3, dtype=torch.float64)
        i = torch.ones(2, 2, dtype=torch.int64) + 1
    print(
        f"untouched_dtypes {r.dtype} {i.dtype} bf16_round {torch.tensor(1.0 / 3).to(torch.bfloat16).item()}"
    )
    sc = torch.amp.GradScaler("cpu", init_scale=4.0, growth_interval=2)
    p = nn.Parameter(torch.ones(2))
    o = torch.optim.SGD([p], lr=0.1)
    scales = []
    for k in range(5):
        o.zero_grad()
        loss = (p * (float("inf") if k == 2 else 1.0)).sum()
        sc.scale(loss).backward()
        sc.step(o)
        sc.update()
        scales.append(sc.get_scale())
    print(f"scaler_scales {scales} p {p.tolist()}")


if __name__ == "__main__":
    main()
