"""Test-suite helpers that research code imports: torch.testing.assert_close on tensors, nested
containers, scalars and mixed dtypes (rtol/atol defaults per dtype, equal_nan, check_dtype,
check_device, check_stride, msg= as a string and as a callable) and the exact failure messages
users read; torch.allclose / isclose / equal; torch.utils._pytree (tree_flatten /
tree_unflatten / tree_map / tree_leaves / tree_structure, TreeSpec printing, namedtuples and
OrderedDicts, register_pytree_node for a custom container) used to move a nested batch and to
average a list of state dicts; torch.testing.make_tensor's shapes and bounds."""

from collections import OrderedDict, namedtuple

import torch
import torch.utils._pytree as pytree

Pair = namedtuple("Pair", ["left", "right"])


class Box:
    def __init__(self, items, tag):
        self.items, self.tag = items, tag


pytree.register_pytree_node(
    Box,
    lambda b: (b.items, b.tag),
    lambda children, tag: Box(list(children), tag),
    serialized_type_name="testing_pytree.Box",
)


def failure(fn, *args, **kwargs):
    try:
        fn(*args, **kwargs)
        return "passed"
    except (AssertionError, TypeError, ValueError) as e:
        return type(e).__name__ + ": " + " | ".join(line for line in str(e).splitlines() if line)


def main():
    a = torch.tensor([1.0, 2.0, 3.0])
    print("same", failure(torch.testing.assert_close, a, a + 1e-7))
    print("close_fail", failure(torch.testing.assert_close, a, a + torch.tensor([0.0, 1e-3, 2e-3])))
    print("atol_ok", failure(torch.testing.assert_close, a, a + 1e-3, atol=1e-2, rtol=0))
    print("dtype_fail", failure(torch.testing.assert_close, a, a.double()))
    print("dtype_off", failure(torch.testing.assert_close, a, a.double(), check_dtype=False))
    print("shape_fail", failure(torch.testing.assert_close, a, a[:2]))
    print(
        "nan",
        failure(
            torch.testing.assert_close, torch.tensor([float("nan")]), torch.tensor([float("nan")])
        ),
        failure(
            torch.testing.assert_close,
            torch.tensor([float("nan")]),
            torch.tensor([float("nan")]),
            equal_nan=True,
        ),
    )
    print(
        "int_exact",
        failure(torch.testing.assert_close, torch.tensor([1, 2, 3]), torch.tensor([1, 2, 4])),
    )
    print(
        "bool",
        failure(
            torch.testing.assert_close, torch.tensor([True, False]), torch.tensor([True, True])
        ),
    )
    print(
        "scalars",
        failure(torch.testing.assert_close, 1.0, 1.0 + 1e-9),
        failure(torch.testing.assert_close, 2, 3),
    )
    print("nested", failure(torch.testing.assert_close, {"x": [a, a * 2]}, {"x": [a, a * 2 + 1]}))
    print("nested_len", failure(torch.testing.assert_close, [a, a], [a]))
    print("msg_str", failure(torch.testing.assert_close, a, a + 1, msg="weights drifted"))
    print(
        "msg_fn",
        failure(torch.testing.assert_close, a, a + 1, msg=lambda m: "custom: " + m.splitlines()[0]),
    )
    print(
        "stride",
        failure(
            torch.testing.assert_close, torch.ones(2, 3).t(), torch.ones(3, 2), check_stride=True
        ),
    )
    print(
        "half",
        failure(torch.testing.assert_close, a.half(), (a + 1e-3).half()),
        failure(torch.testing.assert_close, a.half(), (a + 0.05).half()),
    )
    print("matrix_fail", failure(torch.testing.assert_close, torch.eye(3), torch.eye(3) * 1.01))
    print("type_mismatch", failure(torch.testing.assert_close, a, [1.0, 2.0, 3.0]).split(":")[0])
    print(
        "allclose",
        torch.allclose(a, a + 1e-6),
        torch.allclose(torch.tensor([float("nan")]), torch.tensor([float("nan")]), equal_nan=True),
        torch.isclose(a, a * 1.001, rtol=1e-4).tolist(),
        torch.equal(a, a.clone()),
    )

    batch = {
        "image": torch.ones(2, 3),
        "meta": Pair(torch.zeros(2), [torch.arange(3), 7, "id"]),
        "extra": OrderedDict(w=torch.full((1,), 0.5)),
    }
    leaves, spec = pytree.tree_flatten(batch)
    print("leaves", len(leaves), [type(x).__name__ for x in leaves])
    print("spec_leaves", spec.num_leaves, type(spec).__name__)
    doubled = pytree.tree_map(lambda t: t * 2 if isinstance(t, torch.Tensor) else t, batch)
    print(
        "tree_map",
        type(doubled["meta"]).__name__,
        doubled["meta"].right[0].tolist(),
        doubled["meta"].right[1:],
        doubled["extra"]["w"].item(),
        type(doubled["extra"]).__name__,
    )
    rebuilt = pytree.tree_unflatten([x for x in leaves], spec)
    print("roundtrip", rebuilt["meta"].left.tolist(), rebuilt.keys() == batch.keys())
    only = pytree.tree_map_only(torch.Tensor, lambda t: tuple(t.shape), batch)
    print("map_only", only["image"], only["meta"].right)
    print(
        "tree_leaves",
        len(pytree.tree_leaves([1, (2, [3, {"k": 4}])])),
        pytree.tree_leaves({"b": 1, "a": 2}),
    )
    print(
        "all_any",
        pytree.tree_all(lambda x: x > 0, [1, (2, 3)]),
        pytree.tree_any(lambda x: x > 2, {"a": 1, "b": [3]}),
    )
    box = Box([torch.ones(1), torch.zeros(2)], "t")
    out = pytree.tree_map(lambda t: t + 1, box)
    print(
        "custom_node",
        type(out).__name__,
        out.tag,
        [t.tolist() for t in out.items],
        len(pytree.tree_leaves(box)),
    )

    states = [
        {"w": torch.full((2,), float(i)), "b": torch.tensor(float(i * 2))} for i in range(1, 4)
    ]
    flat = [pytree.tree_flatten(s)[0] for s in states]
    avg_leaves = [torch.stack(xs).mean(0) for xs in zip(*flat)]
    avg = pytree.tree_unflatten(avg_leaves, pytree.tree_flatten(states[0])[1])
    print("averaged", avg["w"].tolist(), avg["b"].item())

    t = torch.testing.make_tensor((3, 4), dtype=torch.float32, device="cpu", low=-2, high=2)
    i = torch.testing.make_tensor((5,), dtype=torch.int64, device="cpu", low=0, high=10)
    b = torch.testing.make_tensor((2, 2), dtype=torch.bool, device="cpu")
    print(
        "make_tensor",
        tuple(t.shape),
        t.dtype,
        bool(((t >= -2) & (t < 2)).all()),
        i.dtype,
        bool(((i >= 0) & (i < 10)).all()),
        b.dtype,
    )
    print(
        "make_tensor_grad",
        torch.testing.make_tensor(
            2, dtype=torch.float64, device="cpu", requires_grad=True
        ).requires_grad,
        torch.testing.make_tensor(
            (2, 3), dtype=torch.float32, device="cpu", noncontiguous=True
        ).is_contiguous(),
    )


if __name__ == "__main__":
    main()
