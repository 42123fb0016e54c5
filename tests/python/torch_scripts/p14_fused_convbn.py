"""The 'fusing convolution and batch norm with a custom Function' tutorial on synthetic data:
Conv2D and BatchNorm written as autograd.Functions with @once_differentiable backwards
(conv_transpose2d for the input gradient), gradcheck on each and on the fused Function that
recomputes the convolution in backward, then a small network trained with Adadelta + StepLR,
fused and unfused side by side, evaluated under inference_mode."""

import math

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.autograd.function import once_differentiable


def convolution_backward(grad_out, X, weight):
    grad_input = F.conv2d(X.transpose(0, 1), grad_out.transpose(0, 1)).transpose(0, 1)
    grad_X = F.conv_transpose2d(grad_out, weight)
    return grad_X, grad_input


class Conv2D(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, weight):
        ctx.save_for_backward(X, weight)
        return F.conv2d(X, weight)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        X, weight = ctx.saved_tensors
        return convolution_backward(grad_out, X, weight)


def unsqueeze_all(t):
    return t[None, :, None, None]


def batch_norm_backward(grad_out, X, sum, sqrt_var, N, eps):
    tmp = -((X - unsqueeze_all(sum) / N) * grad_out).sum(dim=(0, 2, 3))
    d_denom = tmp / (sqrt_var + eps) ** 2
    d_var = d_denom / (2 * sqrt_var)
    d_mean_dx = grad_out / unsqueeze_all(sqrt_var + eps)
    d_mean_dx = unsqueeze_all(-d_mean_dx.sum(dim=(0, 2, 3)) / N)
    grad_input = X * unsqueeze_all(d_var * N)
    grad_input += unsqueeze_all(-d_var * sum)
    grad_input *= 2 / ((N - 1) * N)
    grad_input += d_mean_dx
    grad_input *= unsqueeze_all(sqrt_var + eps)
    grad_input += grad_out
    grad_input /= unsqueeze_all(sqrt_var + eps)
    return grad_input


class BatchNorm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, eps=1e-3):
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.save_for_backward(X)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        return (X - unsqueeze_all(mean)) / unsqueeze_all(denom)

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_out):
        (X,) = ctx.saved_tensors
        return batch_norm_backward(grad_out, X, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)


class FusedConvBN2DFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, X, conv_weight, eps=1e-3):
        assert X.ndim == 4
        ctx.save_for_backward(X, conv_weight)
        X = F.conv2d(X, conv_weight)
        sum = X.sum(dim=(0, 2, 3))
        var = X.var(unbiased=True, dim=(0, 2, 3))
        N = X.numel() / X.size(1)
        sqrt_var = torch.sqrt(var)
        ctx.eps = eps
        ctx.sum = sum
        ctx.N = N
        ctx.sqrt_var = sqrt_var
        mean = sum / N
        denom = sqrt_var + eps
        out = X - unsqueeze_all(mean)
        out /= unsqueeze_all(denom)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        X, conv_weight = ctx.saved_tensors
        X_conv_out = F.conv2d(X, conv_weight)
        grad_out = batch_norm_backward(grad_out, X_conv_out, ctx.sum, ctx.sqrt_var, ctx.N, ctx.eps)
        grad_X, grad_input = convolution_backward(grad_out, X, conv_weight)
        return grad_X, grad_input, None


weight = (torch.linspace(-1, 1, 5 * 3 * 3 * 3).reshape(5, 3, 3, 3) * 0.7).double().requires_grad_()
X = torch.linspace(0, 1, 4 * 3 * 5 * 5).reshape(4, 3, 5, 5).sin().double().requires_grad_()
print("gradcheck_conv", torch.autograd.gradcheck(Conv2D.apply, (X, weight)))
a = torch.linspace(-2, 3, 24).reshape(1, 2, 3, 4).cos().double().requires_grad_()
print("gradcheck_bn", torch.autograd.gradcheck(BatchNorm.apply, (a,), fast_mode=False))
Xs = X[:2, :, :4, :4].detach().requires_grad_()
print("gradcheck_fused", torch.autograd.gradcheck(FusedConvBN2DFunction.apply, (Xs, weight)))
out = Conv2D.apply(X, weight)
try:
    torch.autograd.grad(out.sum(), X, create_graph=True)[0].sum().backward()
except RuntimeError as e:
    print("double_backward", str(e)[:70])
print("fused_node", type(FusedConvBN2DFunction.apply(Xs, weight).grad_fn).__name__)


class FusedConvBN(nn.Module):
    def __init__(self, in_channels, out_channels, kernel_size, eps=1e-3):
        super().__init__()
        self.conv_weight = nn.Parameter(
            torch.empty(out_channels, in_channels, kernel_size, kernel_size)
        )
        self.eps = eps
        self.reset_parameters()

    def forward(self, X):
        return FusedConvBN2DFunction.apply(X, self.conv_weight, self.eps)

    def reset_parameters(self):
        nn.init.kaiming_uniform_(self.conv_weight, a=math.sqrt(5))


class Net(nn.Module):
    def __init__(self, fused=True):
        super().__init__()
        self.fused = fused
        if fused:
            self.convbn1 = FusedConvBN(1, 4, 3)
            self.convbn2 = FusedConvBN(4, 6, 3)
        else:
            self.conv1 = nn.Conv2d(1, 4, 3, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(4, affine=False, track_running_stats=False)
            self.conv2 = nn.Conv2d(4, 6, 3, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(6, affine=False, track_running_stats=False)
        self.fc1 = nn.Linear(6 * 4 * 4, 16)
        self.dropout = nn.Dropout(0.5)
        self.fc2 = nn.Linear(16, 3)

    def forward(self, x):
        x = F.relu(self.convbn1(x) if self.fused else self.bn1(self.conv1(x)))
        x = F.relu(self.convbn2(x) if self.fused else self.bn2(self.conv2(x)))
        x = F.max_pool2d(x, 2)
        x = self.fc1(x.flatten(1))
        x = self.dropout(x)
        return F.log_softmax(self.fc2(F.relu(x)), dim=1)


images = torch.linspace(-1, 1, 24 * 12 * 12).reshape(24, 1, 12, 12)
images = torch.sin(images * torch.arange(1, 25).view(24, 1, 1, 1))
labels = torch.arange(24) % 3
loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels), batch_size=8)

for fused in (True, False):
    model = Net(fused=fused)
    with torch.no_grad():
        for i, p in enumerate(model.parameters()):
            p.copy_(
                torch.linspace(-0.4, 0.4, p.numel()).reshape(p.shape).cos() * (0.5 - (i % 2) * 0.6)
            )
    model.dropout.p = 0.0
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    for epoch in range(2):
        model.train()
        for batch_idx, (data, target) in enumerate(loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            if batch_idx % 2 == 0:
                print(
                    "Train {} Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.4f}".format(
                        fused,
                        epoch,
                        batch_idx * len(data),
                        len(loader.dataset),
                        100.0 * batch_idx / len(loader),
                        loss.item(),
                    )
                )
        model.eval()
        test_loss, correct = 0, 0
        with torch.inference_mode():
            for data, target in loader:
                output = model(data)
                test_loss += F.nll_loss(output, target, reduction="sum").item()
                pred = output.argmax(dim=1, keepdim=True)
                correct += pred.eq(target.view_as(pred)).sum().item()
        print(
            "Test {} {}: Average loss: {:.4f}, Accuracy: {}/{}".format(
                fused, epoch, test_loss / len(loader.dataset), correct, len(loader.dataset)
            )
        )
        scheduler.step()
    print("lr", fused, scheduler.get_last_lr())
