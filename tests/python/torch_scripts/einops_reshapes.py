# ruff: noqa: E501
"""The reshapes that einops-style model code spells out by hand: patchify / unpatchify for a
ViT, space-to-depth against pixel_unshuffle, heads split and merged with unflatten/flatten and
einsum with an ellipsis, windowed attention partitions (Swin), sliding windows via unfold and
as_strided, and the stacking/splitting family (tensor_split, hsplit, dstack, column_stack)."""

import torch
import torch.nn.functional as F


def patchify(img, p):
    b, c, h, w = img.shape
    x = img.reshape(b, c, h // p, p, w // p, p)
    return x.permute(0, 2, 4, 3, 5, 1).reshape(b, (h // p) * (w // p), p * p * c)


def unpatchify(x, p, c, h, w):
    b = x.shape[0]
    x = x.reshape(b, h // p, w // p, p, p, c)
    return torch.einsum("bhwpqc->bchpwq", x).reshape(b, c, h, w)


def window_partition(x, ws):
    b, h, w, c = x.shape
    x = x.view(b, h // ws, ws, w // ws, ws, c)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, ws, ws, c)


def window_reverse(win, ws, h, w):
    b = win.shape[0] // ((h // ws) * (w // ws))
    x = win.view(b, h // ws, w // ws, ws, ws, -1)
    return x.permute(0, 1, 3, 2, 4, 5).reshape(b, h, w, -1)


def main():
    img = torch.arange(2 * 3 * 8 * 8, dtype=torch.float32).view(2, 3, 8, 8)
    patches = patchify(img, 4)
    print(f"patches {tuple(patches.shape)} {patches[0, 1, :5].tolist()}")
    print(f"unpatchify_ok {torch.equal(unpatchify(patches, 4, 3, 8, 8), img)}")
    unf = F.unfold(img, kernel_size=4, stride=4).transpose(1, 2)
    print(f"unfold_patches {tuple(unf.shape)} {unf[0, 1, :5].tolist()}")
    s2d = img.view(2, 3, 4, 2, 4, 2).permute(0, 1, 3, 5, 2, 4).reshape(2, 12, 4, 4)
    print(
        f"space_to_depth_eq_unshuffle {torch.equal(s2d, F.pixel_unshuffle(img, 2))} back {torch.equal(F.pixel_shuffle(s2d, 2), img)}"
    )

    x = torch.sin(torch.arange(2 * 5 * 12, dtype=torch.float32)).view(2, 5, 12)
    heads = x.unflatten(-1, (3, 4)).transpose(1, 2)
    print(f"heads {tuple(heads.shape)} contiguous {heads.is_contiguous()} stride {heads.stride()}")
    att = torch.einsum("...qd,...kd->...qk", heads, heads).softmax(-1)
    merged = torch.einsum("...qk,...kd->...qd", att, heads).transpose(1, 2).flatten(-2)
    print(f"merged {tuple(merged.shape)} {merged[0, 0, :3].tolist()}")
    ref = F.scaled_dot_product_attention(heads, heads, heads, scale=1.0)
    print(f"einsum_eq_sdpa {torch.allclose(ref.transpose(1, 2).flatten(-2), merged, atol=1e-5)}")
    print(
        f"einsum_diag {torch.einsum('ii->i', torch.arange(9.0).view(3, 3)).tolist()} trace {torch.einsum('ii', torch.arange(9.0).view(3, 3)).item()}"
    )
    print(f"einsum_outer {torch.einsum('i,j->ij', torch.arange(2.0), torch.arange(3.0)).tolist()}")
    print(
        f"einsum_batch {torch.einsum('bij,bjk->bik', torch.ones(2, 2, 3), torch.ones(2, 3, 1)).flatten().tolist()}"
    )

    fmap = torch.arange(1 * 8 * 8 * 2, dtype=torch.float32).view(1, 8, 8, 2)
    win = window_partition(fmap, 4)
    print(
        f"windows {tuple(win.shape)} {win[1, 0, :2, 0].tolist()} reverse {torch.equal(window_reverse(win, 4, 8, 8), fmap)}"
    )
    shifted = torch.roll(fmap, shifts=(-2, -2), dims=(1, 2))
    print(
        f"shifted {shifted[0, 0, :3, 0].tolist()} back {torch.equal(torch.roll(shifted, (2, 2), (1, 2)), fmap)}"
    )

    sig = torch.arange(10.0)
    print(f"unfold_1d {sig.unfold(0, 4, 3).tolist()}")
    print(f"as_strided {torch.as_strided(sig, (4, 3), (2, 1)).tolist()}")
    print(
        f"tensor_split {[t.tolist() for t in torch.tensor_split(sig, (2, 5))]} {[t.numel() for t in torch.tensor_split(sig, 3)]}"
    )
    m = torch.arange(12.0).view(3, 4)
    print(
        f"hsplit {[tuple(t.shape) for t in torch.hsplit(m, 2)]} vsplit {[tuple(t.shape) for t in torch.vsplit(m, [1])]}"
    )
    print(
        f"dstack {tuple(torch.dstack([m, m]).shape)} column_stack {torch.column_stack([torch.arange(3), torch.arange(3)]).tolist()}"
    )
    print(
        f"hstack {tuple(torch.hstack([m, m]).shape)} vstack {tuple(torch.vstack([m, m[0]]).shape)} row_stack {tuple(torch.row_stack([m[0], m[1]]).shape)}"
    )
    print(
        f"movedim {tuple(img.movedim(1, -1).shape)} {tuple(img.movedim((0, 1), (2, 3)).shape)} swapdims {tuple(img.swapdims(0, 3).shape)}"
    )
    print(
        f"repeat_tile_expand {tuple(m.repeat(2, 1, 1).shape)} {tuple(m.tile((2,)).shape)} {m[:, :1].expand(-1, 3).tolist()}"
    )
    print(
        f"repeat_interleave {torch.repeat_interleave(torch.tensor([1, 2]), torch.tensor([2, 3])).tolist()} {m[:2, :2].repeat_interleave(2, dim=0).tolist()}"
    )
    print(
        f"mT {tuple(torch.ones(2, 3, 4).mT.shape)} flatten {tuple(img.flatten(1, 2).shape)} rot90 {torch.rot90(m[:2, :2], 1, (0, 1)).tolist()}"
    )
    print(
        f"chunk {[tuple(c.shape) for c in m.chunk(3, dim=1)]} split {[tuple(c.shape) for c in m.split([1, 3], dim=1)]}"
    )
    print(f"unbind {[t.tolist() for t in m[:2, :2].unbind(1)]} narrow {m.narrow(1, 1, 2).tolist()}")
    print(
        f"squeeze_dims {tuple(torch.zeros(1, 3, 1, 2).squeeze((0, 2)).shape)} atleast {tuple(torch.atleast_3d(torch.ones(2)).shape)}"
    )
    print(
        f"view_as_strided_ok {torch.zeros(2, 3).t().reshape(6).is_contiguous()} {torch.zeros(4, 4)[:, 1].stride()}"
    )


if __name__ == "__main__":
    main()
