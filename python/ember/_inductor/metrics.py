"""Counters of what the compiler did, for tests and debugging (`reset()` zeroes them).

- `cpp_compiles`: times the C++ compiler ran; `cache_hits`: kernels found in the disk cache;
- `graphs_compiled`, `kernels_generated`, `fused_nodes` (graph nodes folded into a generated
  kernel), `extern_calls` (nodes run as eager calls), `buffers_reused` (memory planning);
- `epilogues_fused`: pointwise kernels folded into the softmax/layer_norm kernel before them;
- `backward_kernels`: generated backward kernels of fused regions (the others recompute eagerly);
- `eager_fallbacks`: graphs run through ember's eager kernels for want of a compiler.
"""

cpp_compiles = 0
cache_hits = 0
graphs_compiled = 0
kernels_generated = 0
fused_nodes = 0
extern_calls = 0
buffers_reused = 0
backward_kernels = 0
epilogues_fused = 0
eager_fallbacks = 0


def reset():
    """reset() -> None

    Sets every counter to zero."""
    g = globals()
    for k in list(g):
        if isinstance(g[k], int) and not k.startswith("_"):
            g[k] = 0


def add(name, n=1):
    """add(name, n=1) -> None

    Adds n to the counter called name."""
    g = globals()
    g[name] += n
