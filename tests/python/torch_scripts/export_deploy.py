# ruff: noqa: E501
"""Exporting a trained model for deployment with torch.export: export a small conv+MLP model in
eval mode, run the ExportedProgram's module() against eager, a dynamic batch dimension with
Dim, the graph signature's parameter/buffer/user-input names, state_dict keys, the error on a
shape the constraints rule out, save/load of the program through a buffer, and
run_decompositions keeping results."""

import io

import torch
import torch.nn as nn
from torch.export import Dim, export


def det_init(module, scale=0.3):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.41 + 0.017 * k * k + i) * scale).view_as(p))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.head = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))

    def forward(self, x):
        h = torch.relu(self.bn(self.conv(x)))
        h = h.mean(dim=(2, 3))
        return self.head(h).softmax(-1)


def main():
    model = Net()
    det_init(model)
    x = torch.cos(torch.arange(2 * 2 * 5 * 5, dtype=torch.float32) * 0.3).view(2, 2, 5, 5)
    model.train()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        model(x)[:, 0].sum().backward()
        opt.step()
    model.eval()
    eager = model(x)

    ep = export(model, (x,))
    print(f"type {type(ep).__name__}")
    sig = ep.graph_signature
    print(f"params {sig.parameters}")
    print(f"buffers {sig.buffers}")
    print(f"user_inputs {sig.user_inputs} n_outputs {len(sig.user_outputs)}")
    out = ep.module()(x)
    print(
        f"exported_out {[round(v, 5) for v in out.flatten().tolist()]} same {torch.allclose(out, eager, atol=1e-6)}"
    )
    print(f"state_keys {sorted(ep.state_dict.keys())[:5]}")

    batch = Dim("batch", min=1, max=16)
    ep_dyn = export(model, (x,), dynamic_shapes={"x": {0: batch}})
    x5 = torch.sin(torch.arange(5 * 2 * 5 * 5, dtype=torch.float32) * 0.11).view(5, 2, 5, 5)
    y5 = ep_dyn.module()(x5)
    print(f"dyn_shape {tuple(y5.shape)} same {torch.allclose(y5, model(x5), atol=1e-6)}")
    try:
        ep.module()(x5)
    except Exception as e:
        print(f"static_rejects {type(e).__name__}: {e}")

    buf = io.BytesIO()
    torch.export.save(ep_dyn, buf)
    buf.seek(0)
    loaded = torch.export.load(buf)
    print(f"loaded_same {torch.allclose(loaded.module()(x5), y5, atol=1e-6)}")
    dec = ep.run_decompositions()
    print(f"decomp_same {torch.allclose(dec.module()(x), eager, atol=1e-6)}")


if __name__ == "__main__":
    main()
