"""Swin-Transformer pieces from the reference implementation: window partition and reverse with
view/permute, the relative position bias table indexed by a registered relative_position_index
(meshgrid, flatten, broadcast subtraction, permute, sum), the shifted-window attention mask built
by slicing an image mask and masked_fill(-100.0), torch.roll for the cyclic shift, patch merging
(strided slicing + cat), DropPath (stochastic depth, eval), and a tiny classifier's training
steps."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(windows, ws, h, w):
    b = int(windows.shape[0] / (h * w / ws / ws))
    x = windows.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(b, h, w, -1)


class DropPath(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        if self.p == 0.0 or not self.training:
            return x
        keep = 1 - self.p
        mask = x.new_empty((x.shape[0],) + (1,) * (x.ndim - 1)).bernoulli_(keep)
        return x * mask / keep


class WindowAttention(nn.Module):
    def __init__(self, dim, ws, heads):
        super().__init__()
        self.ws, self.heads = ws, heads
        self.scale = (dim // heads) ** -0.5
        self.table = nn.Parameter(torch.zeros((2 * ws - 1) ** 2, heads))
        coords = torch.stack(torch.meshgrid(torch.arange(ws), torch.arange(ws), indexing="ij"))
        flat = torch.flatten(coords, 1)
        rel = (flat[:, :, None] - flat[:, None, :]).permute(1, 2, 0).contiguous()
        rel[:, :, 0] += ws - 1
        rel[:, :, 1] += ws - 1
        rel[:, :, 0] *= 2 * ws - 1
        self.register_buffer("relative_position_index", rel.sum(-1), persistent=False)
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, mask=None):
        bw, n, c = x.shape
        qkv = self.qkv(x).reshape(bw, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        attn = (q * self.scale) @ k.transpose(-2, -1)
        bias = self.table[self.relative_position_index.view(-1)].view(n, n, -1).permute(2, 0, 1)
        attn = attn + bias.unsqueeze(0)
        if mask is not None:
            nw = mask.shape[0]
            attn = attn.view(bw // nw, nw, self.heads, n, n) + mask.unsqueeze(1).unsqueeze(0)
            attn = attn.view(-1, self.heads, n, n)
        attn = attn.softmax(dim=-1)
        return self.proj((attn @ v).transpose(1, 2).reshape(bw, n, c))


class SwinBlock(nn.Module):
    def __init__(self, dim, res, ws, shift, heads=2):
        super().__init__()
        self.res, self.ws, self.shift = res, ws, shift
        self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = WindowAttention(dim, ws, heads)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))
        self.drop_path = DropPath(0.1)
        if shift > 0:
            img = torch.zeros(1, res, res, 1)
            cnt = 0
            for hs in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                for wsl in (slice(0, -ws), slice(-ws, -shift), slice(-shift, None)):
                    img[:, hs, wsl, :] = cnt
                    cnt += 1
            mw = window_partition(img, ws).view(-1, ws * ws)
            am = mw.unsqueeze(1) - mw.unsqueeze(2)
            am = am.masked_fill(am != 0, float(-100.0)).masked_fill(am == 0, float(0.0))
        else:
            am = None
        self.register_buffer("attn_mask", am)

    def forward(self, x):
        b, l, c = x.shape
        h = w = self.res
        sc = x
        x = self.norm1(x).view(b, h, w, c)
        if self.shift > 0:
            x = torch.roll(x, shifts=(-self.shift, -self.shift), dims=(1, 2))
        xw = window_partition(x, self.ws).view(-1, self.ws * self.ws, c)
        aw = self.attn(xw, mask=self.attn_mask).view(-1, self.ws, self.ws, c)
        x = window_reverse(aw, self.ws, h, w)
        if self.shift > 0:
            x = torch.roll(x, shifts=(self.shift, self.shift), dims=(1, 2))
        x = sc + self.drop_path(x.view(b, h * w, c))
        return x + self.drop_path(self.mlp(self.norm2(x)))


class PatchMerging(nn.Module):
    def __init__(self, res, dim):
        super().__init__()
        self.res = res
        self.reduction = nn.Linear(4 * dim, 2 * dim, bias=False)
        self.norm = nn.LayerNorm(4 * dim)

    def forward(self, x):
        b, l, c = x.shape
        x = x.view(b, self.res, self.res, c)
        x = torch.cat([x[:, 0::2, 0::2], x[:, 1::2, 0::2], x[:, 0::2, 1::2], x[:, 1::2, 1::2]], -1)
        return self.reduction(self.norm(x.view(b, -1, 4 * c)))


class TinySwin(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Conv2d(3, 8, 2, 2)
        self.blocks = nn.Sequential(SwinBlock(8, 8, 4, 0), SwinBlock(8, 8, 4, 2))
        self.merge = PatchMerging(8, 8)
        self.head = nn.Linear(16, 5)

    def forward(self, img):
        x = self.embed(img).flatten(2).transpose(1, 2)
        x = self.merge(self.blocks(x))
        return self.head(x.mean(1))


x = torch.arange(2 * 8 * 8 * 3, dtype=torch.float32).view(2, 8, 8, 3)
wp = window_partition(x, 4)
print("partition", tuple(wp.shape), torch.equal(window_reverse(wp, 4, 8, 8), x))
blk = SwinBlock(8, 8, 4, 2)
print(
    "rel_index",
    tuple(blk.attn.relative_position_index.shape),
    blk.attn.relative_position_index[0, :5].tolist(),
    int(blk.attn.relative_position_index.max()),
)
print(
    "attn_mask",
    tuple(blk.attn_mask.shape),
    int((blk.attn_mask == -100).sum()),
    [int((m == 0).sum()) for m in blk.attn_mask],
)
print(
    "buffers",
    sorted(n for n, _ in blk.named_buffers()),
    sorted(k for k in blk.state_dict() if "index" in k or "mask" in k),
)

model = TinySwin()
with torch.no_grad():
    for k, (name, p) in enumerate(model.named_parameters()):
        if "norm" in name:
            continue
        p.copy_(torch.sin(torch.arange(p.numel(), dtype=torch.float32) * 0.29 + k).view_as(p) * 0.2)
imgs = torch.cos(torch.arange(6 * 3 * 16 * 16, dtype=torch.float32) * 0.01).view(6, 3, 16, 16)
labels = torch.tensor([0, 1, 2, 3, 4, 0])
opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.05)
for m in model.modules():
    if isinstance(m, DropPath):
        m.p = 0.0  # deterministic figures; the stochastic path is checked below
for step in range(15):
    loss = F.cross_entropy(model(imgs), labels, label_smoothing=0.1)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if step == 0:
        first = loss.item()
print("train", round(first, 4), round(loss.item(), 4), loss.item() < first)
print(
    "table_grad",
    model.blocks[1].attn.table.grad is not None,
    tuple(model.blocks[1].attn.table.shape),
)
dp = DropPath(0.5)
out = dp(torch.ones(8, 3, 4))
print(
    "drop_path",
    tuple(out.shape),
    set(out.unique().tolist()) <= {0.0, 2.0},
    torch.equal(dp.eval()(torch.ones(2, 3)), torch.ones(2, 3)),
)
