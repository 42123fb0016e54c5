"""ember.backends: the switches programs set for cuDNN, MPS and CUDA matmul; none apply on CPU."""

import types

cudnn = types.SimpleNamespace(
    enabled=True,
    benchmark=False,
    deterministic=False,
    allow_tf32=True,
    is_available=lambda: False,
    version=lambda: None,
)
mps = types.SimpleNamespace(is_available=lambda: False, is_built=lambda: False)
cuda = types.SimpleNamespace(
    is_built=lambda: False,
    matmul=types.SimpleNamespace(
        allow_tf32=False,
        allow_fp16_reduced_precision_reduction=True,
        allow_bf16_reduced_precision_reduction=True,
    ),
)
mkldnn = types.SimpleNamespace(enabled=True, is_available=lambda: False)
openmp = types.SimpleNamespace(is_available=lambda: False)
