"""A temporal convolutional network forecaster (Bai et al. style): causal dilated Conv1d with
Chomp1d, weight_norm both as the legacy hook (nn.utils.weight_norm / remove_weight_norm) and as
a parametrization, padding="same" with dilation, replicate / circular padding modes, sliding
windows from Tensor.unfold, Huber and SmoothL1 losses, ReduceLROnPlateau on a validation loss."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils import remove_weight_norm, weight_norm
from torch.nn.utils.parametrizations import weight_norm as pweight_norm


class Chomp1d(nn.Module):
    def __init__(self, chomp_size):
        super().__init__()
        self.chomp_size = chomp_size

    def forward(self, x):
        return x[:, :, : -self.chomp_size].contiguous()


class TemporalBlock(nn.Module):
    def __init__(
        self, n_inputs, n_outputs, kernel_size, stride, dilation, padding, dropout=0.0, legacy=True
    ):
        super().__init__()
        wn = weight_norm if legacy else pweight_norm
        self.conv1 = wn(
            nn.Conv1d(
                n_inputs, n_outputs, kernel_size, stride=stride, padding=padding, dilation=dilation
            )
        )
        self.chomp1 = Chomp1d(padding)
        self.relu1 = nn.ReLU()
        self.dropout1 = nn.Dropout(dropout)
        self.conv2 = wn(
            nn.Conv1d(
                n_outputs, n_outputs, kernel_size, stride=stride, padding=padding, dilation=dilation
            )
        )
        self.chomp2 = Chomp1d(padding)
        self.relu2 = nn.ReLU()
        self.dropout2 = nn.Dropout(dropout)
        self.net = nn.Sequential(
            self.conv1,
            self.chomp1,
            self.relu1,
            self.dropout1,
            self.conv2,
            self.chomp2,
            self.relu2,
            self.dropout2,
        )
        self.downsample = nn.Conv1d(n_inputs, n_outputs, 1) if n_inputs != n_outputs else None
        self.relu = nn.ReLU()

    def forward(self, x):
        out = self.net(x)
        res = x if self.downsample is None else self.downsample(x)
        return self.relu(out + res)


class TCN(nn.Module):
    def __init__(self, num_inputs, num_channels, kernel_size=2, legacy=True):
        super().__init__()
        layers = []
        for i in range(len(num_channels)):
            d = 2**i
            cin = num_inputs if i == 0 else num_channels[i - 1]
            layers += [
                TemporalBlock(
                    cin, num_channels[i], kernel_size, 1, d, (kernel_size - 1) * d, legacy=legacy
                )
            ]
        self.network = nn.Sequential(*layers)
        self.head = nn.Linear(num_channels[-1], 1)

    def forward(self, x):
        return self.head(self.network(x)[:, :, -1])


def det_fill(model):
    with torch.no_grad():
        for i, (n, p) in enumerate(model.named_parameters()):
            v = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.43 + i) * 0.3
            if n.endswith("weight_g") or n.endswith("original0"):
                v = v.abs() + 0.5
            p.copy_(v.view_as(p))


def main():
    t = torch.arange(80, dtype=torch.float32)
    series = torch.sin(t * 0.3) + 0.5 * torch.cos(t * 0.11)
    windows = series.unfold(0, 13, 1)
    x, y = windows[:, :12].unsqueeze(1), windows[:, 12:]
    print("windows", tuple(windows.shape), windows.stride())
    xtr, ytr, xva, yva = x[:48], y[:48], x[48:], y[48:]

    model = TCN(1, [6, 6, 6])
    det_fill(model)
    conv = model.network[0].conv1
    print("legacy_params", sorted(n for n, _ in conv.named_parameters()))
    print("weight_g", tuple(conv.weight_g.shape), round(conv.weight_g.sum().item(), 5))
    opt = torch.optim.Adam(model.parameters(), lr=5e-3)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(
        opt, mode="min", factor=0.5, patience=0, threshold=1e-3
    )
    huber = nn.HuberLoss(delta=0.5)
    log = []
    for epoch in range(4):
        model.train()
        for i in range(0, 48, 16):
            opt.zero_grad()
            loss = huber(model(xtr[i : i + 16]), ytr[i : i + 16])
            loss.backward()
            opt.step()
        model.eval()
        with torch.no_grad():
            val = F.smooth_l1_loss(model(xva), yva, beta=0.2).item()
        sched.step(val)
        log.append((round(val, 5), opt.param_groups[0]["lr"]))
    print("val_lr", log)
    # the legacy hook recomputes weight from g and v; removing it leaves a plain parameter
    w_before = conv.weight.detach().clone()
    remove_weight_norm(conv)
    print(
        "removed",
        sorted(n for n, _ in conv.named_parameters()),
        torch.allclose(conv.weight, w_before),
    )
    try:
        remove_weight_norm(conv)
    except ValueError as e:
        print("remove_again", e)

    pmodel = TCN(1, [4, 4], legacy=False)
    det_fill(pmodel)
    pconv = pmodel.network[1].conv2
    print("param_keys", sorted(pmodel.network[1].conv2.state_dict().keys()))
    g = pconv.parametrizations.weight.original0
    v = pconv.parametrizations.weight.original1
    expect = g * v / v.norm(dim=(1, 2), keepdim=True)
    print("pwn_weight", torch.allclose(pconv.weight, expect, atol=1e-6), tuple(g.shape))
    out = pmodel(xtr[:4])
    out.sum().backward()
    print(
        "pwn_out",
        [round(z, 5) for z in out.flatten().tolist()],
        round(g.grad.abs().sum().item(), 5),
    )

    same = nn.Conv1d(2, 3, 3, padding="same", dilation=2, padding_mode="replicate")
    circ = nn.Conv1d(2, 3, 3, padding=2, padding_mode="circular")
    det_fill(same)
    det_fill(circ)
    sig = torch.sin(torch.arange(2 * 2 * 9, dtype=torch.float32)).view(2, 2, 9)
    print("same", tuple(same(sig).shape), round(same(sig).sum().item(), 5))
    print("circular", tuple(circ(sig).shape), round(circ(sig).sum().item(), 5))
    print("reflect_pad", F.pad(sig[:1, :1, :4], (2, 1), mode="reflect").tolist())
    try:
        nn.Conv1d(2, 3, 3, padding="same", stride=2)
    except ValueError as e:
        print("same_stride", e)


if __name__ == "__main__":
    main()
