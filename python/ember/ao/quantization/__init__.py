"""ember.ao.quantization (torch.ao.quantization): observers, fake quantization, qconfigs and the
eager (prepare / convert / quantize / prepare_qat / quantize_dynamic) and FX
(quantize_fx.prepare_fx / convert_fx) workflows."""

from . import (  # noqa: F401
    _qtypes,
    fake_quantize,
    fuser_method_mappings,
    observer,
    qconfig,
    qconfig_mapping,
    quantization_mappings,
    quantize_fx,
    stubs,
    utils,
)
from .fake_quantize import *  # noqa: F401,F403
from .fake_quantize import fused_moving_avg_obs_fake_quant  # noqa: F401
from .fuse_modules import fuse_known_modules, fuse_modules, fuse_modules_qat  # noqa: F401
from .fuser_method_mappings import *  # noqa: F401,F403
from .observer import *  # noqa: F401,F403
from .observer import _PartialWrapper, _with_args  # noqa: F401
from .qconfig import *  # noqa: F401,F403
from .qconfig_mapping import *  # noqa: F401,F403
from .quantization_mappings import *  # noqa: F401,F403
from .quantize import *  # noqa: F401,F403
from .stubs import *  # noqa: F401,F403
from .utils import *  # noqa: F401,F403


def default_eval_fn(model, calib_data):
    """default_eval_fn(model, calib_data)

    The calibration function of the documented flows: runs `model` on the input of each
    (input, target) pair of `calib_data` (a Dataset or a list)."""
    for data, _target in calib_data:
        model(data)
