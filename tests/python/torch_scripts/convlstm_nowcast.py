# ruff: noqa: E501
"""Precipitation-nowcasting style ConvLSTM (Shi et al.) as GitHub implementations write it: a
ConvLSTMCell with one Conv2d producing the four gates (torch.split / chunk), a multi-layer
ConvLSTM unrolled over time with per-layer hidden states, an encoder-forecaster that predicts
future frames from the last hidden state, teacher-forced training on moving-blob sequences with
Adam and gradient clipping, then autoregressive rollout and per-step MSE."""

import torch
import torch.nn as nn
import torch.nn.functional as F


def det_init(module, scale=0.2):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.31 + 0.007 * k * k + i) * scale).view_as(p))


class ConvLSTMCell(nn.Module):
    def __init__(self, in_ch, hid_ch, k=3):
        super().__init__()
        self.hid_ch = hid_ch
        self.conv = nn.Conv2d(in_ch + hid_ch, 4 * hid_ch, k, padding=k // 2)

    def forward(self, x, state):
        h, c = state
        gates = self.conv(torch.cat([x, h], dim=1))
        i, f, o, g = torch.split(gates, self.hid_ch, dim=1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        return h, c

    def init_hidden(self, b, hw):
        return (torch.zeros(b, self.hid_ch, *hw), torch.zeros(b, self.hid_ch, *hw))


class ConvLSTM(nn.Module):
    def __init__(self, in_ch, hid, layers):
        super().__init__()
        self.cells = nn.ModuleList(
            ConvLSTMCell(in_ch if i == 0 else hid, hid) for i in range(layers)
        )

    def forward(self, seq, states=None):
        b, t, _, h, w = seq.shape
        if states is None:
            states = [cell.init_hidden(b, (h, w)) for cell in self.cells]
        inp = seq
        new_states = []
        for cell, st in zip(self.cells, states):
            outs = []
            for step in range(t):
                st = cell(inp[:, step], st)
                outs.append(st[0])
            inp = torch.stack(outs, dim=1)
            new_states.append(st)
        return inp, new_states


class Nowcaster(nn.Module):
    def __init__(self):
        super().__init__()
        self.encoder = ConvLSTM(1, 6, 2)
        self.forecaster = ConvLSTM(1, 6, 2)
        self.head = nn.Conv2d(6, 1, 1)

    def forward(self, past, future_in):
        _, states = self.encoder(past)
        out, _ = self.forecaster(future_in, states)
        b, t = out.shape[:2]
        return torch.sigmoid(self.head(out.flatten(0, 1))).view(b, t, 1, *out.shape[-2:])

    @torch.no_grad()
    def rollout(self, past, steps):
        _, states = self.encoder(past)
        frame = past[:, -1:]
        preds = []
        for _ in range(steps):
            out, states = self.forecaster(frame, states)
            frame = torch.sigmoid(self.head(out[:, -1])).unsqueeze(1)
            preds.append(frame)
        return torch.cat(preds, dim=1)


def moving_blobs(b=3, t=6, size=8):
    yy, xx = torch.meshgrid(
        torch.arange(size, dtype=torch.float32),
        torch.arange(size, dtype=torch.float32),
        indexing="ij",
    )
    frames = []
    for s in range(t):
        batch = []
        for k in range(b):
            cx, cy = 1.5 + s * 0.8 + k * 0.5, 2.0 + 0.4 * s * (k - 1)
            batch.append(torch.exp(-((xx - cx) ** 2 + (yy - cy) ** 2) / 2.0))
        frames.append(torch.stack(batch))
    return torch.stack(frames, 1).unsqueeze(2)


def main():
    seq = moving_blobs()
    past, future = seq[:, :3], seq[:, 3:]
    model = Nowcaster()
    det_init(model)
    print(f"params {sum(p.numel() for p in model.parameters())}")
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for _ in range(4):
        opt.zero_grad()
        dec_in = torch.cat([past[:, -1:], future[:, :-1]], 1)
        pred = model(past, dec_in)
        loss = F.mse_loss(pred, future)
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        losses.append(round(loss.item(), 5))
    print(f"losses {losses} grad_norm {norm.item():.4f}")
    roll = model.rollout(past, 3)
    print(f"rollout_shape {tuple(roll.shape)}")
    print(
        f"per_step_mse {[round(F.mse_loss(roll[:, i], future[:, i]).item(), 5) for i in range(3)]}"
    )
    print(f"frame_mean {[round(v, 4) for v in roll.mean(dim=(0, 2, 3, 4)).tolist()]}")


if __name__ == "__main__":
    main()
