"""ember.backends: the switches programs set for cuDNN, MPS and CUDA matmul (none apply on CPU),
the attention fast path and the CPU's kernel tier."""

import contextlib
import types
import warnings

from .. import _C

cudnn = types.SimpleNamespace(
    enabled=True,
    benchmark=False,
    deterministic=False,
    allow_tf32=True,
    is_available=lambda: False,
    version=lambda: None,
)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True}


def _sdp_flag(name):
    def enabled():
        return _sdp[name]

    def enable(on):
        _sdp[name] = bool(on)

    return enabled, enable


@contextlib.contextmanager
def _sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True, enable_cudnn=True):
    """torch.backends.cuda.sdp_kernel (deprecated): the four backend switches set inside the
    block and restored after it."""
    warnings.warn(
        "`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context manager "
        "will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the new context "
        "manager, with updated signature.",
        FutureWarning,
        stacklevel=3,
    )
    saved = dict(_sdp)
    _sdp.update(
        flash=bool(enable_flash),
        math=bool(enable_math),
        mem_efficient=bool(enable_mem_efficient),
        cudnn=bool(enable_cudnn),
    )
    try:
        yield {}
    finally:
        _sdp.update(saved)


cuda = types.SimpleNamespace(
    is_built=lambda: False,
    sdp_kernel=_sdp_kernel,
    # scaled_dot_product_attention's backend switches: recorded and reported, as torch's CPU
    # build does; ember's CPU kernel is used whatever they say.
    **{
        f"{verb}{name}_sdp{suffix}": _sdp_flag(name)[i]
        for name in _sdp
        for i, (verb, suffix) in enumerate((("", "_enabled"), ("enable_", "")))
    },
    preferred_linalg_library=lambda backend=None: None,
    matmul=types.SimpleNamespace(
        allow_tf32=False,
        allow_fp16_reduced_precision_reduction=True,
        allow_bf16_reduced_precision_reduction=True,
    ),
)
_mha = {"fastpath": True}


def _set_mha_fastpath(on):
    _mha["fastpath"] = bool(on)


# nn.TransformerEncoder's nested-tensor path (padded positions come out as zeros) follows it.
mha = types.SimpleNamespace(
    get_fastpath_enabled=lambda: _mha["fastpath"], set_fastpath_enabled=_set_mha_fastpath
)
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
mkl = types.SimpleNamespace(is_available=lambda: False)
# einsum contracts in ember's own order; as torch's build without the opt_einsum package
opt_einsum = types.SimpleNamespace(
    is_available=lambda: False, get_opt_einsum=lambda: None, enabled=False, strategy=None
)
cpu = types.SimpleNamespace(
    # "AVX512", "AVX2" or "DEFAULT"; ATEN_CPU_CAPABILITY caps it at start-up, as in torch
    get_cpu_capability=lambda: _C._get_cpu_capability(),
)


class _QuantizedEngine:
    """torch.backends.quantized: the quantized engine a program selects. ember has one set of
    int8 kernels (x86/fbgemm rounding) and runs them whichever engine is named; the name is
    validated and reported as torch's CPU build does."""

    supported_engines = ["qnnpack", "onednn", "x86", "fbgemm"]

    def __init__(self):
        self._engine = "x86"

    @property
    def engine(self):
        return self._engine

    @engine.setter
    def engine(self, name):
        if name not in self.supported_engines:
            raise RuntimeError(f"{name} is not a valid value for quantized engine")
        self._engine = name


quantized = _QuantizedEngine()
