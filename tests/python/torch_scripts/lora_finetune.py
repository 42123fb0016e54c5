"""Parameter-efficient fine-tuning as PEFT-style code does it by hand: freeze a pretrained
model, swap chosen nn.Linear layers for LoRA wrappers through named_modules / get_submodule /
setattr, train only the adapters with AdamW (no weight decay on biases and norms), clip
gradients, save just the adapter state_dict, load it into a fresh copy with strict=False and
inspect missing / unexpected keys, then merge the adapters back into the base weights."""

import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, d=8):
        super().__init__()
        self.ln = nn.LayerNorm(d)
        self.query = nn.Linear(d, d)
        self.value = nn.Linear(d, d)
        self.ffn = nn.Sequential(nn.Linear(d, 16), nn.GELU(approximate="tanh"), nn.Linear(16, d))

    def forward(self, x):
        h = self.ln(x)
        att = torch.softmax(self.query(h) @ h.transpose(-1, -2) / math.sqrt(h.shape[-1]), dim=-1)
        x = x + att @ self.value(h)
        return x + self.ffn(x)


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(12, 8)
        self.blocks = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 3)

    def forward(self, ids):
        x = self.embed(ids)
        for b in self.blocks:
            x = b(x)
        return self.head(x.mean(1))


class LoRALinear(nn.Module):
    def __init__(self, base: nn.Linear, r=2, alpha=4, dropout=0.0):
        super().__init__()
        self.base = base
        self.r, self.scaling = r, alpha / r
        self.lora_A = nn.Parameter(torch.zeros(r, base.in_features))
        self.lora_B = nn.Parameter(torch.zeros(base.out_features, r))
        self.lora_dropout = nn.Dropout(dropout) if dropout > 0 else nn.Identity()
        self.merged = False

    def forward(self, x):
        out = self.base(x)
        if not self.merged:
            out = out + (self.lora_dropout(x) @ self.lora_A.T @ self.lora_B.T) * self.scaling
        return out

    def merge(self):
        with torch.no_grad():
            self.base.weight += (self.lora_B @ self.lora_A) * self.scaling
        self.merged = True

    def extra_repr(self):
        return f"r={self.r}, scaling={self.scaling}"


def inject_lora(model, targets=("query", "value")):
    names = [
        n
        for n, m in model.named_modules()
        if isinstance(m, nn.Linear) and n.split(".")[-1] in targets
    ]
    for name in names:
        parent_name, _, child = name.rpartition(".")
        parent = model.get_submodule(parent_name)
        setattr(parent, child, LoRALinear(getattr(parent, child)))
    return names


def det_fill(model, k=0.0):
    with torch.no_grad():
        for i, (n, p) in enumerate(model.named_parameters()):
            v = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.29 + i + k) * 0.4
            if n.endswith("ln.weight"):
                v = v * 0.1 + 1.0
            p.copy_(v.view_as(p))


def main():
    base = Model()
    det_fill(base)
    ids = torch.tensor([[1, 2, 3, 4, 5], [6, 7, 8, 9, 10], [11, 3, 5, 7, 9], [2, 4, 6, 8, 10]])
    labels = torch.tensor([0, 1, 2, 1])
    with torch.no_grad():
        before = base(ids)
    model = copy.deepcopy(base)
    model.requires_grad_(False)
    replaced = inject_lora(model)
    print("replaced", replaced)
    print("lora_repr", model.blocks[0].query)
    for n, m in model.named_modules():
        if isinstance(m, LoRALinear):
            nn.init.kaiming_uniform_(m.lora_A, a=math.sqrt(5))
            with torch.no_grad():
                m.lora_A.copy_(
                    torch.cos(torch.arange(m.lora_A.numel(), dtype=torch.float32)).view_as(m.lora_A)
                    * 0.3
                )
    trainable = [n for n, p in model.named_parameters() if p.requires_grad]
    total = sum(p.numel() for p in model.parameters())
    n_train = sum(p.numel() for p in model.parameters() if p.requires_grad)
    print("trainable", len(trainable), n_train, total, f"{100 * n_train / total:.2f}%")
    with torch.no_grad():
        print("zero_B_same_output", torch.allclose(model(ids), before, atol=1e-6))

    model.head.requires_grad_(True)
    decay = [p for n, p in model.named_parameters() if p.requires_grad and p.ndim >= 2]
    no_decay = [p for n, p in model.named_parameters() if p.requires_grad and p.ndim < 2]
    opt = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01}, {"params": no_decay, "weight_decay": 0.0}],
        lr=0.02,
        betas=(0.9, 0.98),
    )
    print(
        "groups",
        [len(g["params"]) for g in opt.param_groups],
        [g["weight_decay"] for g in opt.param_groups],
    )
    hist = []
    for step in range(5):
        opt.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(ids), labels)
        loss.backward()
        total_norm = torch.nn.utils.clip_grad_norm_(
            [p for p in model.parameters() if p.requires_grad], max_norm=0.5
        )
        opt.step()
        hist.append((round(loss.item(), 5), round(total_norm.item(), 4)))
    print("train", hist)
    print(
        "frozen_untouched", torch.equal(model.blocks[1].ffn[0].weight, base.blocks[1].ffn[0].weight)
    )
    print("frozen_grad", model.blocks[0].query.base.weight.grad)

    adapter_sd = {
        k: v.detach().clone()
        for k, v in model.state_dict().items()
        if "lora_" in k or k.startswith("head.")
    }
    print("adapter_keys", sorted(adapter_sd)[:3], len(adapter_sd))
    fresh = copy.deepcopy(base)
    inject_lora(fresh)
    result = fresh.load_state_dict(adapter_sd, strict=False)
    print(
        "missing",
        len(result.missing_keys),
        result.missing_keys[:2],
        "unexpected",
        result.unexpected_keys,
    )
    with torch.no_grad():
        tuned = model(ids)
        print("reloaded_same", torch.allclose(fresh(ids), tuned, atol=1e-6))
        for m in fresh.modules():
            if isinstance(m, LoRALinear):
                m.merge()
        print("merged_same", torch.allclose(fresh(ids), tuned, atol=1e-5))
        print("probs", [round(v, 4) for v in F.softmax(tuned, -1)[:, 0].tolist()])
    try:
        fresh.load_state_dict({"head.weight": torch.zeros(2, 8)}, strict=False)
    except RuntimeError as e:
        print("size_mismatch", str(e).splitlines()[1].strip())
    for name in replaced:
        parent_name, _, child = name.rpartition(".")
        parent = fresh.get_submodule(parent_name)
        setattr(parent, child, getattr(parent, child).base)
    print("unwrapped_keys", len(fresh.state_dict()), len(base.state_dict()))


if __name__ == "__main__":
    main()
