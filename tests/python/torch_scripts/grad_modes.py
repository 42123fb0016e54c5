"""Grad modes as evaluation loops, EMA updates and library code mix them: no_grad /
enable_grad / inference_mode / set_grad_enabled nested and as decorators (on functions, methods
and generators), inference_mode(False), is_inference / is_inference_mode_enabled, what tensors
made in each mode allow afterwards (the errors torch raises for inference tensors in autograd and
for in-place updates to them), requires_grad_ inside no_grad, grad mode being thread-local,
torch.set_grad_enabled as a plain call, detach vs no_grad views, and an EMA teacher updated under
no_grad while the student trains."""

import threading

import torch
import torch.nn as nn


def det_init(model, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.77 + i + phase).view_as(
                    p
                )
                * 0.3
            )


class Evaluator:
    def __init__(self, model):
        self.model = model

    @torch.no_grad()
    def score(self, x):
        return self.model(x).sum(), torch.is_grad_enabled()

    @torch.inference_mode()
    def predict(self, x):
        return self.model(x)

    @torch.enable_grad()
    def grad_inside(self, x):
        x = x.clone().requires_grad_(True)
        self.model(x).sum().backward()
        return x.grad


@torch.no_grad()
def batches(n):
    for i in range(n):
        yield torch.is_grad_enabled(), torch.ones(1, requires_grad=True) * i


def main():
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1))
    det_init(model)
    x = torch.linspace(-1, 1, 6).view(2, 3)
    ev = Evaluator(model)
    s, enabled = ev.score(x)
    print("no_grad_method", round(s.item(), 5), enabled, s.requires_grad, torch.is_grad_enabled())
    p = ev.predict(x)
    print("inference_method", p.is_inference(), p.requires_grad, torch.is_inference_mode_enabled())
    with torch.no_grad():
        g = ev.grad_inside(x)
        print(
            "enable_grad_in_no_grad",
            [round(v, 5) for v in g.flatten().tolist()],
            torch.is_grad_enabled(),
        )
    print("generator", [(e, t.requires_grad, t.item()) for e, t in batches(3)])

    with torch.no_grad():
        a = model(x)
        with torch.enable_grad():
            b = model(x)
            with torch.set_grad_enabled(False):
                c = model(x)
        w = torch.ones(2, requires_grad=True)
        w2 = w * 2
        leaf = torch.zeros(2).requires_grad_()
    print(
        "nesting",
        a.requires_grad,
        b.requires_grad,
        c.requires_grad,
        w2.requires_grad,
        w2.is_leaf,
        leaf.requires_grad,
        leaf.is_leaf,
    )
    torch.set_grad_enabled(False)
    print("set_call", torch.is_grad_enabled(), (w * 3).requires_grad)
    torch.set_grad_enabled(True)
    print("set_call_back", torch.is_grad_enabled(), (w * 3).requires_grad)
    with torch.set_grad_enabled(False) as ctx:
        print("ctx_value", type(ctx).__name__, torch.is_grad_enabled())

    with torch.inference_mode():
        t = torch.ones(3) * 2
        with torch.inference_mode(False):
            u = torch.ones(3)
            print(
                "inner_inference_off",
                torch.is_inference_mode_enabled(),
                u.is_inference(),
                torch.is_grad_enabled(),
            )
        view = t[:2]
    print(
        "inference_tensors",
        t.is_inference(),
        view.is_inference(),
        u.is_inference(),
        torch.is_inference_mode_enabled(),
    )
    try:
        t.add_(1)
    except RuntimeError as e:
        print("inplace_error", str(e).split(".")[0])
    try:
        (t * w.sum()).sum().backward()
        print("use_in_autograd", w.grad.tolist())
    except RuntimeError as e:
        print("use_in_autograd_error", str(e).split(".")[0])
    try:
        torch.nn.functional.linear(
            t.view(1, 3), torch.ones(1, 3, requires_grad=True)
        ).sum().backward()
        print("linear_ok", True)
    except RuntimeError as e:
        print("linear_error", str(e).split(".")[0])
    cloned = t.clone()
    print("clone_outside", cloned.is_inference(), cloned.add_(1).tolist())
    try:
        t.requires_grad_(True)
        print("inference_requires_grad", t.requires_grad)
    except RuntimeError as e:
        print("inference_requires_grad_error", str(e).split(".")[0])

    d = w.detach()
    d.add_(1)
    print("detach_shares", w.tolist(), d.requires_grad)
    with torch.no_grad():
        v = w[:1]
        v.mul_(10)
    print("no_grad_inplace_leaf", w.tolist(), w.is_leaf, w.grad_fn)
    try:
        w.mul_(2)
    except RuntimeError as e:
        print("leaf_inplace_error", str(e))

    results = {}

    def worker():
        results["thread_enabled"] = torch.is_grad_enabled()
        results["thread_req"] = (w * 2).requires_grad

    with torch.no_grad():
        th = threading.Thread(target=worker)
        th.start()
        th.join()
        results["main_enabled"] = torch.is_grad_enabled()
    print("thread_local", results)

    student = nn.Linear(3, 2)
    teacher = nn.Linear(3, 2)
    det_init(student)
    det_init(teacher, phase=1.0)
    teacher.requires_grad_(False)
    opt = torch.optim.SGD(student.parameters(), lr=0.1)
    target = torch.tensor([[1.0, -1.0], [0.5, 0.0]])
    for step in range(5):
        with torch.no_grad():
            soft = teacher(x)
        loss = ((student(x) - target) ** 2).mean() + 0.1 * ((student(x) - soft) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        with torch.no_grad():
            for pt, ps in zip(teacher.parameters(), student.parameters()):
                pt.mul_(0.9).add_(ps, alpha=0.1)
    print(
        "ema",
        round(loss.item(), 5),
        [round(v, 5) for v in teacher.weight.flatten().tolist()],
        teacher.weight.requires_grad,
        teacher.weight.grad,
    )
    print("decorated_names", Evaluator.score.__name__, Evaluator.predict.__name__, batches.__name__)
    print("final_state", torch.is_grad_enabled(), torch.is_inference_mode_enabled())


if __name__ == "__main__":
    main()
