"""Graph transforms with torch.fx and a custom torch.compile backend, as the FX and compiler
tutorials write them: swap every ReLU (function, method and module forms) for GELU by editing the
traced graph, the same swap with an fx.Transformer subclass, inserting a node after each linear
(a clamp), node/graph bookkeeping (lint, eliminate_dead_code, erase_node, print_tabular-free
listing), and a backend that receives the captured GraphModule and example inputs."""

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(8, 8)
        self.fc3 = nn.Linear(8, 2)

    def forward(self, x):
        x = self.act(self.fc1(x))
        x = F.relu(self.fc2(x))
        dead = x * 2  # noqa: F841  (unused: eliminate_dead_code removes it)
        return torch.relu(self.fc3(x)) + x.relu().sum(-1, keepdim=True)


def det_(m):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(torch.linspace(-1, 1, p.numel()).reshape(p.shape) * (1 + 0.2 * k))
    return m


def kinds(gm):
    return [
        (n.op, str(n.target).split(".")[-1] if n.op != "call_module" else n.target)
        for n in gm.graph.nodes
    ]


model = det_(Net())
x = torch.linspace(-2, 2, 12).reshape(3, 4)
gm = fx.symbolic_trace(model)
print("nodes", len(gm.graph.nodes))
gm.graph.eliminate_dead_code()
gm.recompile()
print("nodes_after_dce", len(gm.graph.nodes))
print("ops", [op for op, _ in kinds(gm)])

relus = 0
for node in list(gm.graph.nodes):
    if node.op == "call_function" and node.target in (F.relu, torch.relu):
        node.target = F.gelu
        node.kwargs = {}  # F.relu is traced with inplace=False, which gelu does not take
        relus += 1
    elif node.op == "call_method" and node.target == "relu":
        with gm.graph.inserting_after(node):
            new = gm.graph.call_function(F.gelu, node.args)
        node.replace_all_uses_with(new)
        gm.graph.erase_node(node)
        relus += 1
    elif node.op == "call_module" and isinstance(gm.get_submodule(node.target), nn.ReLU):
        gm.add_submodule(node.target, nn.GELU())
        relus += 1
gm.graph.lint()
gm.recompile()
print("relus_swapped", relus)
print("gelu_module", type(gm.act).__name__)


class Ref(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        m = self.m
        x = F.gelu(m.fc1(x))
        x = F.gelu(m.fc2(x))
        return F.gelu(m.fc3(x)) + F.gelu(x).sum(-1, keepdim=True)


ref = Ref(model)(x)
print("swap_matches", torch.allclose(gm(x), ref, atol=1e-6))
print("swap_out", [round(v, 5) for v in gm(x).flatten().tolist()])


class ToGelu(fx.Transformer):
    def call_function(self, target, args, kwargs):
        if target in (F.relu, torch.relu):
            return F.gelu(args[0])
        return super().call_function(target, args, kwargs)

    def call_method(self, target, args, kwargs):
        if target == "relu":
            return F.gelu(*args)
        return super().call_method(target, args, kwargs)


t = ToGelu(fx.symbolic_trace(det_(Net()))).transform()
print("transformer_out", [round(v, 5) for v in t(x).flatten().tolist()])

g2 = fx.symbolic_trace(det_(Net()))
for node in list(g2.graph.nodes):
    if node.op == "call_module" and node.target.startswith("fc"):
        with g2.graph.inserting_after(node):
            c = g2.graph.call_function(torch.clamp, (node,), {"min": -0.5, "max": 0.5})
        node.replace_all_uses_with(c)
        c.args = (node,)
g2.recompile()
print("clamps", sum(n.target is torch.clamp for n in g2.graph.nodes))
print("clamped_out", [round(v, 5) for v in g2(x).flatten().tolist()])
print("code_has_clamp", "torch.clamp" in g2.code)

seen = []


def my_backend(gm, example_inputs):
    seen.append((type(gm).__name__, [tuple(t.shape) for t in example_inputs]))
    return gm.forward


compiled = torch.compile(det_(Net()), backend=my_backend)
out = compiled(x)
out2 = compiled(x + 1)
print("backend_calls", len(seen), seen[0][0], (3, 4) in seen[0][1])
print(
    "compiled_close", torch.allclose(out, det_(Net())(x)), torch.allclose(out2, det_(Net())(x + 1))
)
