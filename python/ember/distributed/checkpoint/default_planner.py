"""The planners save and load accept (ember's planning is fixed: these carry the options)."""

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]


class DefaultSavePlanner:
    """DefaultSavePlanner(flatten_state_dict=True, flatten_sharded_tensors=True,
        dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False, enable_plan_caching=False)

    The save plan: nested state dicts flattened, each chunk written by one rank."""

    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True, **kwargs):
        self.flatten_state_dict = flatten_state_dict


class DefaultLoadPlanner:
    """DefaultLoadPlanner(flatten_state_dict=True, flatten_sharded_tensors=True,
        allow_partial_load=False)

    The load plan; allow_partial_load=True skips the keys of the state dict that the
    checkpoint lacks instead of raising."""

    def __init__(
        self, flatten_state_dict=True, flatten_sharded_tensors=True, allow_partial_load=False
    ):
        self.flatten_state_dict = flatten_state_dict
        self.allow_partial_load = allow_partial_load
