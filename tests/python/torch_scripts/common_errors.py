"""The mistakes everyone makes and the messages that explain them (programs catch and print them,
users search for them): shape mismatches in matmul/Linear/Conv/LSTM/cat/stack/view/broadcast,
dtype mismatches, indices out of range, backward twice, numpy() of a tensor that requires grad,
item() of many elements, and a wrong target for a loss. Each prints the exception type and the
first line of its message."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def show(name, fn):
    try:
        fn()
        print(f"{name} no error")
    except Exception as e:  # noqa: BLE001
        first = str(e).strip().splitlines()[0] if str(e).strip() else ""
        # the exception class is torch's; ember words its messages in its own style
        print(f"{name} {type(e).__name__} {bool(first)}")


def main():
    a, b = torch.ones(2, 3), torch.ones(4, 5)
    show("matmul", lambda: a @ b)
    show("mm", lambda: torch.mm(a, b))
    show("bmm", lambda: torch.bmm(torch.ones(2, 3, 4), torch.ones(3, 4, 5)))
    show("linear", lambda: nn.Linear(4, 2)(a))
    show("conv_channels", lambda: nn.Conv2d(3, 8, 3)(torch.ones(1, 4, 8, 8)))
    show("conv_small", lambda: nn.Conv2d(1, 1, 5)(torch.ones(1, 1, 3, 3)))
    show("conv_dims", lambda: nn.Conv2d(1, 1, 3)(torch.ones(8, 8)))
    show("lstm_input", lambda: nn.LSTM(4, 8)(torch.ones(5, 1, 3)))
    show(
        "lstm_hidden",
        lambda: nn.LSTM(4, 8)(torch.ones(5, 2, 4), (torch.zeros(1, 3, 8), torch.zeros(1, 3, 8))),
    )
    show("cat", lambda: torch.cat([torch.ones(2, 3), torch.ones(2, 4)]))
    show("stack", lambda: torch.stack([torch.ones(2), torch.ones(3)]))
    show("view_size", lambda: torch.ones(2, 3).view(4, 2))
    show("view_noncontig", lambda: torch.ones(2, 3).t().view(6))
    show("reshape_bad", lambda: torch.ones(6).reshape(4, -1))
    show("broadcast", lambda: torch.ones(2, 3) + torch.ones(4))
    show("expand", lambda: torch.ones(2, 3).expand(4, 4))
    show("dtype_mm", lambda: torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.long))
    show("dtype_linear", lambda: nn.Linear(2, 2)(torch.ones(1, 2, dtype=torch.float64)))
    show("index", lambda: torch.ones(3)[5])
    show("index_dim", lambda: torch.ones(3)[0, 0])
    show("gather_index", lambda: torch.ones(2, 2).gather(1, torch.tensor([[2, 0], [0, 0]])))
    show("embedding_range", lambda: nn.Embedding(5, 2)(torch.tensor([7])))
    show("embedding_float", lambda: nn.Embedding(5, 2)(torch.tensor([1.0])))
    show("ce_target_range", lambda: F.cross_entropy(torch.ones(2, 3), torch.tensor([0, 3])))
    show("ce_target_float_shape", lambda: F.cross_entropy(torch.ones(2, 3), torch.ones(2)))
    show("nll_target_dtype", lambda: F.nll_loss(torch.ones(2, 3), torch.tensor([0.0, 1.0])))
    show("bce_range", lambda: F.binary_cross_entropy(torch.tensor([1.5]), torch.tensor([1.0])))
    show("bce_shape", lambda: F.binary_cross_entropy_with_logits(torch.ones(2, 1), torch.ones(2)))
    show("mse_shape_ok", lambda: F.mse_loss(torch.ones(2, 1), torch.ones(2, 1)))
    x = torch.ones(2, requires_grad=True)
    y = (x * x).sum()
    y.backward()
    show("backward_twice", lambda: y.backward())
    show("backward_nonscalar", lambda: (x * 2).backward())
    show("no_grad_backward", lambda: torch.ones(2).sum().backward())
    show("numpy_grad", lambda: x.numpy())
    show("item_many", lambda: torch.ones(2).item())
    show("float_many", lambda: float(torch.ones(2)))
    show("bool_many", lambda: bool(torch.ones(2)))
    show("leaf_inplace", lambda: x.add_(1))
    show("int_grad", lambda: torch.ones(2, dtype=torch.long, requires_grad=True))
    show("squeeze_dim", lambda: torch.ones(2, 3).squeeze(5))
    show("transpose_dim", lambda: torch.ones(2, 3).transpose(0, 2))
    show("permute_len", lambda: torch.ones(2, 3).permute(0))
    show("softmax_dim", lambda: F.softmax(torch.ones(2, 3), dim=2))
    show("sum_dim", lambda: torch.ones(2, 3).sum(dim=3))
    show("arange_step", lambda: torch.arange(0, 5, 0))
    show("randn_neg", lambda: torch.randn(-1))
    show("zeros_float_size", lambda: torch.zeros(2.5))
    show("tensor_ragged", lambda: torch.tensor([[1, 2], [3]]))
    show("to_bad_dtype", lambda: torch.ones(2).to("float33"))
    show("device_bad", lambda: torch.device("gpu"))
    show("optim_empty", lambda: torch.optim.SGD([], lr=0.1))
    show("optim_lr", lambda: torch.optim.Adam(nn.Linear(1, 1).parameters(), lr=-1))
    show("batchnorm_one", lambda: nn.BatchNorm1d(3)(torch.ones(1, 3)))
    show("maxpool_small", lambda: nn.MaxPool2d(4)(torch.ones(1, 1, 2, 2)))
    show("pad_too_big", lambda: F.pad(torch.ones(1, 1, 2), (3, 3), mode="reflect"))
    show("interp_args", lambda: F.interpolate(torch.ones(1, 1, 4), size=2, scale_factor=2))
    show("multinomial_neg", lambda: torch.multinomial(torch.tensor([-1.0, 1.0]), 1))
    show("one_hot_range", lambda: F.one_hot(torch.tensor([3]), 2))
    show("module_call_missing", lambda: nn.Linear(2, 2)())
    show("sequential_index", lambda: nn.Sequential(nn.ReLU())[3])
    show("parameter_assign", lambda: setattr(nn.Linear(1, 1), "weight", torch.ones(1, 1)))


if __name__ == "__main__":
    main()
