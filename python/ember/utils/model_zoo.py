"""ember.utils.model_zoo, as torch.utils.model_zoo: the older name of hub's loader."""

from ..hub import load_state_dict_from_url as load_url  # noqa: F401

__all__ = ["load_url"]
