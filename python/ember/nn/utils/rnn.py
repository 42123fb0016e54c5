"""Variable-length sequences: PackedSequence, pack/pad helpers, as torch.nn.utils.rnn."""

from collections import namedtuple

from ..._C import (
    Tensor,
    cat,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    stack,
    uint8,
)
from ..._ops.creation import arange, empty_like, full, tensor, zeros

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpad_sequence",
    "pack_sequence",
    "unpack_sequence",
]


class PackedSequence(
    namedtuple("PackedSequence", ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])
):
    """Time-major concatenation of the valid steps of a batch of sequences sorted by length."""

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        return (
            self
            if data is self.data
            else type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)
        )

    def cpu(self, *args, **kwargs):
        return self.to(*args, device="cpu", **kwargs)

    def cuda(self, *args, **kwargs):
        return self.to(*args, device="cuda", **kwargs)

    def pin_memory(self):
        return type(self)(
            self.data.pin_memory(), self.batch_sizes, self.sorted_indices, self.unsorted_indices
        )

    # The dtype casts of Tensor, applied to the data (batch_sizes stay int64), as torch's.
    def double(self):
        return self.to(dtype=float64)

    def float(self):
        return self.to(dtype=float32)

    def half(self):
        return self.to(dtype=float16)

    def long(self):
        return self.to(dtype=int64)

    def int(self):
        return self.to(dtype=int32)

    def short(self):
        return self.to(dtype=int16)

    def char(self):
        return self.to(dtype=int8)

    def byte(self):
        return self.to(dtype=uint8)

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False

    def _lengths(self):
        # Sequence i (in sorted order) is as long as the number of steps whose batch size exceeds i.
        sizes = self.batch_sizes.tolist()
        n = sizes[0] if sizes else 0
        return [sum(1 for b in sizes if b > i) for i in range(n)]


def invert_permutation(permutation):
    """The inverse of a permutation tensor (None stays None)."""
    if permutation is None:
        return None
    output = empty_like(permutation)
    output.scatter_(0, permutation, arange(0, permutation.numel(), dtype=permutation.dtype))
    return output


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Packs a padded batch (T, B, *) (or (B, T, *) with batch_first) given the lengths."""
    if isinstance(lengths, Tensor):
        lengths = lengths.tolist()
    lengths = [int(v) for v in lengths]
    if enforce_sorted:
        if any(lengths[i] < lengths[i + 1] for i in range(len(lengths) - 1)):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                "to sidestep this requirement if you do not need ONNX exportability."
            )
        sorted_indices = None
        order = list(range(len(lengths)))
    else:
        order = sorted(range(len(lengths)), key=lambda i: -lengths[i])
        sorted_indices = tensor(order, dtype=int64)
    if any(v <= 0 for v in lengths):
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' "
            "that is <= 0"
        )
    if batch_first:
        input = input.transpose(0, 1)
    if sorted_indices is not None:
        input = input.index_select(1, sorted_indices)
    sorted_lengths = [lengths[i] for i in order]
    if sorted_lengths and sorted_lengths[0] > input.size(0):
        raise RuntimeError(
            f"Expected sequence length to be smaller than or equal to {input.size(0)}, got "
            f"{sorted_lengths[0]}"
        )
    max_len = sorted_lengths[0] if sorted_lengths else 0
    batch_sizes = [sum(1 for v in sorted_lengths if v > t) for t in range(max_len)]
    data = cat([input[t, : batch_sizes[t]] for t in range(max_len)], 0)
    return PackedSequence(data, tensor(batch_sizes, dtype=int64), sorted_indices, None)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of pack_padded_sequence: returns (padded, lengths) in the original batch order."""
    sizes = sequence.batch_sizes.tolist()
    max_len = len(sizes)
    if total_length is not None:
        if total_length < max_len:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, "
                f"but got total_length={total_length} and max sequence length being {max_len}"
            )
    else:
        total_length = max_len
    batch = sizes[0] if sizes else 0
    data = sequence.data
    trailing = list(data.shape[1:])
    steps, offset = [], 0
    for b in sizes:
        step = data[offset : offset + b]
        if b < batch:
            step = cat([step, full([batch - b] + trailing, padding_value, dtype=data.dtype)], 0)
        steps.append(step)
        offset += b
    for _ in range(total_length - max_len):
        steps.append(full([batch] + trailing, padding_value, dtype=data.dtype))
    padded = stack(steps, 0) if steps else zeros([0, batch] + trailing, dtype=data.dtype)
    lengths = tensor(sequence._lengths(), dtype=int64)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    if batch_first:
        padded = padded.transpose(0, 1)
    return padded, lengths


def _pack_like(padded, like):
    """Packs sequence-first `padded` (caller's batch order) with the sizes and order of `like`."""
    if like.sorted_indices is not None:
        padded = padded.index_select(1, like.sorted_indices)
    sizes = like.batch_sizes.tolist()
    data = cat([padded[t, :b] for t, b in enumerate(sizes)], 0)
    return PackedSequence(data, like.batch_sizes, like.sorted_indices, like.unsorted_indices)


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stacks (L_i, *) tensors into (L_max, B, *) (or (B, L_max, *)), padded with padding_value."""
    if padding_side not in ("left", "right"):
        raise ValueError(
            f"Expected padding_side to be one of left or right, but got {padding_side}."
        )
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    max_len = max(s.size(0) for s in sequences)
    padded = []
    for s in sequences:
        pad = max_len - s.size(0)
        if pad:
            filler = full([pad] + list(s.shape[1:]), padding_value, dtype=s.dtype)
            s = cat([s, filler] if padding_side == "right" else [filler, s], 0)
        padded.append(s)
    return stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Splits a padded batch back into a list of unpadded tensors."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[: int(length)] for seq, length in zip(padded_sequences, lengths)]


def pack_sequence(sequences, enforce_sorted=True):
    """Packs a list of variable-length tensors."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences):
    """Unpacks a PackedSequence into a list of tensors."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
