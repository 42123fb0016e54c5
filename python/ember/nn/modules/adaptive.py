"""AdaptiveLogSoftmaxWithLoss: the adaptive softmax of Grave et al., "Efficient softmax
approximation for GPUs" (2016), as torch.nn's."""

from collections import namedtuple

from ..._ops.creation import zeros
from ..functional import log_softmax
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """AdaptiveLogSoftmaxWithLoss(in_features, n_classes, cutoffs, div_value=4.0,
        head_bias=False, device=None, dtype=None)

    A softmax over n_classes split at `cutoffs` into a head (the frequent classes plus one
    entry per tail cluster) and tail clusters computed through smaller projections (each
    div_value times narrower than the last). forward(input, target) returns (output, loss):
    each row's log-probability of its target and the mean negative of those."""

    def __init__(
        self,
        in_features,
        n_classes,
        cutoffs,
        div_value=4.0,
        head_bias=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        valid = (
            cutoffs == sorted(cutoffs)
            and min(cutoffs) > 0
            and max(cutoffs) <= n_classes - 1
            and len(set(cutoffs)) == len(cutoffs)
            and all(int(c) == c for c in cutoffs)
        )
        if not valid:
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, **kw),
                    Linear(hidden, size, bias=False, **kw),
                )
            )

    def reset_parameters(self):
        """reset_parameters() -> None

        Draws the head's and the clusters' weights anew."""
        self.head.reset_parameters()
        for proj, out in self.tail:
            proj.reset_parameters()
            out.reset_parameters()

    def forward(self, input_, target_):
        if target_.dim() == 1:
            if input_.dim() != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size",
                    input_.size(),
                )
            if input_.size(0) != target_.size(0):
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            input, target, batched = input_, target_, True
        elif target_.dim() == 0:
            if input_.dim() != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size",
                    input_.size(),
                )
            input, target, batched = input_.unsqueeze(0), target_.unsqueeze(0), False
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batch = target.size(0)
        output = zeros(batch, dtype=input.dtype)
        head_index = target.clone()
        covered = 0
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            in_cluster = (target >= low) & (target < high)
            rows = in_cluster.nonzero().flatten()
            if rows.numel() == 0:
                continue
            covered += rows.numel()
            if i == 0:
                continue  # the head's own classes: their index in the head is the target
            # The row's head entry is its cluster's; the cluster adds the within-cluster term.
            head_index = head_index.index_fill(0, rows, self.shortlist_size + i - 1)
            logp = log_softmax(self.tail[i - 1](input.index_select(0, rows)), dim=1)
            within = logp.gather(1, (target[rows] - low).unsqueeze(1)).squeeze(1)
            output = output.index_copy(0, rows, within)
        if covered != batch:
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{target.min().item()}, {target.max().item()}] were found. "
            )
        head_logp = log_softmax(self.head(input), dim=1)
        output = output + head_logp.gather(1, head_index.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _full_log_prob(self, input, head_output):
        head_logp = log_softmax(head_output, dim=1)
        parts = [head_logp[:, : self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster_logp = log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster_logp + head_logp[:, self.shortlist_size + i].unsqueeze(1))
        from ..._C import cat

        return cat(parts, 1)

    def log_prob(self, input):
        """log_prob(input) -> Tensor

        The log-probabilities of all n_classes for each row of input (N, in_features) or for
        the vector input (in_features)."""
        batched = input.dim() == 2
        x = input if batched else input.unsqueeze(0)
        out = self._full_log_prob(x, self.head(x))
        return out if batched else out.squeeze(0)

    def predict(self, input):
        """predict(input) -> Tensor

        The most likely class of each row of input: log_prob(input).argmax(dim=1)."""
        return self.log_prob(input).argmax(dim=-1)
