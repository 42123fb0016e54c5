"""Embedding and EmbeddingBag."""

from ..._ops.creation import empty
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _check_padding_idx(padding_idx, num_embeddings):
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
            padding_idx = num_embeddings + padding_idx
    return padding_idx


def _init_weight(module, _weight, dtype, requires_grad=True):
    """Wraps `_weight` as the table, or makes a fresh one that reset_parameters fills."""
    if _weight is None:
        shape = (module.num_embeddings, module.embedding_dim)
        module.weight = Parameter(empty(shape, dtype=dtype), requires_grad=requires_grad)
        module.reset_parameters()
    else:
        assert list(_weight.shape) == [module.num_embeddings, module.embedding_dim], (
            "Shape of weight does not match num_embeddings and embedding_dim"
        )
        module.weight = Parameter(_weight, requires_grad=requires_grad)


def _max_norm_repr(module):
    s = ""
    if module.max_norm is not None:
        s += ", max_norm={max_norm}"
    if module.norm_type != 2:
        s += ", norm_type={norm_type}"
    if module.scale_grad_by_freq is not False:
        s += ", scale_grad_by_freq={scale_grad_by_freq}"
    return s


class Embedding(Module):
    """Embedding(num_embeddings, embedding_dim, padding_idx=None, max_norm=None, norm_type=2.0,
        scale_grad_by_freq=False, sparse=False, _weight=None, _freeze=False, device=None,
        dtype=None)

    A lookup table of `num_embeddings` vectors of size `embedding_dim`.
    """

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
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        _init_weight(self, _weight, dtype, requires_grad=not _freeze)
        self.sparse = sparse

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        s += _max_norm_repr(self)
        if self.sparse is not False:
            s += ", sparse=True"
        return s.format(**self.__dict__)

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        """Creates an Embedding holding `embeddings` (frozen unless freeze=False)."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


class EmbeddingBag(Module):
    """EmbeddingBag(num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
        scale_grad_by_freq=False, mode='mean', sparse=False, _weight=None,
        include_last_offset=False, padding_idx=None, device=None, dtype=None)

    Sums, averages or maxes bags of embeddings without materialising them.
    """

    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        mode="mean",
        sparse=False,
        _weight=None,
        include_last_offset=False,
        padding_idx=None,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _check_padding_idx(padding_idx, num_embeddings)
        _init_weight(self, _weight, dtype)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(
            input,
            self.weight,
            offsets,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.mode,
            self.sparse,
            per_sample_weights,
            self.include_last_offset,
            self.padding_idx,
        )

    def extra_repr(self):
        s = "{num_embeddings}, {embedding_dim}" + _max_norm_repr(self)
        s += ", mode={mode}"
        if self.padding_idx is not None:
            s += ", padding_idx={padding_idx}"
        return s.format(**{**self.__dict__, "mode": repr(self.mode)})

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        mode="mean",
        sparse=False,
        include_last_offset=False,
        padding_idx=None,
    ):
        """Creates an EmbeddingBag holding `embeddings`."""
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        bag = cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            mode=mode,
            sparse=sparse,
            include_last_offset=include_last_offset,
            padding_idx=padding_idx,
        )
        bag.weight.requires_grad = not freeze
        return bag
