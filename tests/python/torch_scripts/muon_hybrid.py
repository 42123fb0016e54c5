"""The modded-nanogpt optimizer split: torch.optim.Muon for the hidden 2-D weight matrices and
AdamW for embeddings, the output head, norms and biases, each with its own LambdaLR warmup,
both stepped every iteration; Muon's state (a momentum buffer only), its learning-rate
adjustments for rectangular matrices, its refusal of non-2-D parameters, and a state_dict
round trip that resumes identically."""

import copy

import torch
import torch.nn as nn
import torch.nn.functional as F


class MLPBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.norm = nn.RMSNorm(d)
        self.up = nn.Linear(d, 4 * d, bias=False)
        self.down = nn.Linear(4 * d, d, bias=False)

    def forward(self, x):
        return x + self.down(F.relu(self.up(self.norm(x))).square())


class TinyLM(nn.Module):
    def __init__(self, vocab=16, d=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.Sequential(MLPBlock(d), MLPBlock(d))
        self.head = nn.Linear(d, vocab)

    def forward(self, idx):
        return self.head(self.blocks(self.embed(idx)))


def det_fill(model):
    with torch.no_grad():
        for i, (n, p) in enumerate(model.named_parameters()):
            v = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.41 + i) * 0.3
            p.copy_(v.view_as(p) + (1.0 if n.endswith("norm.weight") else 0.0))


def make_optimizers(model):
    hidden = [p for n, p in model.blocks.named_parameters() if p.ndim == 2]
    other = [p for n, p in model.named_parameters() if not any(p is h for h in hidden)]
    muon = torch.optim.Muon(hidden, lr=0.02, momentum=0.95, weight_decay=0.0)
    adamw = torch.optim.AdamW(other, lr=3e-3, betas=(0.9, 0.95), weight_decay=0.0)
    warm = lambda step: min(1.0, (step + 1) / 3)  # noqa: E731
    scheds = [torch.optim.lr_scheduler.LambdaLR(o, warm) for o in (muon, adamw)]
    return muon, adamw, scheds


def train(model, opts, scheds, data, steps):
    losses = []
    for step in range(steps):
        x, y = data[:, :-1], data[:, 1:]
        loss = F.cross_entropy(model(x).reshape(-1, 16), y.reshape(-1))
        for o in opts:
            o.zero_grad(set_to_none=True)
        loss.backward()
        for o in opts:
            o.step()
        for s in scheds:
            s.step()
        losses.append(round(loss.item(), 5))
    return losses


def main():
    data = (torch.arange(4 * 9).view(4, 9) * 7 + torch.arange(4).view(4, 1)) % 16
    model = TinyLM()
    det_fill(model)
    muon, adamw, scheds = make_optimizers(model)
    print("groups", len(muon.param_groups[0]["params"]), len(adamw.param_groups[0]["params"]))
    print("muon_defaults", {k: v for k, v in muon.defaults.items() if k != "ns_coefficients"})
    losses = train(model, (muon, adamw), scheds, data, 4)
    print("losses", losses)
    up = model.blocks[0].up.weight
    print("muon_state", sorted(muon.state[up]), tuple(muon.state[up]["momentum_buffer"].shape))
    print("adamw_state", sorted(adamw.state[model.embed.weight]))
    print("lrs", [round(g["lr"], 5) for o in (muon, adamw) for g in o.param_groups])
    print(
        "up_norm",
        round(up.norm().item(), 4),
        "down_norm",
        round(model.blocks[1].down.weight.norm().item(), 4),
    )

    snapshot = copy.deepcopy(model)
    m_sd, a_sd = copy.deepcopy(muon.state_dict()), copy.deepcopy(adamw.state_dict())
    s_sd = [copy.deepcopy(s.state_dict()) for s in scheds]
    cont = train(model, (muon, adamw), scheds, data, 2)
    muon2, adamw2, scheds2 = make_optimizers(snapshot)
    muon2.load_state_dict(m_sd)
    adamw2.load_state_dict(a_sd)
    for s, sd in zip(scheds2, s_sd):
        s.load_state_dict(sd)
    resumed = train(snapshot, (muon2, adamw2), scheds2, data, 2)
    print("resume_same", cont == resumed, cont)

    # orthogonalized steps: a fresh momentum step moves a square matrix by about lr per direction
    w = nn.Parameter(torch.eye(4))
    opt = torch.optim.Muon([w], lr=0.1, momentum=0.0, nesterov=False, weight_decay=0.0)
    w.grad = torch.tensor(
        [[4.0, 1.0, 0.0, 0.0], [0.0, 0.5, 0.0, 0.0], [0.0, 0.0, 2.0, 0.0], [0.0, 0.0, 0.0, 0.1]]
    )
    opt.step()
    delta = torch.eye(4) - w.detach()
    print("step_singular", [round(s, 3) for s in torch.linalg.svdvals(delta).tolist()])
    tall = nn.Parameter(torch.zeros(6, 2))
    for fn in ("original", "match_rms_adamw"):
        o = torch.optim.Muon(
            [tall], lr=0.1, momentum=0.0, nesterov=False, weight_decay=0.0, adjust_lr_fn=fn
        )
        tall.grad = torch.ones(6, 2)
        with torch.no_grad():
            tall.zero_()
        o.step()
        print("adjust", fn, round(tall.abs().max().item(), 4))
    try:
        torch.optim.Muon(model.parameters())
    except ValueError as e:
        print("non_2d", e)


if __name__ == "__main__":
    main()
