"""The autograd graph as programs inspect and hook it: Tensor.register_hook (modifying gradients),
retain_grad, grad_fn.next_functions walks, register_post_accumulate_grad_hook (the optimizer-in-
backward recipe), saved_tensors_hooks (pack to half / offload), Node hooks
(grad_fn.register_hook / register_prehook), torch.autograd.graph.save_on_cpu,
autograd.grad with allow_unused / materialize_grads, detect_anomaly catching a NaN, backward with
inputs=, and gradient accumulation semantics."""

import torch
import torch.nn as nn


def walk(fn, depth=0, seen=None, out=None):
    seen = set() if seen is None else seen
    out = [] if out is None else out
    if fn is None or fn in seen:
        return out
    seen.add(fn)
    out.append("  " * depth + fn.name())
    for nxt, _ in fn.next_functions:
        walk(nxt, depth + 1, seen, out)
    return out


def main():
    x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
    y = (x * w).sin()
    y.retain_grad()
    h = y.register_hook(lambda g: g * 2)
    z = (y * y).sum()
    print("graph", walk(z.grad_fn))
    z.backward()
    print("retained", [round(v, 5) for v in y.grad.tolist()])
    print("x_grad_hooked", [round(v, 5) for v in x.grad.tolist()])
    h.remove()

    # gradient accumulation and zeroing
    a = torch.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(3):
        (a * a).sum().backward()
    print("accumulated", a.grad.tolist())
    a.grad = None
    (a * 3).sum().backward(inputs=[a])
    print("inputs_kw", a.grad.tolist())

    # node hooks
    b = torch.tensor([1.0, -1.0], requires_grad=True)
    out = b.exp() * 2
    seen = []
    out.grad_fn.register_prehook(
        lambda gout: seen.append(("pre", [round(v, 3) for v in gout[0].tolist()]))
    )
    out.grad_fn.register_hook(lambda gin, gout: seen.append(("post", len(gin))))
    out.sum().backward()
    print("node_hooks", seen)

    # optimizer in backward
    model = nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.tensor([[0.1, -0.2, 0.3]]))
        model.bias.fill_(0.5)
    opts = {p: torch.optim.SGD([p], lr=0.1) for p in model.parameters()}

    def step_hook(p):
        opts[p].step()
        opts[p].zero_grad()

    for p in model.parameters():
        p.register_post_accumulate_grad_hook(step_hook)
    inp = torch.tensor([[1.0, 2.0, 3.0], [0.0, 1.0, -1.0]])
    for _ in range(3):
        model(inp).pow(2).mean().backward()
    print(
        "opt_in_backward",
        [round(v, 5) for v in model.weight.flatten().tolist()],
        round(model.bias.item(), 5),
        model.weight.grad,
    )

    # saved tensor hooks
    packed = []

    def pack(t):
        packed.append((tuple(t.shape), t.dtype))
        return t.to(torch.float64)

    def unpack(t):
        return t.to(torch.float32)

    c = torch.tensor([0.5, 1.5], requires_grad=True)
    with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
        d = (c.sin() * c).sum()
    d.backward()
    print("saved_hooks", packed, [round(v, 5) for v in c.grad.tolist()])
    e = torch.tensor([0.5, 1.5], requires_grad=True)
    with torch.autograd.graph.save_on_cpu():
        f = (e.exp() * e).sum()
    f.backward()
    print("save_on_cpu", [round(v, 5) for v in e.grad.tolist()])

    # grad with unused inputs
    p1 = torch.tensor(2.0, requires_grad=True)
    p2 = torch.tensor(3.0, requires_grad=True)
    g = torch.autograd.grad(p1**3, [p1, p2], allow_unused=True)
    print("allow_unused", g[0].item(), g[1])
    g = torch.autograd.grad(p1**3, [p1, p2], materialize_grads=True)
    print("materialize", g[0].item(), g[1].item())
    try:
        torch.autograd.grad(p1**3, [p1, p2])
    except RuntimeError as e:
        print("unused_error RuntimeError", "unused" in str(e) or "not have been used" in str(e))

    # anomaly detection
    q = torch.tensor([0.0, 1.0], requires_grad=True)
    try:
        with torch.autograd.detect_anomaly():
            s = q / q
            s.sum().backward()
    except RuntimeError as e:
        print("anomaly RuntimeError", "nan" in str(e).lower())
    print("anomaly_grad", q.grad)
    print("set_detect", torch.is_anomaly_enabled())

    # leaf/non-leaf facts
    m = torch.ones(2, requires_grad=True)
    n = m * 2
    print("leaf", m.is_leaf, n.is_leaf, n.grad_fn.name(), m.grad_fn, n.requires_grad)
    print(
        "next_fn",
        [type(f).__name__ if f is not None else None for f, _ in n.grad_fn.next_functions],
    )
    print("detach_leaf", n.detach().is_leaf, n.detach().requires_grad)
    with torch.enable_grad():
        k = torch.ones(1, requires_grad=True) * 3
    with torch.no_grad():
        kk = k * 2
    print("no_grad_child", kk.requires_grad, kk.grad_fn)
    with torch.set_grad_enabled(False):
        print("grad_enabled", torch.is_grad_enabled())
    print("grad_enabled_after", torch.is_grad_enabled())


if __name__ == "__main__":
    main()
