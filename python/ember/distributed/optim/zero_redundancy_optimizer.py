"""ZeroRedundancyOptimizer: an optimizer whose state is split over the ranks of a process group
(ZeRO stage 1, torch.distributed.optim.ZeroRedundancyOptimizer).

Each parameter belongs to one rank: every parameter group's parameters, largest first, go to the
rank with the fewest elements so far (so each rank holds about 1/world of the optimizer state).
A rank's local optimizer (optimizer_class) steps only its own parameters; step() then broadcasts
each rank's updated parameters (one flat broadcast per rank and dtype; with
parameters_as_bucket_view the parameters are views of those flat tensors, so nothing is copied),
so every replica ends the step equal. Gradients must already be averaged (DistributedDataParallel
does it).
"""

import warnings

from ... import _C
from ...autograd.grad_mode import no_grad
from ...optim.optimizer import Optimizer
from .. import distributed_c10d as c10d
from ..algorithms.join import Join, Joinable, JoinHook

__all__ = ["ZeroRedundancyOptimizer"]


def _copy_hyperparameters(src_groups, dst_groups):
    for src, dst in zip(src_groups, dst_groups):
        for key, value in src.items():
            if key != "params":
                dst[key] = value


class _ZeROJoinHook(JoinHook):
    """On a rank that ran out of inputs: steps (its share, with the gradients it has) and takes
    part in the parameter broadcasts, as the training ranks' step() does."""

    def __init__(self, zero):
        self.zero = zero

    def main_hook(self):
        self.zero.step()


class ZeroRedundancyOptimizer(Optimizer, Joinable):
    """ZeroRedundancyOptimizer(params, optimizer_class, process_group=None,
        parameters_as_bucket_view=False, overlap_with_ddp=False, **defaults)

    Wraps optimizer_class (constructed with **defaults) so that each rank of process_group keeps
    the state of only its share of params; step() updates that share and broadcasts it."""

    def __init__(
        self,
        params,
        optimizer_class,
        process_group=None,
        parameters_as_bucket_view=False,
        overlap_with_ddp=False,
        **defaults,
    ):
        # overlap_with_ddp: the steps come from DDP's communication hook (ddp_zero_hook), which,
        # as torch's, refuses the Gloo backend; step() then does nothing, as torch's
        self._overlap_with_ddp = bool(overlap_with_ddp)
        self._group = c10d._group(process_group)
        if self._group is None:
            raise ValueError("ZeroRedundancyOptimizer: this process is not in process_group")
        self.process_group = process_group
        self.world_size = c10d.get_world_size(process_group)
        self.rank = c10d.get_rank(process_group)
        self.global_rank = c10d.get_rank()
        self.parameters_as_bucket_view = parameters_as_bucket_view
        self._partition = [[] for _ in range(self.world_size)]  # param groups per rank
        self._sizes = [0] * self.world_size
        self._all_state_dicts = []
        self.optim = None
        Joinable.__init__(self)
        super().__init__(params, defaults)
        self.optim = optimizer_class(self._partition[self.rank], **defaults)
        _copy_hyperparameters(self.optim.param_groups, self.param_groups)
        self._buckets = self._build_buckets() if parameters_as_bucket_view else None

    # ---- partition ----

    def add_param_group(self, param_group):
        """add_param_group(param_group) -> None

        Adds a parameter group, partitioned over the ranks like the others."""
        super().add_param_group(param_group)
        group = self.param_groups[-1]
        per_rank = [[] for _ in range(self.world_size)]
        for p in sorted(group["params"], key=lambda t: t.numel(), reverse=True):
            r = self._sizes.index(min(self._sizes))
            per_rank[r].append(p)
            self._sizes[r] += p.numel()
        for r, ps in enumerate(per_rank):
            local = dict(group)
            local["params"] = ps
            self._partition[r].append(local)
        if self.optim is not None:
            self.optim.add_param_group(self._partition[self.rank][-1])
            _copy_hyperparameters(self.optim.param_groups[-1:], self.param_groups[-1:])
            if self._buckets is not None:
                self._buckets = self._build_buckets()

    # ---- step ----

    def step(self, closure=None, **kwargs):
        """step(closure=None, **kwargs) -> Optional[float]

        Steps this rank's parameters with the local optimizer, then gives every rank the
        others' updated parameters."""
        if self._overlap_with_ddp:
            warnings.warn(
                "`step()` should not be included in the training loop when `overlap_with_ddp=True`"
            )
            return None
        Join.notify_join_context(self)
        _copy_hyperparameters(self.param_groups, self.optim.param_groups)
        if closure is None:
            loss = self.optim.step(**kwargs)
        else:
            loss = self.optim.step(closure=closure, **kwargs)
        self._broadcast_params()
        _copy_hyperparameters(self.optim.param_groups, self.param_groups)
        return loss

    def _params_by_rank_and_dtype(self):
        """[(rank, [params of one dtype])] for every rank's parameters."""
        out = []
        for r, groups in enumerate(self._partition):
            by_dtype = {}
            for g in groups:
                for p in g["params"]:
                    if p.numel():
                        by_dtype.setdefault(p.dtype, []).append(p)
            out.extend((r, params) for params in by_dtype.values())
        return out

    def _build_buckets(self):
        """parameters_as_bucket_view: each rank's parameters (per dtype) become views of one
        flat tensor, which step() broadcasts as it is."""
        buckets = []
        with no_grad():
            for r, params in self._params_by_rank_and_dtype():
                flat = _C.cat([p.detach().reshape(-1) for p in params])
                off = 0
                for p in params:
                    p.data = flat[off : off + p.numel()].view(p.shape)
                    off += p.numel()
                buckets.append((r, params, flat))
        return buckets

    def _broadcast_params(self):
        if self.world_size == 1:
            return
        with no_grad():
            if self._buckets is not None:
                for r, _, flat in self._buckets:
                    src = c10d.get_global_rank(self._group, r)
                    c10d.broadcast(flat, src=src, group=self.process_group)
                return
            for r, params in self._params_by_rank_and_dtype():
                flat = _C.cat([p.detach().reshape(-1) for p in params])
                c10d.broadcast(
                    flat, src=c10d.get_global_rank(self._group, r), group=self.process_group
                )
                if r != self.rank:
                    off = 0
                    for p in params:
                        p.detach().copy_(flat[off : off + p.numel()].view(p.shape))
                        off += p.numel()

    # ---- uneven inputs ----

    def join_hook(self, **kwargs):
        """join_hook(**kwargs) -> JoinHook

        The hook Join runs on this rank once it ran out of inputs."""
        return _ZeROJoinHook(self)

    @property
    def join_device(self):
        from ..._device import device

        return device("cpu")

    @property
    def join_process_group(self):
        return self._group

    # ---- state dicts ----

    def consolidate_state_dict(self, to=0):
        """consolidate_state_dict(to=0) -> None

        Collects every rank's optimizer state on rank `to` (of the group), for state_dict()
        there. Every rank must call it."""
        local = self.optim.state_dict()
        gathered = [None] * self.world_size if self.rank == to else None
        dst = c10d.get_global_rank(self._group, to)
        c10d.gather_object(local, gathered, dst=dst, group=self.process_group)
        self._all_state_dicts = gathered if self.rank == to else []

    def state_dict(self):
        """state_dict() -> Dict

        The whole optimizer's state, indexed like a plain optimizer's, on the rank that
        consolidate_state_dict gathered it to."""
        if not self._all_state_dicts:
            raise RuntimeError(
                "Optimizer state has not been consolidated on this rank. Please call "
                f"`consolidate_state_dict(to={self.rank})` on all ranks beforehand if you "
                "meant to save the global state."
            )
        out = super().state_dict()
        index = {p: i for i, p in enumerate(p for g in self.param_groups for p in g["params"])}
        state = {}
        for r, local in enumerate(self._all_state_dicts):
            for local_group, group in zip(local["param_groups"], self._partition[r]):
                for local_index, p in zip(local_group["params"], group["params"]):
                    if local_index in local["state"]:
                        state[index[p]] = local["state"][local_index]
        out["state"] = dict(sorted(state.items()))
        return out

    def load_state_dict(self, state_dict):
        """load_state_dict(state_dict) -> None

        Loads a state_dict() result: each rank keeps the state of its own parameters."""
        params = [p for g in self.param_groups for p in g["params"]]
        if len(state_dict["param_groups"]) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        _copy_hyperparameters(state_dict["param_groups"], self.param_groups)
        index = {p: i for i, p in enumerate(params)}
        local_state, local_groups, n = {}, [], 0
        for group, saved in zip(self._partition[self.rank], state_dict["param_groups"]):
            ids = []
            for p in group["params"]:
                if index[p] in state_dict["state"]:
                    local_state[n] = state_dict["state"][index[p]]
                ids.append(n)
                n += 1
            local_groups.append(
                {**{k: v for k, v in saved.items() if k != "params"}, "params": ids}
            )
        self.optim.load_state_dict({"state": local_state, "param_groups": local_groups})
        _copy_hyperparameters(self.param_groups, self.optim.param_groups)
