"""torch.fx as the "FX" tutorials use it: symbolic_trace of a module with control over leaves,
printing the graph's generated code and tabular node list, a graph rewrite (replace add with mul,
fuse Conv+BN), a custom Tracer, the subgraph rewriter, an Interpreter that records shapes
(ShapeProp), and torch.jit.script/trace of a small function."""

import operator

import torch
import torch.fx as fx
import torch.nn as nn
import torch.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.fc = nn.Linear(4, 3)

    def forward(self, x):
        y = F.relu(self.bn(self.conv(x)))
        y = y.mean(dim=(2, 3))
        return self.fc(y) + torch.sigmoid(y).sum(-1, keepdim=True)


def det_(m):
    with torch.no_grad():
        for k, p in enumerate(m.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.9 + k).view_as(p) * 0.5
            )
    return m


def fuse_conv_bn(gm):
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        if node.op == "call_module" and isinstance(modules[node.target], nn.BatchNorm2d):
            prev = node.args[0]
            if prev.op == "call_module" and isinstance(modules[prev.target], nn.Conv2d):
                conv = modules[prev.target]
                fused = torch.nn.utils.fusion.fuse_conv_bn_eval(conv, modules[node.target])
                setattr(gm, prev.target, fused)
                node.replace_all_uses_with(prev)
                gm.graph.erase_node(node)
    gm.graph.lint()
    gm.recompile()
    return gm


class LeafTracer(fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return isinstance(m, nn.Linear) or super().is_leaf_module(m, qualname)


def pattern(x, y):
    return torch.add(x, y)


def replacement(x, y):
    return torch.mul(x, y)


def main():
    net = det_(Net()).eval()
    x = torch.cos(torch.arange(2 * 2 * 5 * 5, dtype=torch.float32)).view(2, 2, 5, 5)
    gm = fx.symbolic_trace(net)
    print("type", type(gm).__name__, isinstance(gm, nn.Module))
    print("ops", [n.op for n in gm.graph.nodes])
    print(
        "targets",
        [getattr(n.target, "__name__", n.target) for n in gm.graph.nodes if n.op != "placeholder"],
    )
    print("same_out", torch.allclose(gm(x), net(x)))
    fused = fuse_conv_bn(fx.symbolic_trace(det_(Net()).eval()))
    print("fused_ops", [n.target for n in fused.graph.nodes if n.op == "call_module"])
    print("fused_out", torch.allclose(fused(x), net(x), atol=1e-5))

    def f(a, b):
        return torch.add(a, b) * torch.add(b, 1.0)

    t = fx.symbolic_trace(f)
    fx.subgraph_rewriter.replace_pattern(t, pattern, replacement)
    a, b = torch.tensor([1.0, 2.0]), torch.tensor([3.0, 4.0])
    print(
        "rewritten",
        t(a, b).tolist(),
        [n.target.__name__ for n in t.graph.nodes if n.op == "call_function"],
    )

    g = fx.symbolic_trace(lambda a: a + 1)
    for node in g.graph.nodes:
        if node.op == "call_function" and node.target == operator.add:
            node.target = operator.mul
    g.recompile()
    print("mul_instead", g(torch.tensor([3.0])).tolist())

    graph = LeafTracer().trace(net)
    print("leaf_trace", [n.op for n in graph.nodes].count("call_module"))
    from torch.fx.passes.shape_prop import ShapeProp

    gm2 = fx.symbolic_trace(det_(Net()).eval())
    ShapeProp(gm2).propagate(x)
    print(
        "shapes",
        [tuple(n.meta["tensor_meta"].shape) for n in gm2.graph.nodes if "tensor_meta" in n.meta],
    )

    class CountInterp(fx.Interpreter):
        def __init__(self, m):
            super().__init__(m)
            self.calls = 0

        def call_module(self, target, args, kwargs):
            self.calls += 1
            return super().call_module(target, args, kwargs)

    ci = CountInterp(gm2)
    out = ci.run(x)
    print("interp", ci.calls, torch.allclose(out, net(x)))

    # build a graph by hand
    gr = fx.Graph()
    inp = gr.placeholder("x")
    r = gr.call_function(torch.relu, (inp,))
    s = gr.call_method("sum", (r,), {"dim": 0})
    gr.output(s)
    hm = fx.GraphModule(nn.Module(), gr)
    print("by_hand", hm(torch.tensor([[1.0, -1.0], [2.0, 3.0]])).tolist())
    print("node_names", [n.name for n in gr.nodes])

    @torch.jit.script
    def scripted(x, n: int):
        out = x
        for _ in range(n):
            if bool(out.sum() > 10):
                out = out - 1
            else:
                out = out * 2
        return out

    print("script", scripted(torch.tensor([1.0, 2.0]), 4).tolist())
    traced = torch.jit.trace(lambda z: z * 2 + 1, torch.ones(3))
    print("trace", traced(torch.tensor([1.0, 2.0, 3.0])).tolist())


if __name__ == "__main__":
    main()
