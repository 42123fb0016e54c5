"""Settings of the compiler backend (read when a graph is compiled, so tests may change them).

- `cache_dir`: where compiled kernels are kept; None means $EMBER_CACHE_DIR/inductor, else
  $XDG_CACHE_HOME/ember/inductor, else ~/.cache/ember/inductor.
- `cxx`: the C++ compiler; None means $EMBER_CXX, else $CXX, else the first of c++, g++, clang++
  on PATH. An empty string (or EMBER_CXX="") means "no compiler": graphs run through ember's
  eager kernels (with one warning), as on a machine without one.
- `cxxflags`: flags for the kernels (the include path of ember's vector math is added): those of
  ember's own vectorized kernels (contraction into FMA allowed, 512-bit vectors where the CPU has
  them, Note [ISA clones]), so that compiled and eager results agree closely.
- `debug`: keep the generated sources on the compiled callable (`fn.kernels`) and in the cache.
"""

from __future__ import annotations

import os

cache_dir: str | None = None
cxx: str | None = None
cxxflags: tuple = (
    "-O3",
    "-march=native",
    "-fopenmp-simd",
    "-fno-math-errno",
    "-fno-trapping-math",
    "-mprefer-vector-width=512",
    "-std=c++20",
    "-shared",
    "-fPIC",
)
debug: bool = False

# torch's inductor knobs that documented programs set (``options={...}`` or assignment here);
# accepted for compatibility: ember's code generator has no autotuning, CUDA graphs or freezing,
# so they change nothing.
max_autotune: bool = False
max_autotune_gemm: bool = False
max_autotune_pointwise: bool = False
epilogue_fusion: bool = True
coordinate_descent_tuning: bool = False
freezing: bool = False
fx_graph_cache: bool = True
shape_padding: bool = True


class triton:  # noqa: N801 (torch's namespace)
    cudagraphs: bool = False
    cudagraph_trees: bool = True


class cpp:  # noqa: N801 (torch's namespace)
    threads: int = -1
    simdlen: int | None = None


# More of torch's inductor option names that ``ember.compile(options=...)`` accepts (as the
# knobs above: they change nothing in ember's code generator); any other key raises as torch's
# does ("Unexpected optimization option ...").
torch_options: tuple = (
    "aggressive_fusion",
    "allow_buffer_reuse",
    "batch_fusion",
    "benchmark_kernel",
    "comprehensive_padding",
    "compile_threads",
    "conv_1x1_as_mm",
    "cpp_wrapper",
    "dce",
    "debug_fusion",
    "emulate_precision_casts",
    "fallback_random",
    "group_fusion",
    "implicit_fallbacks",
    "inplace_buffers",
    "keep_output_stride",
    "layout_optimization",
    "max_fusion_size",
    "memory_planning",
    "pattern_matcher",
    "permute_fusion",
    "reorder_for_compute_comm_overlap",
    "reorder_for_locality",
    "size_asserts",
    "split_reductions",
    "unroll_reductions_threshold",
    "use_fast_math",
    "triton.unique_kernel_names",
    "triton.cudagraph_skip_dynamic_graphs",
    "cpp.enable_kernel_profile",
    "cpp.dynamic_threads",
    "cpp.weight_prepack",
    "trace.enabled",
    "trace.debug_dir",
    "trace.graph_diagram",
    "trace.output_code",
    "aot_inductor.output_path",
    "aot_inductor.package",
)


def known_options() -> list:
    """The option names ``ember.compile(options=...)`` accepts for the inductor backend."""
    names = [k for k, v in globals().items() if _is_option(k, v)]
    for section in (triton, cpp):
        names += [f"{section.__name__}.{k}" for k in vars(section) if not k.startswith("_")]
    return names + [k for k in torch_options if k not in names]


def _is_option(name, value):
    if name.startswith("_") or name in ("annotations", "os", "torch_options"):
        return False
    return not callable(value) and not isinstance(value, type)


def resolved_cache_dir() -> str:
    if cache_dir:
        return cache_dir
    if os.environ.get("EMBER_CACHE_DIR"):
        return os.path.join(os.environ["EMBER_CACHE_DIR"], "inductor")
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "ember", "inductor")
