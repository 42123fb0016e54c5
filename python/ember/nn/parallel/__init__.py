"""ember.nn.parallel: DataParallel on a machine without accelerators is the module itself (as
torch's is with no visible GPU); DistributedDataParallel trains one replica per process over an
ember.distributed process group."""

from ..modules.module import Module
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel", "data_parallel"]


class DataParallel(Module):
    """DataParallel(module, device_ids=None, output_device=None, dim=0)

    Wraps `module` as torch.nn.DataParallel does; with no GPU to scatter to, forward calls
    the module directly. state_dict keys carry the `module.` prefix, as torch's."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []
        self.output_device = None
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0, module_kwargs=None):
    """The functional form of DataParallel: module(*inputs, **module_kwargs)."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
