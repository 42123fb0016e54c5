"""A 10-line tour: tensors, broadcasting, autograd. Run: .venv/bin/python examples/quickstart.py"""

import ember as torch

x = torch.linspace(-1, 1, 5)
w = torch.randn(5, requires_grad=True)
y = (w * x).tanh().sum()
y.backward()
print("x      =", x)
print("y      =", y)
print("dy/dw  =", w.grad)
print("matmul =", torch.ones(2, 3) @ torch.arange(6.0).reshape(3, 2))
