# ruff: noqa: E501
"""A spiking neural network trained with surrogate gradients (as snnTorch / SpyTorch tutorials
do): a Heaviside spike function as a custom autograd.Function whose backward is a fast-sigmoid
surrogate, leaky integrate-and-fire neurons with reset by subtraction unrolled over time, rate
coding of inputs, a membrane-potential readout with cross-entropy over max-over-time, a few
Adam steps of BPTT, spike counts and firing rates per layer, and gradcheck of the surrogate."""

import torch
import torch.nn as nn
import torch.nn.functional as F


class SurrGradSpike(torch.autograd.Function):
    scale = 10.0

    @staticmethod
    def forward(ctx, inp):
        ctx.save_for_backward(inp)
        return (inp > 0).float()

    @staticmethod
    def backward(ctx, grad_output):
        (inp,) = ctx.saved_tensors
        return grad_output / (SurrGradSpike.scale * inp.abs() + 1.0) ** 2


spike_fn = SurrGradSpike.apply


class LIF(nn.Module):
    def __init__(self, beta=0.9, threshold=1.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, cur, mem):
        mem = self.beta * mem + cur
        spk = spike_fn(mem - self.threshold)
        mem = mem - spk * self.threshold
        return spk, mem


class SNN(nn.Module):
    def __init__(self, n_in=8, n_hid=16, n_out=3):
        super().__init__()
        self.fc1 = nn.Linear(n_in, n_hid)
        self.lif1 = LIF()
        self.fc2 = nn.Linear(n_hid, n_out)
        self.beta_out = 0.8

    def forward(self, spikes_in):
        T, B, _ = spikes_in.shape
        mem1 = torch.zeros(B, self.fc1.out_features)
        mem2 = torch.zeros(B, self.fc2.out_features)
        spk_rec, mem_rec = [], []
        for t in range(T):
            spk1, mem1 = self.lif1(self.fc1(spikes_in[t]), mem1)
            mem2 = self.beta_out * mem2 + self.fc2(spk1)
            spk_rec.append(spk1)
            mem_rec.append(mem2)
        return torch.stack(spk_rec), torch.stack(mem_rec)


def det_init(module, scale=0.6):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.47 + 0.021 * k * k + i) * scale + 0.1).view_as(p))


def rate_code(x, T):
    # deterministic "Bernoulli": a spike whenever the accumulated rate crosses an integer
    acc = torch.cumsum(x.unsqueeze(0).expand(T, *x.shape), 0)
    return (torch.floor(acc) - torch.floor(acc - x)).clamp(0, 1)


def main():
    T = 12
    x = (torch.sin(torch.arange(6 * 8, dtype=torch.float32) * 0.9) * 0.5 + 0.5).view(6, 8)
    y = torch.tensor([0, 1, 2, 0, 1, 2])
    spikes = rate_code(x, T)
    print(f"input_spikes {int(spikes.sum().item())} shape {tuple(spikes.shape)}")
    net = SNN()
    det_init(net)
    opt = torch.optim.Adam(net.parameters(), lr=5e-3, betas=(0.9, 0.999))
    losses = []
    for _ in range(5):
        opt.zero_grad()
        spk, mem = net(spikes)
        logits = mem.max(0).values
        loss = F.cross_entropy(logits, y) + 1e-3 * spk.sum() / spk.shape[1]
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 4))
    print(f"losses {losses}")
    with torch.no_grad():
        spk, mem = net(spikes)
    print(
        f"hidden_spikes {int(spk.sum().item())} rate {spk.mean().item():.4f} per_step {spk.sum(dim=(1, 2)).int().tolist()}"
    )
    print(
        f"pred {mem.max(0).values.argmax(1).tolist()} acc {(mem.max(0).values.argmax(1) == y).float().mean().item():.3f}"
    )
    print(f"fc1_grad_norm {net.fc1.weight.grad.norm().item():.5f}")
    v = torch.tensor([-0.5, -0.05, 0.2, 1.3], dtype=torch.float64, requires_grad=True)
    out = spike_fn(v)
    out.backward(torch.ones_like(v))
    print(f"surrogate_grad {[round(g, 5) for g in v.grad.tolist()]} spikes {out.tolist()}")


if __name__ == "__main__":
    main()
