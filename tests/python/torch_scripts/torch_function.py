"""Extending torch the documented ways: a tensor-like class with __torch_function__ and a table of
handled functions (the "Extending torch" ScalarTensor example), a Tensor subclass that keeps its
type through operations and logs the calls it sees, as_subclass, a Parameter subclass,
torch.overrides helpers, and a custom Module wrapping a subclass through autograd."""

import functools

import torch
import torch.nn as nn

HANDLED_FUNCTIONS = {}


def implements(torch_function):
    def decorator(func):
        functools.update_wrapper(func, torch_function)
        HANDLED_FUNCTIONS[torch_function] = func
        return func

    return decorator


class ScalarTensor:
    def __init__(self, N, value):
        self._N = N
        self._value = value

    def __repr__(self):
        return f"ScalarTensor(N={self._N}, value={self._value})"

    def tensor(self):
        return self._value * torch.eye(self._N)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        if func not in HANDLED_FUNCTIONS or not all(
            issubclass(t, (torch.Tensor, ScalarTensor)) for t in types
        ):
            return NotImplemented
        return HANDLED_FUNCTIONS[func](*args, **kwargs)


@implements(torch.mean)
def mean(input):
    return float(input._value) / input._N


@implements(torch.add)
def add(input, other):
    try:
        if input._N == other._N:
            return ScalarTensor(input._N, input._value + other._value)
        raise ValueError("Shape mismatch!")
    except AttributeError:
        return torch.add(input.tensor(), other)


class LoggingTensor(torch.Tensor):
    log = []

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        LoggingTensor.log.append(getattr(func, "__name__", str(func)))
        return super().__torch_function__(func, types, args, kwargs)


class MetaTensor(torch.Tensor):
    @staticmethod
    def __new__(cls, data, tag=""):
        t = torch.Tensor._make_subclass(cls, data)
        t.tag = tag
        return t

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        out = super().__torch_function__(func, types, args, kwargs or {})
        if isinstance(out, MetaTensor) and not hasattr(out, "tag"):
            out.tag = next((a.tag for a in args if isinstance(a, MetaTensor)), "")
        return out


class MyParam(nn.Parameter):
    pass


def main():
    d = ScalarTensor(5, 2)
    print("scalar_repr", d)
    print("mean", torch.mean(d))
    print("add_same", torch.add(d, ScalarTensor(5, 3)))
    print("add_tensor", torch.add(d, torch.ones(5, 5)).diagonal().tolist())
    try:
        torch.sum(d)
    except TypeError as e:
        print("unhandled TypeError", "ScalarTensor" in str(e))
    print(
        "has_torch_function",
        torch.overrides.has_torch_function((d,)),
        torch.overrides.has_torch_function((torch.ones(1),)),
    )
    print(
        "is_tensor_like",
        torch.overrides.is_tensor_like(d),
        torch.overrides.is_tensor_like(torch.ones(1)),
        torch.is_tensor(d),
    )

    x = torch.arange(4.0).as_subclass(LoggingTensor)
    LoggingTensor.log.clear()
    y = (x * 2 + 1).sum()
    print("logging_type", type(y).__name__, y.item())
    print("log", LoggingTensor.log[:4])
    z = torch.nn.functional.relu(x - 1)
    print("functional_keeps", type(z).__name__, z.tolist())
    print("plain", type(torch.ones(2) + 1).__name__)
    print("mixed", type(torch.ones(4) + x).__name__)
    print("isinstance", isinstance(x, torch.Tensor), x.dtype, x.shape)

    m = MetaTensor(torch.ones(3), tag="units=m")
    n = m * 3
    print("meta", type(n).__name__, getattr(n, "tag", None), n.tolist())
    w = MetaTensor(torch.ones(2, 2, requires_grad=True), tag="w")
    print("meta_grad", w.requires_grad)

    p = MyParam(torch.ones(2))
    print("param_sub", type(p).__name__, isinstance(p, nn.Parameter), p.requires_grad)
    lin = nn.Linear(2, 1)
    lin.weight = MyParam(torch.ones(1, 2))
    print("param_in_module", type(lin.weight).__name__, [n for n, _ in lin.named_parameters()])
    out = lin(torch.tensor([[1.0, 2.0]]))
    out.sum().backward()
    print("param_grad", lin.weight.grad.tolist(), type(lin.weight.grad).__name__)

    a = torch.tensor([1.0, 2.0], requires_grad=True).as_subclass(LoggingTensor)
    b = (a**2).sum()
    b.backward()
    print("subclass_grad", a.grad.tolist() if a.grad is not None else None, type(b).__name__)
    print(
        "get_overridable",
        torch.add in torch.overrides.get_overridable_functions()[torch],
        len(torch.overrides.get_ignored_functions()) > 10,
    )
    print("testing_overrides", callable(torch.overrides.get_testing_overrides()[torch.add]))


if __name__ == "__main__":
    main()
