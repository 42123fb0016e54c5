"""Quantized Embedding and EmbeddingBag (torch.ao.nn.quantized): rows of quint8 or quint4x2
values quantized per row with float scales and zero points (per_channel_affine_float_qparams),
dequantized on lookup."""

from .....nn.modules.module import Module
from .utils import _ember, _hide_packed_params_repr, _quantize_weight

__all__ = ["EmbeddingPackedParams", "Embedding", "EmbeddingBag"]


class _PackedEmbeddingWeight:
    """The quantized weight and the row bytes the lookup kernel reads (4-bit rows packed two
    values a byte)."""

    def __init__(self, qweight):
        e = _ember()
        self.qweight = qweight
        self.bits = 4 if qweight.dtype == e.quint4x2 else 8
        rows, self.dim = qweight.shape
        r = e._C._quantized.repr_view(qweight)
        if self.bits == 4:
            r = r.to(e.int32)
            if self.dim % 2:
                r = e.cat([r, e.zeros(rows, 1, dtype=e.int32)], 1)
            r = (r[:, 0::2] + r[:, 1::2] * 16).to(e.uint8)
        self.rows = r.contiguous()
        self.scales = qweight.q_per_channel_scales().float().contiguous()
        self.zero_points = qweight.q_per_channel_zero_points().float().contiguous()

    def lookup(self, indices, offsets, mode, per_sample_weights, include_last_offset):
        e = _ember()
        return e._C._quantized.embedding_bag(
            self.rows,
            self.scales,
            self.zero_points,
            self.bits,
            self.dim,
            indices.to(e.int64).contiguous(),
            offsets.to(e.int64).contiguous(),
            mode,
            per_sample_weights,
            include_last_offset,
        )


class EmbeddingPackedParams(Module):
    """Holds the quantized embedding weight; state dict: `dtype`, `_packed_weight`."""

    _version = 1

    def __init__(self, num_embeddings, embedding_dim, dtype=None):
        super().__init__()
        e = _ember()
        self.dtype = e.quint8 if dtype is None else dtype
        if self.dtype not in (e.quint8, e.quint4x2):
            raise NotImplementedError(
                "Unsupported dtype on quantized embedding! Supports quint8 and quint4x2. "
                f"Got dtype: {dtype}"
            )
        wq = e._empty_per_channel_affine_quantized(
            [num_embeddings, embedding_dim],
            scales=e.ones(num_embeddings, dtype=e.float32),
            zero_points=e.zeros(num_embeddings, dtype=e.float32),
            axis=0,
            dtype=self.dtype,
        )
        self.set_weight(wq)

    def set_weight(self, weight):
        """set_weight(weight) -> None

        Replaces the quantized weight."""
        self._packed_weight = _PackedEmbeddingWeight(weight)

    def _weight(self):
        return self._packed_weight.qweight

    def forward(self, x):
        return x

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "dtype"] = self.dtype
        destination[prefix + "_packed_weight"] = self._weight()

    def _load_from_state_dict(
        self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys, error_msgs
    ):
        self.dtype = state_dict.pop(prefix + "dtype")
        self.set_weight(state_dict.pop(prefix + "_packed_weight"))
        super()._load_from_state_dict(
            state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys, error_msgs
        )

    def __repr__(self):
        return self._weight().__repr__()


def _weight_observer(mod, what):
    if hasattr(mod, "weight_fake_quant"):
        return mod.weight_fake_quant
    if type(mod).__name__ != what:
        raise AssertionError(f"nnq.{what}.from_float only works for {what}")
    if not hasattr(mod, "qconfig"):
        raise AssertionError(f"{what} input float module must have qconfig defined")
    if mod.qconfig is not None and mod.qconfig.weight is not None:
        return mod.qconfig.weight()
    from .....quantization import float_qparams_weight_only_qconfig  # the workflow package

    return float_qparams_weight_only_qconfig.weight()


def _check_observer(obs, what):
    e = _ember()
    if getattr(obs.qscheme, "name", str(obs.qscheme)) != "per_channel_affine_float_qparams":
        raise AssertionError(
            f"{what} quantization is only supported with float_qparams_weight_only_qconfig."
        )
    if obs.dtype not in (e.quint8, e.quint4x2):
        raise AssertionError(
            f"The only supported dtype for nnq.{what} is torch.quint8 and torch.quint4x2, "
            f"got {obs.dtype}"
        )


class Embedding(Module):
    """Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
        scale_grad_by_freq=False, sparse=False, _weight=None, dtype=quint8)

    An embedding table of quint8 or quint4x2 rows; lookups return float32 rows."""

    _version = 1

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        dtype=None,
    ):
        super().__init__()
        e = _ember()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.dtype = e.quint8 if dtype is None else dtype
        if _weight is None:
            qweight = e._empty_per_channel_affine_quantized(
                [num_embeddings, embedding_dim],
                scales=e.ones(num_embeddings, dtype=e.float32),
                zero_points=e.zeros(num_embeddings, dtype=e.float32),
                axis=0,
                dtype=e.quint8,
            )
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim: expected "
                    f"{[num_embeddings, embedding_dim]}, got {list(_weight.shape)}"
                )
            qweight = _weight
        self._packed_params = EmbeddingPackedParams(num_embeddings, embedding_dim, self.dtype)
        self._packed_params.set_weight(qweight)

    def forward(self, indices):
        e = _ember()
        flat = indices.reshape(-1)
        offsets = e.arange(flat.numel(), dtype=e.int64)
        out = self._packed_params._packed_weight.lookup(flat, offsets, 0, None, False)
        return out.reshape(list(indices.shape) + [self.embedding_dim])

    def _get_name(self):
        return "QuantizedEmbedding"

    def __repr__(self):
        return _hide_packed_params_repr(self, EmbeddingPackedParams)

    def extra_repr(self):
        return (
            f"num_embeddings={self.num_embeddings}, embedding_dim={self.embedding_dim}, "
            f"dtype={self._packed_params.dtype}, qscheme={self.weight().qscheme()}"
        )

    def set_weight(self, w):
        """set_weight(w) -> None

        Replaces the quantized weight."""
        self._packed_params.set_weight(w)

    def weight(self):
        """weight() -> Tensor

        The quantized weight."""
        return self._packed_params._weight()

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> Embedding

        The quantized embedding of a float one, quantized per row with
        mod.qconfig.weight() (a float-qparams observer)."""
        obs = _weight_observer(mod, "Embedding")
        _check_observer(obs, "Embedding")
        obs(mod.weight)
        qweight = _quantize_weight(mod.weight.float(), obs)
        q = Embedding(mod.num_embeddings, mod.embedding_dim)
        q.set_weight(qweight)
        return q


_MODES = {"sum": 0, "mean": 1, "max": 2}


class EmbeddingBag(Embedding):
    """EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
        scale_grad_by_freq=False, mode='sum', sparse=False, _weight=None,
        include_last_offset=False, dtype=quint8)

    Sums, means or maxima of quantized embedding rows per bag, in float32."""

    _version = 1

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        mode="sum",
        sparse=False,
        _weight=None,
        include_last_offset=False,
        dtype=None,
    ):
        super().__init__(num_embeddings, embedding_dim, _weight=_weight, dtype=dtype)
        self.mode = mode
        self.pruned_weights = False
        self.include_last_offset = include_last_offset

    def forward(
        self, indices, offsets=None, per_sample_weights=None, compressed_indices_mapping=None
    ):
        e = _ember()
        if indices.dim() == 2:
            bags, width = indices.shape
            offsets = e.arange(0, bags * width, width, dtype=e.int64)
            indices = indices.reshape(-1)
            if per_sample_weights is not None:
                per_sample_weights = per_sample_weights.reshape(-1)
        elif offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.float().contiguous()
        return self._packed_params._packed_weight.lookup(
            indices, offsets, _MODES[self.mode], per_sample_weights, self.include_last_offset
        )

    def _get_name(self):
        return "QuantizedEmbeddingBag"

    @classmethod
    def from_float(cls, mod, use_precomputed_fake_quant=False):
        """from_float(mod, use_precomputed_fake_quant=False) -> EmbeddingBag

        The quantized embedding bag of a float one."""
        obs = _weight_observer(mod, "EmbeddingBag")
        _check_observer(obs, "EmbeddingBag")
        obs(mod.weight)
        qweight = _quantize_weight(mod.weight.float(), obs)
        q = EmbeddingBag(
            mod.num_embeddings,
            mod.embedding_dim,
            max_norm=mod.max_norm,
            norm_type=mod.norm_type,
            scale_grad_by_freq=mod.scale_grad_by_freq,
            mode=mod.mode,
            sparse=mod.sparse,
            include_last_offset=mod.include_last_offset,
            dtype=obs.dtype,
        )
        q.set_weight(qweight)
        return q
