"""ember.utils.checkpoint: activation checkpointing trades memory for recomputation; ember keeps
the activations, so the result and gradients are the same and only the memory saving is lost."""

__all__ = ["checkpoint", "checkpoint_sequential"]


def checkpoint(
    function,
    *args,
    use_reentrant=None,
    context_fn=None,
    determinism_check="default",
    debug=False,
    preserve_rng_state=True,
    **kwargs,
):
    return function(*args, **kwargs)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    if hasattr(functions, "children") and not isinstance(functions, (list, tuple)):
        functions = list(functions.children())
    for fn in functions:
        input = fn(input)
    return input
