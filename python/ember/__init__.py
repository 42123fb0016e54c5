"""ember: PyTorch's programming model on a fast C++ core. Use it as ``import ember as torch``."""

import os as _os
import sys as _sys


def _load_extension():
    # OpenBLAS (float64 and matrix-vector products) starts its threads when the extension loads and
    # they spin for about 0.1 s after each use, stealing cores from ember's pool, whose own workers
    # spin between ops (Note [Pool wake-up]). A short timeout makes them sleep at once; the variable
    # is read only while OpenBLAS loads, so a user's own setting wins and the environment is
    # restored.
    ours = "OPENBLAS_THREAD_TIMEOUT" not in _os.environ
    if ours:
        _os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"
    try:
        from . import _C
    finally:
        if ours:
            del _os.environ["OPENBLAS_THREAD_TIMEOUT"]
    return _C


_C = _load_extension()
from ._C import *  # noqa: F401,F403  (every public op of the extension)
from ._C import (  # noqa: F401  # noqa: F401
    Generator,
    Tensor,
    bfloat16,
    dtype,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    uint8,
)
from ._C import bool as _bool_dtype

bool = _bool_dtype  # noqa: A001  (torch.bool)
float = float32  # noqa: A001
double = float64
half = float16
long = int64
int = int32  # noqa: A001
short = int16

multiply = mul
divide = div
subtract = sub
clip = clamp
greater = gt
greater_equal = ge
less = lt
less_equal = le
not_equal = ne
negative = neg
absolute = abs
arctan2 = atan2
fix = trunc


from ._size import Size  # noqa: E402

_C._set_size_class(Size)

# The kernels' default thread count follows OMP_NUM_THREADS as torch's does (launchers such as
# ember.distributed.run and torchrun set it to each worker's share of the CPUs), else the
# affinity mask and cgroup CPU quota: the pool reads them (Note [Thread count], core/cpu_quota.cpp).

from . import (  # noqa: E402,F401
    __future__,  # noqa: E402,F401
    _dynamo,
    _logging,
    accelerator,
    amp,
    autograd,
    backends,
    compiler,
    cpu,
    cuda,
    datasets,  # noqa: E402,F401
    distributed,
    export,
    fft,
    func,
    functional,
    futures,
    fx,
    hub,
    jit,
    library,  # noqa: E402,F401
    linalg,
    masked,
    mps,
    multiprocessing,
    nested,
    nn,
    optim,
    overrides,
    profiler,
    quasirandom,
    random,
    signal,
    sparse,
    special,
    storage,
    testing,
    types,
    utils,
    version,
    xpu,
)
from ._C import is_grad_enabled, is_inference_mode_enabled  # noqa: E402,F401
from ._device import device  # noqa: E402
from ._dlpack import from_dlpack  # noqa: E402,F401
from ._higher_order_ops import cond  # noqa: E402,F401
from ._legacy_types import *  # noqa: E402,F401,F403
from ._op_overloads import ops  # noqa: E402,F401
from ._ops.api_s12 import *  # noqa: E402,F401,F403

# torch's top-level names beyond the op families: runtime classes and flags, ATen-named nn and
# math ops, the *_copy view ops (issue 16's drop-in running)
from ._ops.aten_misc import *  # noqa: E402,F401,F403
from ._ops.aten_nn import *  # noqa: E402,F401,F403
from ._ops.aten_rnn import *  # noqa: E402,F401,F403
from ._ops.attributes import *  # noqa: E402,F401,F403
from ._ops.complex import *  # noqa: E402,F401,F403

# The Python-level ops, by family (python/ember/_ops, as csrc/ember/ops): each lists its names.
from ._ops.creation import *  # noqa: E402,F401,F403
from ._ops.elementwise import *  # noqa: E402,F401,F403
from ._ops.extras import *  # noqa: E402,F401,F403
from ._ops.fake_quantize import *  # noqa: E402,F401,F403
from ._ops.foreach import *  # noqa: E402,F401,F403
from ._ops.index import *  # noqa: E402,F401,F403
from ._ops.inplace import *  # noqa: E402,F401,F403
from ._ops.linalg import *  # noqa: E402,F401,F403
from ._ops.nn import *  # noqa: E402,F401,F403
from ._ops.products import *  # noqa: E402,F401,F403
from ._ops.quantized import *  # noqa: E402,F401,F403
from ._ops.random import *  # noqa: E402,F401,F403
from ._ops.reduce import *  # noqa: E402,F401,F403
from ._ops.shape import *  # noqa: E402,F401,F403
from ._ops.sort import *  # noqa: E402,F401,F403
from ._ops.spectral import *  # noqa: E402,F401,F403
from ._ops.view_copy import *  # noqa: E402,F401,F403
from ._process import *  # noqa: E402,F401,F403
from ._runtime_names import *  # noqa: E402,F401,F403
from ._size_checks import _assert, _check, _check_is_size  # noqa: E402,F401
from ._type_info import finfo, iinfo  # noqa: E402,F401
from .autograd.grad_mode import enable_grad, inference_mode, no_grad, set_grad_enabled  # noqa: E402
from .func import vmap  # noqa: E402,F401
from .nested._tensor import jagged  # noqa: E402,F401

# torch's top-level names for these torch.nn.functional functions are the functions themselves.
from .nn.functional import (  # noqa: E402,F401
    adaptive_avg_pool1d,
    avg_pool1d,
    channel_shuffle,
    conv1d,
    conv2d,
    conv3d,
    conv_transpose1d,
    conv_transpose2d,
    conv_transpose3d,
    max_pool1d,
    max_pool1d_with_indices,
    max_pool2d,
    max_pool3d,
    pdist,
    pixel_shuffle,
    pixel_unshuffle,
    rms_norm,
    rrelu,
    rrelu_,
)
from .serialization import *  # noqa: E402,F401,F403
from .storage import TypedStorage, UntypedStorage, _legacy_storages  # noqa: E402,F401
from .utils.backend_registration import _register_device_module  # noqa: E402,F401

set_default_dtype = _C.set_default_dtype

from ._numpy_kwargs import accepting_numpy_names as _accepting_numpy_names  # noqa: E402

# Tensor's Python-level methods come from one table; the package's own Python functions that take
# dim/keepdim also take numpy's axis/keepdims.
from ._ops._tensor_methods import install as _install_tensor_methods  # noqa: E402
from ._ops.complex import guarded_functions as _complex_paths  # noqa: E402
from .version import __version__  # noqa: E402

_install_tensor_methods()
globals().update(_legacy_storages)  # torch.FloatStorage ... (ember/storage.py)
globals().update(_complex_paths(globals()))
sparse.install()  # sparse tensors' methods, then their paths through mm, add, ... (ember/sparse/)
globals().update(sparse.guarded_functions(globals()))
for _name, _value in list(globals().items()):
    if not _name.startswith("__"):
        globals()[_name] = _accepting_numpy_names(_value)
del _name, _value

# out= and torch's overload resolution in front of the ops that need them (ember/_argparse.py)
from ._argparse import OUT_OPS as _OUT_OPS  # noqa: E402
from ._argparse import SIGNATURES as _SIGNATURES  # noqa: E402
from ._argparse import guarded as _arg_guarded  # noqa: E402

globals().update(_arg_guarded(globals(), _OUT_OPS + list(_SIGNATURES)))
# vmap's tensors reach the batching rules through bare functions and methods too (Note [Foreign
# tensors], python/src/guard_object.h)
from ._ops.foreign_guards import install as _install_foreign_guards  # noqa: E402

_install_foreign_guards(_sys.modules[__name__], (linalg, special))


# Loaded on first use, as torch loads _inductor and onnx: importing the code generator costs
# ~0.15 s, the quantization, distributions and onnx packages ~0.35 s together.
_LAZY = frozenset({"_inductor", "ao", "distributions", "onnx", "quantization"})


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return importlib.import_module("." + name, __name__)
    raise AttributeError(f"module 'ember' has no attribute {name!r}")
