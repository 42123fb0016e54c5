"""A 2017-era tutorial, run unchanged on current PyTorch: torch.autograd.Variable wrappers
(volatile included), legacy constructors (torch.FloatTensor(n, m), torch.LongTensor(list)),
the ``FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor`` switch, a hand-written
SGD with momentum using the deprecated ``p.data.add_(-lr, grad)`` / ``addcmul_(value, a, b)``
/ ``addcdiv_(value, a, b)`` overloads, size_average/reduce loss arguments, F.upsample,
softmax without dim, ``.data`` access, ``loss.data.item()`` and the cuda.amp decorators of a
custom Function."""

import warnings

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd import Variable

warnings.simplefilter("ignore")
cuda = torch.cuda.is_available()
FloatTensor = torch.cuda.FloatTensor if cuda else torch.FloatTensor
LongTensor = torch.cuda.LongTensor if cuda else torch.LongTensor
print("types", FloatTensor.__name__, LongTensor.__name__, cuda)

x_np = np.linspace(-1, 1, 24, dtype=np.float32).reshape(8, 3)
x = Variable(torch.from_numpy(x_np).type(FloatTensor))
y = Variable(LongTensor([0, 1, 2, 1, 0, 2, 1, 0]))
print("variable", isinstance(x, Variable), isinstance(x, torch.Tensor), x.requires_grad, y.dtype)
w0 = Variable(torch.zeros(2), requires_grad=True)
print("variable_leaf", w0.requires_grad, w0.is_leaf, w0.grad is None)
with torch.no_grad():
    v = Variable(torch.ones(2), volatile=True)
print("volatile", v.requires_grad, v.tolist())
buf = torch.FloatTensor(2, 3).zero_()
print(
    "legacy_ctor",
    tuple(buf.shape),
    buf.dtype,
    torch.LongTensor([3, 4]).tolist(),
    torch.FloatTensor([1, 2]).dtype,
)
print("type_names", x.type(), y.type(), x.data.type(torch.DoubleTensor).dtype)


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.fc1 = nn.Linear(3, 16)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.tanh(self.fc1(x))
        return F.log_softmax(self.fc2(x))


net = Net()
for k, p in enumerate(net.parameters()):
    p.data = torch.sin(torch.arange(p.numel()).float() * 0.3 + k).view(p.size()) * 0.5
criterion = nn.NLLLoss(size_average=True)
lr, mom = 0.5, 0.9
bufs = [torch.zeros_like(p.data) for p in net.parameters()]
sq = [torch.zeros_like(p.data) for p in net.parameters()]
losses = []
for epoch in range(30):
    net.zero_grad()
    out = net(x)
    loss = criterion(out, y)
    loss.backward()
    for p, b, s in zip(net.parameters(), bufs, sq):
        b.mul_(mom).add_(1 - mom, p.grad.data)
        s.mul_(0.99).addcmul_(0.01, p.grad.data, p.grad.data)
        p.data.add_(-lr, b)
        p.data.addcdiv_(-0.01, b, s.sqrt().add(1e-3))
    losses.append(loss.data.item())
print("train", round(losses[0], 4), round(losses[-1], 4), losses[-1] < losses[0])
pred = net(x).data.max(1)[1]
print("pred", pred.tolist(), int(pred.eq(y.data).sum()))

mse_sum = nn.MSELoss(size_average=False)(x[:, :2], x[:, 1:])
mse_none = nn.MSELoss(reduce=False)(x[:, :2], x[:, 1:])
print("legacy_reduction", round(mse_sum.item(), 4), tuple(mse_none.shape))
up = F.upsample(x.view(1, 1, 8, 3), scale_factor=2, mode="nearest")
print("upsample", tuple(up.shape), round(up.sum().item(), 4))
sm = F.softmax(torch.arange(6.0).view(2, 3))
print("softmax_nodim", [round(v, 4) for v in sm.sum(1).tolist()], round(sm[0, 2].item(), 4))
print(
    "deprecated_math",
    torch.add(torch.ones(2), 3, torch.ones(2)).tolist(),
    torch.ones(2).sub(0.5, torch.ones(2)).tolist(),
)


class Scale(torch.autograd.Function):
    @staticmethod
    @torch.cuda.amp.custom_fwd
    def forward(ctx, inp, s):
        ctx.s = s
        return inp * s

    @staticmethod
    @torch.cuda.amp.custom_bwd
    def backward(ctx, g):
        return g * ctx.s, None


a = Variable(torch.ones(3), requires_grad=True)
Scale.apply(a, 2.5).sum().backward()
print("custom_fn", a.grad.tolist())
with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True):
    q = torch.ones(1, 2, 4, 8)
    att = F.scaled_dot_product_attention(q, q, q)
print("sdp_kernel", tuple(att.shape), torch.backends.cuda.flash_sdp_enabled())
