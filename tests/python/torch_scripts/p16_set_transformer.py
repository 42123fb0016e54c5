"""Set models over padded variable-size sets: pad_sequence (both padding sides), a Set
Transformer (MAB/ISAB/PMA built on nn.MultiheadAttention with key_padding_mask, batch_first),
DeepSets with a masked mean, a TransformerEncoder with src_key_padding_mask in train and in
eval mode (where PyTorch's fast path returns zeros at padded positions), and permutation
invariance checks."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence


def det_init(module, scale=0.5):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            p.copy_(torch.linspace(-1.0, 1.0, p.numel()).reshape(p.shape).mul(i + 2).sin() * scale)


sizes = [5, 3, 4, 2]
sets = [
    torch.stack(
        [torch.sin(torch.arange(n, dtype=torch.float32) * (k + 1) + d) for d in range(3)], 1
    )
    for k, n in enumerate(sizes)
]
x = pad_sequence(sets, batch_first=True)
left = pad_sequence(sets, batch_first=True, padding_value=-1.0, padding_side="left")
mask = torch.arange(x.shape[1])[None] >= torch.tensor(sizes)[:, None]  # True = padding
print("padded", tuple(x.shape), left[1, :2].tolist(), mask.sum(1).tolist())


class MAB(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.ff = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))

    def forward(self, q, k, key_padding_mask=None):
        h, w = self.attn(q, k, k, key_padding_mask=key_padding_mask, need_weights=True)
        h = self.ln1(q + h)
        return self.ln2(h + self.ff(h)), w


class SetTransformer(nn.Module):
    def __init__(self, din=3, d=8, heads=2, inducing=3, seeds=1):
        super().__init__()
        self.embed = nn.Linear(din, d)
        self.inducing = nn.Parameter(torch.zeros(1, inducing, d))
        self.isab1, self.isab2 = MAB(d, heads), MAB(d, heads)
        self.seed = nn.Parameter(torch.zeros(1, seeds, d))
        self.pma = MAB(d, heads)
        self.out = nn.Linear(d, 1)

    def forward(self, x, mask):
        h = self.embed(x)
        i = self.inducing.expand(len(x), -1, -1)
        z, _ = self.isab1(i, h, key_padding_mask=mask)
        h, _ = self.isab2(h, z)
        pooled, w = self.pma(self.seed.expand(len(x), -1, -1), h, key_padding_mask=mask)
        return self.out(pooled.squeeze(1)).squeeze(-1), w


st = SetTransformer()
det_init(st)
pred, w = st(x, mask)
print("st_pred", [round(v, 5) for v in pred.tolist()])
print("pma_weights", tuple(w.shape), [round(v, 5) for v in w[1, 0].tolist()])
perm = torch.tensor([2, 0, 1, 4, 3])
x_perm = x.clone()
x_perm[0] = x[0, perm]
print("perm_invariant", torch.allclose(st(x_perm, mask)[0], pred, atol=1e-5))

target = torch.tensor([s.sum().item() for s in sets]) / 10
opt = torch.optim.Adam(st.parameters(), lr=0.01)
for step in range(6):
    opt.zero_grad()
    loss = F.mse_loss(st(x, mask)[0], target)
    loss.backward()
    opt.step()
print("st_loss", round(loss.item(), 6))


class DeepSets(nn.Module):
    def __init__(self):
        super().__init__()
        self.phi = nn.Sequential(nn.Linear(3, 6), nn.ELU(), nn.Linear(6, 6))
        self.rho = nn.Sequential(nn.Linear(6, 4), nn.SiLU(), nn.Linear(4, 1))

    def forward(self, x, mask):
        keep = (~mask).unsqueeze(-1).float()
        h = self.phi(x) * keep
        return self.rho(h.sum(1) / keep.sum(1)).squeeze(-1)


ds = DeepSets()
det_init(ds)
print("deepsets", [round(v, 5) for v in ds(x, mask).tolist()])
print("ds_masked_eq", torch.allclose(ds(x, mask)[3], ds(x[3:, :2], mask[3:, :2])[0], atol=1e-6))

layer = nn.TransformerEncoderLayer(3, 1, dim_feedforward=8, dropout=0.0, batch_first=True)
enc = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=True)
det_init(enc, 0.3)
train_out = enc(x, src_key_padding_mask=mask)
print("enc_train", round(train_out.sum().item(), 5), round(train_out[3, 3].abs().sum().item(), 5))
enc.eval()
with torch.no_grad():
    eval_out = enc(x, src_key_padding_mask=mask)
print("enc_eval", round(eval_out.sum().item(), 5), eval_out[3, 3].tolist(), eval_out[1, 4].tolist())
print("enc_valid_same", torch.allclose(eval_out[~mask], train_out.detach()[~mask], atol=1e-5))
with torch.no_grad():
    no_mask = enc(x[:1, :5])
print("enc_nomask", tuple(no_mask.shape), round(no_mask.sum().item(), 5))
