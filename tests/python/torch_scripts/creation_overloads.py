# ruff: noqa: E501
"""Tensor creation the many ways real code spells it: factories with positional and keyword
sizes mixed, dtype inference from Python values, arange/linspace/logspace edge cases, *_like with
dtype overrides, numpy interop sharing memory, frombuffer, complex and polar, meshgrid indexing,
default-dtype switching, type promotion queries, finfo/iinfo, and scalar conversion rules."""

import numpy as np
import torch

xs = list(range(7))
g = torch.Generator().manual_seed(3)
print(
    "randint_overloads",
    torch.randint(len(xs), size=(1,)).shape,
    torch.randint(2, 5, (3,)).shape,
    torch.randint(10, (2, 2), generator=g).dtype,
    torch.randint(low=0, high=3, size=(4,)).shape,
)
print(
    "rand_forms",
    torch.rand(2, 3).shape,
    torch.rand((2, 3)).shape,
    torch.rand(size=(4,)).shape,
    torch.randn([2]).shape,
    torch.rand(2, 3, dtype=torch.float64).dtype,
)
print(
    "randperm",
    torch.randperm(5).dtype,
    sorted(torch.randperm(5).tolist()),
    torch.randperm(4, dtype=torch.int32).dtype,
)
print(
    "zeros_forms",
    torch.zeros(2, 3).shape,
    torch.zeros((2, 3)).shape,
    torch.zeros([2, 3]).shape,
    torch.zeros(size=(1, 2)).shape,
    torch.zeros(torch.Size([3])).shape,
    torch.zeros(()).shape,
)
print(
    "ones_empty",
    torch.ones(2, dtype=torch.int64).tolist(),
    torch.empty(3, 0).shape,
    torch.empty((0,)).numel(),
)
print(
    "full_infer",
    torch.full((2,), 7).dtype,
    torch.full((2,), 7.0).dtype,
    torch.full((2,), True).dtype,
    torch.full((1,), 1 + 2j).dtype,
    torch.full((2,), 3, dtype=torch.float32).tolist(),
)
print(
    "tensor_infer",
    torch.tensor([1, 2]).dtype,
    torch.tensor([1, 2.0]).dtype,
    torch.tensor([True, False]).dtype,
    torch.tensor([1, 2j]).dtype,
    torch.tensor([]).shape,
    torch.tensor([[]]).shape,
    torch.tensor(3).shape,
)
print(
    "tensor_nested_np",
    torch.tensor([np.float32(1.5), np.float32(2)]).dtype,
    torch.tensor(np.array([1, 2], dtype=np.int16)).dtype,
    torch.tensor([np.int64(3)]).dtype,
)
print("tensor_of_tensors", torch.tensor([torch.tensor(1.0), torch.tensor(2.0)]).tolist())
print(
    "arange",
    torch.arange(5).dtype,
    torch.arange(0, 1, 0.1).shape,
    torch.arange(1, 2.5, 0.5).tolist(),
    torch.arange(10, 0, -3).tolist(),
    torch.arange(0, 5, 2, dtype=torch.float32).tolist(),
)
print(
    "arange_float_end",
    torch.arange(0.0, 0.9, 0.3).shape,
    torch.arange(-1, 1, 0.25).shape,
    torch.arange(5.0).dtype,
)
print(
    "linspace",
    torch.linspace(0, 1, 5).tolist(),
    torch.linspace(-1, 1, steps=1).tolist(),
    torch.linspace(0, 10, 3, dtype=torch.int64).tolist(),
)
print(
    "logspace",
    [round(v, 4) for v in torch.logspace(0, 2, 3).tolist()],
    torch.logspace(0, 3, 4, base=2).tolist(),
)
print("eye", torch.eye(2, 3).tolist(), torch.eye(2, dtype=torch.bool).tolist())
x = torch.zeros(2, 2, dtype=torch.int32)
print(
    "like",
    torch.zeros_like(x, dtype=torch.float32).dtype,
    torch.ones_like(x).dtype,
    torch.full_like(x, 2.7).tolist(),
    torch.rand_like(x, dtype=torch.float64).dtype,
    torch.empty_like(x).shape,
    torch.randint_like(x, 5).dtype,
)
print(
    "new_factories",
    x.new_zeros(3).dtype,
    x.new_ones((1, 2)).tolist(),
    x.new_full((2,), 4).tolist(),
    x.new_tensor([1.5, 2.5]).dtype,
    x.new_empty(0).shape,
)
a = np.arange(6, dtype=np.float64).reshape(2, 3)
t = torch.from_numpy(a)
a[0, 0] = 42
print("from_numpy_shares", t[0, 0].item(), t.dtype, t.stride())
asn = torch.as_tensor(a)
print(
    "as_tensor_shares",
    asn.data_ptr() == t.data_ptr(),
    torch.as_tensor(a, dtype=torch.float32).dtype,
    torch.as_tensor([1, 2]).dtype,
)
print(
    "numpy_back",
    t.numpy().dtype,
    torch.ones(2).numpy().tolist(),
    torch.tensor([1, 2]).numpy().dtype,
)
print("numpy_neg_strides", torch.from_numpy(np.ascontiguousarray(a[:, ::-1])).tolist())
buf = bytearray(np.arange(4, dtype=np.int32).tobytes())
fb = torch.frombuffer(buf, dtype=torch.int32)
buf[0] = 9
print(
    "frombuffer",
    fb.tolist(),
    torch.frombuffer(bytes(8), dtype=torch.float32, count=1).tolist(),
    torch.frombuffer(buf, dtype=torch.int16, offset=4).shape,
)
print(
    "complex",
    torch.complex(torch.tensor([1.0, 2.0]), torch.tensor([0.5, -1.0])).tolist(),
    torch.polar(torch.tensor([2.0]), torch.tensor([0.0])).tolist(),
)
print(
    "complex_dtype",
    torch.complex(
        torch.tensor([1.0], dtype=torch.float64), torch.tensor([0.0], dtype=torch.float64)
    ).dtype,
    torch.tensor(1j).real.dtype,
)
gx, gy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="xy")
print("meshgrid_xy", gx.shape, gx.tolist(), gy.tolist())
ix, iy = torch.meshgrid(torch.arange(3), torch.arange(2), indexing="ij")
print("meshgrid_ij", ix.shape, iy.tolist())
print(
    "tri",
    torch.tril(torch.ones(3, 3), diagonal=-1).tolist(),
    torch.triu(torch.ones(2, 3), 1).tolist(),
)
print("default_dtype", torch.get_default_dtype())
torch.set_default_dtype(torch.float64)
print(
    "default_f64",
    torch.tensor([1.0]).dtype,
    torch.zeros(1).dtype,
    torch.arange(1.0).dtype,
    torch.tensor([1j]).dtype,
    torch.linspace(0, 1, 2).dtype,
)
torch.set_default_dtype(torch.float32)
print("default_back", torch.tensor(2.5).dtype, torch.tensor([1j]).dtype)
print(
    "promote",
    torch.promote_types(torch.int32, torch.float16),
    torch.result_type(torch.tensor([1]), 2.5),
    torch.result_type(torch.tensor([1.0], dtype=torch.float16), torch.tensor(1.0)),
    torch.result_type(2, 3.0),
)
print(
    "can_cast",
    torch.can_cast(torch.float32, torch.int32),
    torch.can_cast(torch.int32, torch.float32),
    torch.can_cast(torch.bool, torch.uint8),
)
fi, ii = torch.finfo(torch.float16), torch.iinfo(torch.int16)
print(
    "finfo",
    fi.eps,
    fi.max,
    fi.tiny,
    fi.bits,
    torch.finfo(torch.bfloat16).eps,
    torch.finfo().dtype,
    torch.finfo(torch.float32).resolution,
)
print("iinfo", ii.min, ii.max, ii.bits, torch.iinfo(torch.uint8).max, torch.iinfo(torch.int64).max)
s = torch.tensor([3.75])
print(
    "scalars",
    s.item(),
    type(s.item()).__name__,
    int(s),
    float(s),
    bool(torch.tensor([0])),
    type(torch.tensor(2).item()).__name__,
    complex(torch.tensor(1 + 1j)),
)
print(
    "index_conv",
    [10, 20, 30][torch.tensor(1)],
    list(range(5))[torch.tensor(1) : torch.tensor(3)],
    torch.tensor(3).__index__(),
)
for i, bad in enumerate(
    [
        lambda: float(torch.ones(2)),
        lambda: int(torch.ones(0)),
        lambda: bool(torch.ones(2)),
        lambda: [1, 2][torch.tensor(1.0)],
        lambda: torch.zeros(-1),
        lambda: torch.arange(0, 1, 0),
        lambda: torch.tensor([[1, 2], [3]]),
    ]
):
    try:
        bad()
        print(f"err{i}", "none")
    except Exception as e:
        print(
            f"err{i}", type(e).__name__, str(e).split("\n")[0].split(": ")[-1][:100]
        )  # ember names the op first
print(
    "types",
    torch.tensor([1]).type(),
    torch.tensor([1.0]).type(torch.DoubleTensor).dtype,
    torch.tensor([1.0]).double().dtype,
    torch.tensor([1]).to(torch.float16).dtype,
    torch.tensor([1.5]).to(dtype=torch.int32).tolist(),
)
print(
    "is_tensor",
    torch.is_tensor([1]),
    torch.is_tensor(torch.ones(1)),
    torch.is_floating_point(torch.ones(1)),
    torch.numel(torch.ones(3, 2)),
    torch.is_storage(torch.ones(1).untyped_storage()),
)
print(
    "legacy",
    torch.FloatTensor([1, 2]).dtype,
    torch.LongTensor(3).shape,
    torch.Tensor([1, 2]).dtype,
    torch.Tensor(2, 3).shape,
    torch.BoolTensor([1, 0]).tolist(),
)
print(
    "heaviside",
    torch.heaviside(torch.tensor([-1.0, 0.0, 2.0]), torch.tensor([0.5])).tolist(),
    torch.signbit(torch.tensor([-0.0, 1.0])).tolist(),
)
print(
    "empty_strided",
    torch.empty_strided((2, 3), (1, 2)).stride(),
    torch.zeros(2, 3).new_empty_strided((2,), (3,)).stride(),
)
