"""The functorch names torch's docs use, imported as a PyTorch program does: under
python -m ember.run they must be ember's (one line per check)."""

import functorch
import functorch.experimental.control_flow as cf
import torch
from functorch.compile import aot_function, make_boxed_func, min_cut_rematerialization_partition
from functorch.experimental import control_flow
from functorch.experimental.control_flow import cond, map  # noqa: A004

x = torch.arange(6.0).reshape(3, 2)
print("same-module", cf is control_flow)
print("vmap", functorch.vmap(torch.sum)(x).tolist())
print("grad", functorch.grad(lambda t: (t * t).sum())(torch.tensor([1.0, 2.0])).tolist())
print("cond", cond(x.sum() > 0, lambda t: t + 1, lambda t: t - 1, (x,)).tolist())
print("map", map(lambda a, b: a * b, x, torch.tensor(2.0)).tolist())
print("aot", aot_function(lambda t: t.sin() * 2, fw_compiler=lambda gm, _: gm)(x).shape)
print(
    "boxed",
    callable(make_boxed_func(lambda args: args)),
    callable(min_cut_rematerialization_partition),
)
try:
    import functorch.dim  # noqa: F401
except ImportError as e:
    print("dim", type(e).__name__)
