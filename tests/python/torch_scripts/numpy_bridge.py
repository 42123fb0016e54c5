# ruff: noqa: E501
"""Mixed tensor / numpy code as data scripts write it: numpy-generated data (a seeded numpy
Generator) fed through from_numpy / as_tensor / tensor, memory shared both ways, numpy scalars
and arrays meeting tensors in arithmetic and indexing, numpy functions applied to tensors,
dtype round trips, and a least-squares fit checked against numpy's."""

import numpy as np
import torch


def main():
    rng = np.random.default_rng(1234)
    X = rng.normal(size=(50, 3)).astype(np.float32)
    w_true = np.array([1.5, -2.0, 0.25], dtype=np.float32)
    y = X @ w_true + 0.01 * rng.normal(size=50).astype(np.float32)

    tx = torch.from_numpy(X)
    print(f"from_numpy {tx.dtype} {tuple(tx.shape)} {tx.stride()}")
    X[0, 0] = 100.0
    print(f"shared_from_numpy {tx[0, 0].item()}")
    X[0, 0] = 0.5
    copy = torch.tensor(X)
    X[0, 1] = 7.0
    print(
        f"tensor_copies {copy[0, 1].item() != 7.0} as_tensor_shares {torch.as_tensor(X)[0, 1].item()}"
    )
    back = tx.numpy()
    back[1, 1] = -3.0
    print(f"numpy_shares {tx[1, 1].item()} same_memory {np.shares_memory(back, X)}")

    ty = torch.as_tensor(y)
    sol = torch.linalg.lstsq(tx, ty.unsqueeze(1)).solution.squeeze(1)
    np_sol = np.linalg.lstsq(X, y, rcond=None)[0]
    print(
        f"lstsq {[round(v, 4) for v in sol.tolist()]} agree {np.allclose(sol.numpy(), np_sol, atol=1e-4)}"
    )

    # numpy scalars with tensors: the tensor's dtype wins, as for Python numbers.
    t32 = torch.ones(3)
    for s in (np.float64(2.5), np.float32(2.5), np.int64(3), np.bool_(True)):
        r = t32 * s
        print(f"scalar_{type(s).__name__} {r.dtype} {r[0].item()}")
    ti = torch.arange(4)
    print(f"int_times_npfloat {(ti * np.float64(0.5)).dtype} {(ti + np.int32(1)).dtype}")
    print(f"np_scalar_left {type(np.float64(2.0) * t32).__name__}")

    # numpy indices into tensors and tensor indices into numpy arrays.
    idx = np.array([3, 0, 2])
    print(
        f"np_index {ti[idx].tolist()} np_int {ti[np.int64(2)].item()} np_bool {ti[np.array([True, False, True, False])].tolist()}"
    )
    arr = np.arange(10) * 10
    print(f"tensor_index_np {arr[torch.tensor([1, 5])].tolist()} {arr[torch.tensor(4)]}")

    # numpy functions on tensors go through __array__.
    t = torch.tensor([[1.0, -2.0], [3.0, 4.0]])
    print(
        f"np_funcs {np.sum(np.asarray(t))} {np.maximum(t.numpy(), 0).tolist()} {np.abs(np.asarray(t)).sum()} {np.linalg.det(np.asarray(t)):.4f}"
    )
    print(f"np_asarray {np.asarray(t).dtype} {np.array(t, dtype=np.float64).dtype}")
    print(f"np_stack {np.stack([t.numpy(), t.numpy()]).shape} {np.concatenate([t, t]).shape}")

    # dtype round trips.
    for dt in (
        torch.float16,
        torch.float64,
        torch.int8,
        torch.uint8,
        torch.int32,
        torch.bool,
        torch.complex64,
    ):
        a = torch.zeros(2, dtype=dt).numpy()
        print(f"roundtrip_{str(dt).split('.')[1]} {a.dtype} {torch.from_numpy(a).dtype}")
    print(f"bf16_numpy {torch.tensor([1.5], dtype=torch.bfloat16).float().numpy().tolist()}")
    try:
        torch.tensor([1.0], requires_grad=True).numpy()
    except RuntimeError as e:
        print(f"numpy_grad_error {e}")
    neg = np.arange(6)[::-1]
    try:
        torch.from_numpy(neg)
    except ValueError as e:
        print(f"negative_stride_error {str(e)[:60]}")
    print(
        f"copy_neg {torch.tensor(neg.copy()).tolist()} as_tensor_neg {torch.as_tensor(np.ascontiguousarray(neg)).tolist()}"
    )
    print(
        f"from_list_np {torch.tensor([np.float32(1.5), np.float32(2.0)]).dtype} {torch.tensor(np.float64(3.0)).dtype}"
    )
    print(
        f"tolist_types {type(torch.tensor([1.5]).tolist()[0]).__name__} {type(torch.tensor(3).item()).__name__}"
    )

    # A tiny numpy-fed regression step.
    model = torch.nn.Linear(3, 1)
    with torch.no_grad():
        model.weight.copy_(torch.from_numpy(np.array([[0.1, 0.2, 0.3]], dtype=np.float32)))
        model.bias.fill_(0.0)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(50):
        loss = torch.nn.functional.mse_loss(model(tx).squeeze(1), ty)
        opt.zero_grad()
        loss.backward()
        opt.step()
    print(
        f"fit_loss {loss.item():.5f} w {np.round(model.weight.detach().numpy().ravel(), 3).tolist()}"
    )
    hist, edges = np.histogram(torch.linspace(0, 1, 11).numpy(), bins=4)
    print(f"histogram {hist.tolist()} {torch.histc(torch.linspace(0, 1, 11), bins=4).tolist()}")


if __name__ == "__main__":
    main()
