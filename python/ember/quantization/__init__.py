"""ember.quantization: the legacy name of ember.ao.quantization (as torch.quantization is of
torch.ao.quantization)."""

from ..ao.quantization import *  # noqa: F401,F403
from ..ao.quantization import (  # noqa: F401
    fake_quantize,
    fuse_known_modules,
    fuse_modules,
    fuse_modules_qat,
    fuser_method_mappings,
    observer,
    qconfig,
    qconfig_mapping,
    quantization_mappings,
    quantize_fx,
    stubs,
    utils,
)
