"""Image-classifier building blocks written by hand as torchvision defines them: EfficientNet
MBConv (SiLU, squeeze-excitation with SiLU/Sigmoid, stochastic depth in "row" mode), a DenseNet
dense block (BN-ReLU-Conv bottleneck, torch.cat growth, transition with AvgPool2d), an Inception
module (parallel branches, MaxPool2d ceil_mode, AvgPool2d count_include_pad=False); a few SGD
steps with nesterov momentum and weight decay, then eval-mode features."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import Tensor


def stochastic_depth(input: Tensor, p: float, mode: str, training: bool = True) -> Tensor:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"drop probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return input
    survival_rate = 1.0 - p
    if mode == "row":
        size = [input.shape[0]] + [1] * (input.ndim - 1)
    else:
        size = [1] * input.ndim
    noise = torch.empty(size, dtype=input.dtype, device=input.device)
    noise = noise.bernoulli_(survival_rate)
    if survival_rate > 0.0:
        noise.div_(survival_rate)
    return input * noise


class SqueezeExcitation(nn.Module):
    def __init__(self, input_channels, squeeze_channels):
        super().__init__()
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.fc1 = nn.Conv2d(input_channels, squeeze_channels, 1)
        self.fc2 = nn.Conv2d(squeeze_channels, input_channels, 1)
        self.activation = nn.SiLU(inplace=True)
        self.scale_activation = nn.Sigmoid()

    def forward(self, x):
        scale = self.scale_activation(self.fc2(self.activation(self.fc1(self.avgpool(x)))))
        return scale * x


class MBConv(nn.Module):
    def __init__(self, cin, cout, expand, stride, sd_prob):
        super().__init__()
        self.use_res_connect = stride == 1 and cin == cout
        mid = cin * expand
        layers = []
        if mid != cin:
            layers += [
                nn.Conv2d(cin, mid, 1, bias=False),
                nn.BatchNorm2d(mid),
                nn.SiLU(inplace=True),
            ]
        layers += [
            nn.Conv2d(mid, mid, 3, stride, 1, groups=mid, bias=False),
            nn.BatchNorm2d(mid, eps=1e-3, momentum=0.01),
            nn.SiLU(inplace=True),
            SqueezeExcitation(mid, max(1, cin // 4)),
            nn.Conv2d(mid, cout, 1, bias=False),
            nn.BatchNorm2d(cout),
        ]
        self.block = nn.Sequential(*layers)
        self.sd_prob = sd_prob

    def forward(self, x):
        result = self.block(x)
        if self.use_res_connect:
            result = stochastic_depth(result, self.sd_prob, "row", self.training)
            result += x
        return result


class DenseLayer(nn.Module):
    def __init__(self, cin, growth, bn_size):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(cin)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(cin, bn_size * growth, 1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth, growth, 3, padding=1, bias=False)

    def forward(self, inputs):
        prev = [inputs] if isinstance(inputs, Tensor) else inputs
        x = torch.cat(prev, 1)
        x = self.conv1(self.relu1(self.norm1(x)))
        return self.conv2(self.relu2(self.norm2(x)))


class DenseBlock(nn.ModuleDict):
    def __init__(self, num_layers, cin, growth, bn_size=2):
        super().__init__()
        for i in range(num_layers):
            self.add_module("denselayer%d" % (i + 1), DenseLayer(cin + i * growth, growth, bn_size))

    def forward(self, init_features):
        features = [init_features]
        for _name, layer in self.items():
            features.append(layer(features))
        return torch.cat(features, 1)


class Transition(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__()
        self.norm = nn.BatchNorm2d(cin)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(cin, cout, 1, bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class BasicConv2d(nn.Module):
    def __init__(self, cin, cout, **kwargs):
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, bias=False, **kwargs)
        self.bn = nn.BatchNorm2d(cout, eps=0.001)

    def forward(self, x):
        return F.relu(self.bn(self.conv(x)), inplace=True)


class InceptionA(nn.Module):
    def __init__(self, cin, pool_features):
        super().__init__()
        self.branch1x1 = BasicConv2d(cin, 4, kernel_size=1)
        self.branch5x5_1 = BasicConv2d(cin, 3, kernel_size=1)
        self.branch5x5_2 = BasicConv2d(3, 4, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = BasicConv2d(cin, 4, kernel_size=1)
        self.branch3x3dbl_2 = BasicConv2d(4, 4, kernel_size=(1, 3), padding=(0, 1))
        self.branch3x3dbl_3 = BasicConv2d(4, 4, kernel_size=(3, 1), padding=(1, 0))
        self.branch_pool = BasicConv2d(cin, pool_features, kernel_size=1)

    def _forward(self, x):
        b1 = self.branch1x1(x)
        b5 = self.branch5x5_2(self.branch5x5_1(x))
        b3 = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        bp = F.avg_pool2d(x, kernel_size=3, stride=1, padding=1, count_include_pad=False)
        bp = self.branch_pool(bp)
        return [b1, b5, b3, bp]

    def forward(self, x):
        return torch.cat(self._forward(x), 1)


class Net(nn.Module):
    def __init__(self, num_classes=3):
        super().__init__()
        self.stem = nn.Sequential(
            nn.Conv2d(3, 8, 3, 1, 1, bias=False), nn.BatchNorm2d(8), nn.SiLU()
        )
        self.mb = nn.Sequential(
            MBConv(8, 8, 1, 1, 0.0), MBConv(8, 12, 4, 2, 0.1), MBConv(12, 12, 4, 1, 0.2)
        )
        self.dense = DenseBlock(2, 12, growth=4)
        self.trans = Transition(20, 10)
        self.incep = InceptionA(10, pool_features=2)
        self.pool = nn.MaxPool2d(3, stride=2, ceil_mode=True)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.classifier = nn.Sequential(nn.Dropout(p=0.2, inplace=True), nn.Linear(14, num_classes))

    def forward(self, x):
        x = self.incep(self.trans(self.dense(self.mb(self.stem(x)))))
        x = self.pool(x)
        return self.classifier(torch.flatten(self.avgpool(x), 1))


def det_fill(model):
    with torch.no_grad():
        for i, (name, p) in enumerate(model.named_parameters()):
            base = torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.37 + i) * 0.4
            if name.endswith("bn.weight") or ".norm" in name:
                base = base * 0.1 + 1.0
            p.copy_(base.view_as(p))


def main():
    torch.manual_seed(0)
    model = Net()
    det_fill(model)
    print("params", sum(p.numel() for p in model.parameters()))
    print("dense_keys", list(model.dense.keys()))
    print("trans_children", [n for n, _ in model.trans.named_children()])
    x = torch.cos(torch.arange(4 * 3 * 12 * 12, dtype=torch.float32) * 0.11).view(4, 3, 12, 12)
    y = torch.tensor([0, 1, 2, 1])
    feats = {}
    model.dense.register_forward_hook(lambda m, i, o: feats.__setitem__("dense", tuple(o.shape)))
    model.incep.register_forward_hook(lambda m, i, o: feats.__setitem__("incep", tuple(o.shape)))
    model.pool.register_forward_hook(lambda m, i, o: feats.__setitem__("pool", tuple(o.shape)))

    # in eval mode stochastic depth and dropout are identities: deterministic figures
    model.eval()
    with torch.no_grad():
        out = model(x)
    print("eval_logits", [round(v, 4) for v in out[0].tolist()])
    print("shapes", sorted(feats.items()))

    # training mode with stochastic depth and dropout draws from the generator
    model.train()
    drop = stochastic_depth(torch.ones(6, 2), 0.5, "row")
    print("rng_drop_rows", drop[:, 0].tolist())
    try:
        stochastic_depth(x, 1.5, "row")
    except ValueError as e:
        print("bad_p", e)
    for m in model.modules():
        if isinstance(m, MBConv):
            m.sd_prob = 0.0
        if isinstance(m, nn.Dropout):
            m.p = 0.0
    decay, no_decay = [], []
    for name, p in model.named_parameters():
        (no_decay if p.ndim <= 1 else decay).append(p)
    opt = torch.optim.SGD(
        [{"params": decay, "weight_decay": 1e-4}, {"params": no_decay, "weight_decay": 0.0}],
        lr=0.05,
        momentum=0.9,
        nesterov=True,
    )
    losses = []
    for _ in range(3):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y, label_smoothing=0.1)
        loss.backward()
        opt.step()
        losses.append(round(loss.item(), 5))
    print("losses", losses)
    bn = model.mb[1].block[1]
    print(
        "bn_running",
        [round(v, 5) for v in bn.running_mean[:3].tolist()],
        bn.num_batches_tracked.item(),
    )
    print("se_grad", round(model.mb[1].block[6].fc1.weight.grad.abs().sum().item(), 5))
    model.eval()
    with torch.no_grad():
        probs = F.softmax(model(x), dim=1)
    print("eval_probs", [round(v, 4) for v in probs[:, 0].tolist()])


if __name__ == "__main__":
    main()
