# ruff: noqa: E501
"""Tensor subclasses as libraries build them on __torch_function__: a physical-units Quantity whose
handler checks and propagates units and re-dispatches (its own calls to torch functions on
Quantity arguments come back to it, as torch does), unwraps with DisableTorchFunctionSubclass
and rewraps, handles reflected operators (2 / q is Tensor.__rdiv__), reductions and indexing; a
"masked" subclass that defers to super().__torch_function__ and fixes up results; a call counter
across nested subclass dispatch; torch.overrides helpers (is_tensor_like, has_torch_function,
get_overridable_functions membership, resolve_name); and a subclass passed through nn.Linear
and autograd."""

import torch
import torch.nn as nn
from torch.overrides import has_torch_function, is_tensor_like, resolve_name

CALLS = []


def combine(u1, u2, sign):
    out = dict(u1)
    for k, v in u2.items():
        out[k] = out.get(k, 0) + sign * v
    return {k: v for k, v in sorted(out.items()) if v}


def unit_str(u):
    return "*".join(f"{k}^{v}" if v != 1 else k for k, v in u.items()) or "1"


class Quantity(torch.Tensor):
    @staticmethod
    def __new__(cls, data, units=None):
        t = torch.Tensor._make_subclass(cls, torch.as_tensor(data, dtype=torch.float32))
        t.units = dict(units or {})
        return t

    def __repr__(self):
        with torch._C.DisableTorchFunctionSubclass():
            return f"Quantity({[round(v, 4) for v in self.flatten().tolist()]}, {unit_str(self.units)})"

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        CALLS.append(getattr(func, "__name__", "?"))
        units = [getattr(a, "units", {}) for a in args if isinstance(a, torch.Tensor)]
        if func is torch.Tensor.__rdiv__:
            # other / self: re-dispatches through torch.div on Quantity arguments
            other = Quantity(args[1]) if not isinstance(args[1], Quantity) else args[1]
            return torch.div(other, args[0])
        if func is torch.Tensor.__pow__ and isinstance(args[1], int):
            out = args[0]
            for _ in range(args[1] - 1):
                out = torch.mul(out, args[0])  # re-dispatches: units multiply
            return out
        with torch._C.DisableTorchFunctionSubclass():
            raw = func(*args, **kwargs)
        if func in MUL:
            u = combine(units[0], units[1] if len(units) > 1 else {}, 1)
        elif func in DIV:
            u = combine(units[0], units[1] if len(units) > 1 else {}, -1)
        elif func in ADD:
            if len(units) > 1 and units[0] != units[1]:
                raise ValueError(f"cannot add {unit_str(units[0])} and {unit_str(units[1])}")
            u = units[0]
        elif func in {
            torch.Tensor.sum,
            torch.sum,
            torch.Tensor.mean,
            torch.Tensor.__getitem__,
            torch.Tensor.abs,
            torch.Tensor.neg,
            torch.Tensor.__neg__,
            torch.Tensor.clone,
            torch.Tensor.max,
        }:
            u = units[0]
        else:
            return raw
        if isinstance(raw, torch.Tensor):
            out = raw.as_subclass(Quantity)
            out.units = u
            return out
        return raw


# The unit rules, looked up by the handler (filled after the class, as the extending-torch docs'
# HANDLED_FUNCTIONS tables are).
MUL = {torch.mul, torch.Tensor.mul, torch.Tensor.__mul__, torch.Tensor.__rmul__}
DIV = {torch.div, torch.Tensor.div, torch.Tensor.__truediv__}
ADD = {
    torch.add,
    torch.Tensor.add,
    torch.Tensor.__add__,
    torch.Tensor.__radd__,
    torch.sub,
    torch.Tensor.sub,
    torch.Tensor.__sub__,
}


class Masked(torch.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if isinstance(out, Masked) and out.dtype.is_floating_point:
            with torch._C.DisableTorchFunctionSubclass():
                out = torch.nan_to_num(out, nan=0.0).as_subclass(Masked)
        return out


class Counting(torch.Tensor):
    depth = 0
    seen = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        Counting.seen.append((Counting.depth, getattr(func, "__name__", "?")))
        Counting.depth += 1
        try:
            if getattr(func, "__name__", "") == "add":
                return (
                    torch.mul(args[0], 1) + 0
                    if len(Counting.seen) < 3
                    else super().__torch_function__(func, types, args, kwargs or {})
                )
            return super().__torch_function__(func, types, args, kwargs or {})
        finally:
            Counting.depth -= 1


def main():
    dist = Quantity([3.0, 4.0, 12.0], {"m": 1})
    time = Quantity([1.0, 2.0, 4.0], {"s": 1})
    speed = dist / time
    print("speed", speed, type(speed).__name__)
    accel = speed / time
    print("accel", accel)
    area = dist**2
    print("pow_redispatch", area)
    CALLS.clear()
    inv = 2 / time
    print("rdiv", inv, CALLS)
    CALLS.clear()
    total = dist.sum()
    print("sum", total, dist[1:], (-dist).units, CALLS)
    try:
        dist + time
    except ValueError as e:
        print("unit_error", e)
    print("same_units", dist + dist, torch.add(dist, dist, alpha=2))
    plain = torch.ones(3) * 2
    print("mixed", type(plain * dist).__name__, (plain * dist).units, torch.mul(plain, dist))
    print("mean_max", dist.mean(), dist.max(), torch.sum(time))
    print(
        "untracked",
        type(dist.exp()).__name__,
        type(torch.sqrt(dist)).__name__,
        dist.shape,
        dist.dtype,
    )
    CALLS.clear()
    _ = dist.shape
    print("attr_calls", CALLS)

    m = torch.tensor([1.0, float("nan"), 3.0]).as_subclass(Masked)
    print(
        "masked",
        type(m * 2).__name__,
        (m * 2).tolist(),
        torch.add(m, 1).tolist(),
        type(m.sum()).__name__,
        round(m.sum().item(), 3),
    )
    print("masked_int", (m > 1).dtype, type(m > 1).__name__, (m > 1).tolist())

    c = torch.tensor([1.0, 2.0]).as_subclass(Counting)
    out = torch.add(c, c)
    print("nested_dispatch", type(out).__name__, out.tolist(), Counting.seen)

    print(
        "helpers",
        is_tensor_like(dist),
        is_tensor_like([1.0]),
        has_torch_function((dist,)),
        has_torch_function((torch.ones(1),)),
    )
    print(
        "resolve",
        resolve_name(torch.add),
        resolve_name(torch.Tensor.add),
        resolve_name(torch.nn.functional.relu),
    )

    lin = nn.Linear(3, 2)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor([[0.1, 0.2, 0.3], [-0.1, 0.0, 0.1]]))
        lin.bias.fill_(0.5)
    x = torch.tensor([[1.0, 2.0, 3.0]], requires_grad=True).as_subclass(Masked)
    y = lin(x)
    y.sum().backward()
    print(
        "linear",
        type(y).__name__,
        [round(v, 4) for v in y.tolist()[0]],
        lin.weight.grad.tolist(),
        type(lin.weight).__name__,
    )


if __name__ == "__main__":
    main()
