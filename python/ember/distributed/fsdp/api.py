"""The options of FSDP1, FullyShardedDataParallel (torch.distributed.fsdp.api): how parameters
are sharded, the mixed-precision and offload policies, and the state-dict types with their
configurations."""

import enum
from collections import namedtuple

__all__ = [
    "BackwardPrefetch",
    "CPUOffload",
    "FullOptimStateDictConfig",
    "OptimStateKeyType",
    "FullStateDictConfig",
    "LocalStateDictConfig",
    "MixedPrecision",
    "OptimStateDictConfig",
    "ShardedOptimStateDictConfig",
    "ShardedStateDictConfig",
    "ShardingStrategy",
    "StateDictConfig",
    "StateDictSettings",
    "StateDictType",
]


class ShardingStrategy(enum.Enum):
    """How FSDP1 shards: FULL_SHARD (parameters, gradients and optimizer state; parameters
    freed after forward and gathered again in backward), SHARD_GRAD_OP (parameters kept whole
    from forward to backward), NO_SHARD (replicated, gradients all-reduced as in DDP),
    HYBRID_SHARD (FULL_SHARD within a shard group, replicated across groups) and
    _HYBRID_SHARD_ZERO2 (SHARD_GRAD_OP within the groups)."""

    FULL_SHARD = enum.auto()
    SHARD_GRAD_OP = enum.auto()
    NO_SHARD = enum.auto()
    HYBRID_SHARD = enum.auto()
    _HYBRID_SHARD_ZERO2 = enum.auto()


class BackwardPrefetch(enum.Enum):
    """When backward starts the next unit's all-gather: BACKWARD_PRE (before this unit's
    gradient computation) or BACKWARD_POST (after it); None disables it."""

    BACKWARD_PRE = enum.auto()
    BACKWARD_POST = enum.auto()


class StateDictType(enum.Enum):
    """What FSDP1's state_dict() returns: FULL_STATE_DICT (whole tensors), SHARDED_STATE_DICT
    (DTensors of this rank's shards) or LOCAL_STATE_DICT (the flat shards)."""

    FULL_STATE_DICT = enum.auto()
    LOCAL_STATE_DICT = enum.auto()
    SHARDED_STATE_DICT = enum.auto()


class OptimStateKeyType(enum.Enum):
    """OptimStateKeyType(value)

    How FullyShardedDataParallel.rekey_optim_state_dict keys an optimizer state dict: by
    parameter name (PARAM_NAME) or by the parameter's index in the optimizer (PARAM_ID)."""

    PARAM_NAME = enum.auto()
    PARAM_ID = enum.auto()


class CPUOffload:
    """CPUOffload(offload_params=False)

    Whether parameters and gradients live in CPU memory. ember computes on the CPU, where
    they already are, so either value changes nothing."""

    def __init__(self, offload_params=False):
        self.offload_params = offload_params

    def __repr__(self):
        return f"CPUOffload(offload_params={self.offload_params})"


class MixedPrecision:
    """MixedPrecision(param_dtype=None, reduce_dtype=None, buffer_dtype=None,
        keep_low_precision_grads=False, cast_forward_inputs=False, cast_root_forward_inputs=True,
        _module_classes_to_ignore=(_BatchNorm,))

    The dtype the forward computes in (param_dtype: the gathered parameters), the one
    gradients are reduced in (reduce_dtype) and the one buffers are kept in (buffer_dtype).
    The root unit casts its floating-point inputs to param_dtype; other units only with
    cast_forward_inputs."""

    def __init__(
        self,
        param_dtype=None,
        reduce_dtype=None,
        buffer_dtype=None,
        keep_low_precision_grads=False,
        cast_forward_inputs=False,
        cast_root_forward_inputs=True,
        _module_classes_to_ignore=None,
    ):
        self.param_dtype = param_dtype
        self.reduce_dtype = reduce_dtype
        self.buffer_dtype = buffer_dtype
        self.keep_low_precision_grads = keep_low_precision_grads
        self.cast_forward_inputs = cast_forward_inputs
        self.cast_root_forward_inputs = cast_root_forward_inputs
        self._module_classes_to_ignore = _module_classes_to_ignore

    def __repr__(self):
        return (
            f"MixedPrecision(param_dtype={self.param_dtype}, reduce_dtype={self.reduce_dtype}, "
            f"buffer_dtype={self.buffer_dtype})"
        )


class StateDictConfig:
    """StateDictConfig(offload_to_cpu=False)

    The base of the state-dict configurations."""

    def __init__(self, offload_to_cpu=False):
        self.offload_to_cpu = offload_to_cpu

    def __repr__(self):
        fields = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class FullStateDictConfig(StateDictConfig):
    """FullStateDictConfig(offload_to_cpu=False, rank0_only=False)

    FULL_STATE_DICT: with rank0_only, ranks other than 0 get an empty dict."""

    def __init__(self, offload_to_cpu=False, rank0_only=False):
        super().__init__(offload_to_cpu)
        self.rank0_only = rank0_only


class ShardedStateDictConfig(StateDictConfig):
    """ShardedStateDictConfig(offload_to_cpu=False, _use_dtensor=False)

    SHARDED_STATE_DICT: the values are DTensors of this rank's shards (ember has no
    ShardedTensor, torch's older form, so _use_dtensor=False gives DTensors as well)."""

    def __init__(self, offload_to_cpu=False, _use_dtensor=False):
        super().__init__(offload_to_cpu)
        self._use_dtensor = _use_dtensor


class LocalStateDictConfig(StateDictConfig):
    """LocalStateDictConfig(offload_to_cpu=False)"""


class OptimStateDictConfig:
    """OptimStateDictConfig(offload_to_cpu=True)

    The base of the optimizer state-dict configurations."""

    def __init__(self, offload_to_cpu=True):
        self.offload_to_cpu = offload_to_cpu

    def __repr__(self):
        fields = ", ".join(f"{k}={v}" for k, v in vars(self).items())
        return f"{type(self).__name__}({fields})"


class FullOptimStateDictConfig(OptimStateDictConfig):
    """FullOptimStateDictConfig(offload_to_cpu=True, rank0_only=False)

    FULL_STATE_DICT for FSDP.optim_state_dict: whole tensors keyed by parameter names; with
    rank0_only, ranks other than 0 get an empty dict."""

    def __init__(self, offload_to_cpu=True, rank0_only=False):
        super().__init__(offload_to_cpu)
        self.rank0_only = rank0_only


class ShardedOptimStateDictConfig(OptimStateDictConfig):
    """ShardedOptimStateDictConfig(offload_to_cpu=True, _use_dtensor=False)

    SHARDED_STATE_DICT for FSDP.optim_state_dict: DTensors of this rank's shards (whatever
    _use_dtensor says, as ShardedStateDictConfig)."""

    def __init__(self, offload_to_cpu=True, _use_dtensor=False):
        super().__init__(offload_to_cpu)
        self._use_dtensor = _use_dtensor


StateDictSettings = namedtuple(
    "StateDictSettings", ["state_dict_type", "state_dict_config", "optim_state_dict_config"]
)
