"""What programs print: tensors of every dtype and size (summarization, scientific notation,
nan/inf, requires_grad, grad_fn, integer and bool), set_printoptions, print(model) of nested
modules with extra_repr, containers, Parameter, dtype/device/Size/finfo, named_parameters."""

import torch
import torch.nn as nn


class Block(nn.Module):
    def __init__(self, dim, hidden, p=0.1):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.ff = nn.Sequential(
            nn.Linear(dim, hidden),
            nn.GELU(approximate="tanh"),
            nn.Dropout(p),
            nn.Linear(hidden, dim),
        )
        self.scale = nn.Parameter(torch.ones(dim))
        self.register_buffer("mask", torch.tril(torch.ones(3, 3)), persistent=False)

    def forward(self, x):
        return x + self.ff(self.norm(x)) * self.scale


class Scaler(nn.Module):
    def __init__(self, factor, learnable=False):
        super().__init__()
        self.factor, self.learnable = factor, learnable

    def extra_repr(self):
        return f"factor={self.factor}, learnable={self.learnable}"

    def forward(self, x):
        return x * self.factor


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(100, 16, padding_idx=0)
        self.conv = nn.Conv2d(3, 8, kernel_size=3, stride=2, padding=1, bias=False)
        self.bn = nn.BatchNorm2d(8, momentum=0.05)
        self.pool = nn.AdaptiveAvgPool2d((1, 1))
        self.blocks = nn.ModuleList([Block(16, 32) for _ in range(2)])
        self.heads = nn.ModuleDict({"cls": nn.Linear(16, 4), "reg": nn.Linear(16, 1, bias=False)})
        self.lstm = nn.LSTM(16, 8, num_layers=2, batch_first=True, bidirectional=True, dropout=0.2)
        self.attn = nn.MultiheadAttention(16, 4, batch_first=True)
        self.scaler = Scaler(0.5)
        self.extras = nn.ParameterList(
            [nn.Parameter(torch.zeros(2)), nn.Parameter(torch.ones(3, 3))]
        )
        self.pdict = nn.ParameterDict({"alpha": nn.Parameter(torch.tensor(1.0))})
        self.act = nn.LeakyReLU(0.1, inplace=True)
        self.upsample = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.flat = nn.Flatten(1)
        self.convt = nn.ConvTranspose1d(4, 2, 5, stride=2, output_padding=1, dilation=1, groups=2)
        self.pool1 = nn.MaxPool2d(2, stride=2, ceil_mode=True)
        self.gn = nn.GroupNorm(2, 8, affine=False)
        self.soft = nn.Softmax(dim=-1)


def main():
    torch.set_printoptions(profile="default")
    print("T1", torch.arange(6).view(2, 3))
    print("T2", torch.linspace(0, 1, 5))
    print("T3", torch.tensor([1e-8, 1.0, 1e8]))
    print("T4", torch.tensor([float("nan"), float("inf"), -float("inf"), 1.5]))
    print("T5", torch.tensor([True, False]))
    print("T6", torch.tensor([[1.0, -2.5], [3.25, 4.0]], dtype=torch.float64))
    print("T7", torch.tensor(3.5))
    print("T8", torch.tensor([], dtype=torch.int32))
    print("T9", torch.zeros(2, 0, 3))
    print("T10", torch.arange(2000).float())
    print("T11", torch.arange(24).view(2, 3, 4) * 1.5)
    print("T12", torch.tensor([1.0, 2.0], requires_grad=True))
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    print("T13", x * 2)
    print("T14", x.sum())
    print("T15", torch.tensor([1, 2], dtype=torch.int8), torch.tensor([1.5], dtype=torch.float16))
    print("T16", torch.tensor([0.1, 0.2], dtype=torch.bfloat16))
    print("T17", torch.tensor([123456789.0, 0.001]))
    print("T18", torch.tensor([1.0, 2.0, 3.0]).double())
    print("T19", torch.eye(3)[:, :2].t())
    print("T20", torch.full((3,), 7, dtype=torch.long))
    print("T21", torch.tensor([-0.0, 0.0, 1e-5]))
    print("T22", torch.arange(12).view(3, 4)[:, 1])
    torch.set_printoptions(precision=2, linewidth=40)
    print("P1", torch.linspace(-3, 3, 13))
    torch.set_printoptions(threshold=5, edgeitems=2)
    print("P2", torch.arange(30).view(5, 6))
    torch.set_printoptions(profile="full")
    print("P3", torch.arange(1100)[-3:])
    torch.set_printoptions(profile="default")
    print("P4", torch.tensor([1.123456789]))
    torch.set_printoptions(sci_mode=True)
    print("P5", torch.tensor([1.5, 2.25]))
    torch.set_printoptions(profile="default", sci_mode=None)

    net = Net()
    print(net)
    print("PARAM", nn.Parameter(torch.zeros(2)))
    print("PARAM2", nn.Parameter(torch.ones(2, dtype=torch.float64), requires_grad=False))
    print("SIZE", torch.zeros(2, 3).shape, torch.Size([4]), torch.Size([]))
    print(
        "DTYPES", torch.float32, torch.int64, torch.bool, torch.bfloat16, torch.get_default_dtype()
    )
    print("DEVICE", torch.device("cpu"), repr(torch.device("cpu", 0)), torch.zeros(1).device)
    print("FINFO", torch.finfo(torch.float32))
    print("IINFO", torch.iinfo(torch.int16))
    print("LAYOUT", torch.zeros(1).layout, torch.strided)
    n = 0
    for name, p in net.named_parameters():
        n += p.numel()
        print(f"NP {name} {tuple(p.shape)} {p.dtype} {p.requires_grad}")
    print("NPARAMS", n)
    print("BUFFERS", [name for name, _ in net.named_buffers()])
    print("SD_KEYS", len(net.state_dict()), list(net.state_dict())[:5])
    print("MODS", [name for name, _ in net.named_modules()][:8])
    print("CHILD", [type(m).__name__ for m in net.children()][:6])
    print("REPR_SEQ", repr(nn.Sequential(nn.ReLU(), nn.Identity())))
    print("REPR_EMPTY", repr(nn.Sequential()))
    print("STR", str(torch.tensor([1, 2, 3])), repr(torch.tensor([[True]])))
    print("FMT", f"{torch.tensor(2.5):.3f}", "{:d}".format(torch.tensor(7)), f"{torch.tensor(1.0)}")
    print("LIST", [torch.tensor(1.5), torch.tensor([2])])
    print(
        "ITEMS",
        torch.tensor([1.5, 2.5]).tolist(),
        torch.tensor(3).item(),
        float(torch.tensor([4.0])),
    )


if __name__ == "__main__":
    main()
