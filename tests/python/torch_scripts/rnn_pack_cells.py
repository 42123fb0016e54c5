# ruff: noqa: E501
"""Recurrent layers the long way and the packed way: unsorted packing (enforce_sorted=False)
through a bidirectional GRU and an LSTM with proj_size, pad_packed_sequence with total_length,
pack_sequence / unpack_sequence / unpad_sequence, the final hidden states in the caller's
order, and GRUCell / LSTMCell / RNNCell loops that reproduce the fused layers."""

import torch
import torch.nn as nn
from torch.nn.utils.rnn import (
    pack_padded_sequence,
    pack_sequence,
    pad_packed_sequence,
    pad_sequence,
    unpack_sequence,
    unpad_sequence,
)


def det_init(module, phase=0.0):
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            k = torch.arange(p.numel(), dtype=torch.float32)
            p.copy_((torch.sin(k * 0.53 + i + phase) * 0.35).view_as(p))


def seqs():
    return [
        torch.cos(torch.arange(L * 3, dtype=torch.float32).view(L, 3) * 0.21 + L)
        for L in (4, 7, 2, 5)
    ]


def main():
    xs = seqs()
    lengths = torch.tensor([len(s) for s in xs])
    padded = pad_sequence(xs, batch_first=True)
    packed = pack_padded_sequence(padded, lengths, batch_first=True, enforce_sorted=False)
    print(
        f"packed batch_sizes {packed.batch_sizes.tolist()} sorted {packed.sorted_indices.tolist()} unsorted {packed.unsorted_indices.tolist()}"
    )
    print(f"packed_data {tuple(packed.data.shape)} {packed.data[:2, 0].tolist()}")

    gru = nn.GRU(3, 5, num_layers=2, bidirectional=True, batch_first=True)
    det_init(gru)
    out, h = gru(packed)
    unpacked, out_lens = pad_packed_sequence(out, batch_first=True, total_length=9)
    print(f"gru_out {tuple(unpacked.shape)} lens {out_lens.tolist()} h {tuple(h.shape)}")
    print(
        f"gru_pad_zero {unpacked[2, 2:].abs().sum().item()} last_fwd_eq_h {torch.allclose(unpacked[1, 6, :5], h[2, 1])}"
    )
    print(f"gru_bwd_first_eq_h {torch.allclose(unpacked[3, 0, 5:], h[3, 3])}")
    alone, h_alone = gru(xs[2].unsqueeze(0))
    print(
        f"gru_alone_agrees {torch.allclose(alone[0], unpacked[2, :2], atol=1e-6)} {torch.allclose(h_alone[:, 0], h[:, 2], atol=1e-6)}"
    )

    lstm = nn.LSTM(3, 6, proj_size=2, batch_first=False)
    det_init(lstm, 1.0)
    print(f"lstm_proj_params {[(n, tuple(p.shape)) for n, p in lstm.named_parameters()]}")
    ps = pack_sequence(xs, enforce_sorted=False)
    out, (h, c) = lstm(ps)
    print(
        f"lstm_proj h {tuple(h.shape)} c {tuple(c.shape)} h0 {[round(v, 5) for v in h[0, 0].tolist()]}"
    )
    outs = unpack_sequence(out)
    print(
        f"unpacked_lens {[tuple(o.shape) for o in outs]} last_eq_h {all(torch.allclose(o[-1], h[0, i]) for i, o in enumerate(outs))}"
    )
    pad_out, lens = pad_packed_sequence(out)
    back = unpad_sequence(pad_out, lens)
    print(
        f"unpad {[tuple(b.shape) for b in back]} same {all(torch.equal(a, b) for a, b in zip(back, outs))}"
    )

    # Cells reproduce the layers step by step.
    x = xs[1]
    rnn = nn.RNN(3, 4, nonlinearity="relu")
    det_init(rnn, 0.4)
    cell = nn.RNNCell(3, 4, nonlinearity="relu")
    cell.load_state_dict({k.replace("_l0", ""): v for k, v in rnn.state_dict().items()})
    hx = torch.zeros(1, 4)
    for t in range(x.shape[0]):
        hx = cell(x[t : t + 1], hx)
    print(
        f"rnncell_eq {torch.allclose(hx, rnn(x.unsqueeze(1))[1][0], atol=1e-6)} {hx[0].tolist()[:2]}"
    )
    gru1 = nn.GRU(3, 4)
    det_init(gru1, 3.0)
    gcell = nn.GRUCell(3, 4)
    gcell.load_state_dict({k.replace("_l0", ""): v for k, v in gru1.state_dict().items()})
    hx = torch.zeros(4)
    for t in range(x.shape[0]):
        hx = gcell(x[t], hx)  # unbatched cell
    print(
        f"grucell_eq {torch.allclose(hx, gru1(x)[1][0], atol=1e-6)} unbatched_shape {tuple(hx.shape)}"
    )
    lstm1 = nn.LSTM(3, 4)
    det_init(lstm1, 4.0)
    lcell = nn.LSTMCell(3, 4)
    lcell.load_state_dict({k.replace("_l0", ""): v for k, v in lstm1.state_dict().items()})
    hx, cx = torch.zeros(1, 4), torch.zeros(1, 4)
    for t in range(x.shape[0]):
        hx, cx = lcell(x[t : t + 1], (hx, cx))
    _, (h_ref, c_ref) = lstm1(x.unsqueeze(1))
    print(
        f"lstmcell_eq {torch.allclose(hx, h_ref[0], atol=1e-6)} {torch.allclose(cx, c_ref[0], atol=1e-6)}"
    )
    loss = hx.sum()
    loss.backward()
    print(f"lstmcell_grad {lcell.weight_hh.grad.abs().sum().item():.5f}")
    try:
        pack_padded_sequence(padded, lengths, batch_first=True)
    except RuntimeError as e:
        print(f"unsorted_error {str(e)[:70]}")


if __name__ == "__main__":
    main()
