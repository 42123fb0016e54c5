"""``aot_autograd(**kwargs)``: a backend built from forward/backward compilers, as the custom
backends page of torch's documentation builds one (``torch._dynamo.backends.common``)."""

__all__ = ["aot_autograd", "AotAutograd"]


class AotAutograd:
    """AotAutograd(**kwargs)

    A backend ``(gm, example_inputs) -> callable`` that runs AOT autograd over the captured
    graph with the compilers given: ``fw_compiler`` (required), ``bw_compiler`` (default: the
    forward's), ``inference_compiler``, ``partition_fn``, ``decompositions`` (accepted; ember's
    joint graph is built from its own derivative table). Each compiler is called as
    ``compiler(gm, example_inputs)`` and may return a plain or a boxed function
    (``make_boxed_func``)."""

    def __init__(self, **kwargs):
        if "fw_compiler" not in kwargs:
            raise TypeError("aot_autograd: expected a fw_compiler")
        self.kwargs = kwargs

    def __call__(self, gm, example_inputs, **kwargs):
        from ..._functorch import aot_module_simplified
        from ..._functorch.partitioners import min_cut_rematerialization_partition

        kw = self.kwargs
        return aot_module_simplified(
            gm,
            example_inputs,
            fw_compiler=kw["fw_compiler"],
            bw_compiler=kw.get("bw_compiler"),
            partition_fn=kw.get("partition_fn") or min_cut_rematerialization_partition,
            decompositions=kw.get("decompositions"),
            inference_compiler=kw.get("inference_compiler"),
        )


def aot_autograd(**kwargs):
    """aot_autograd(**kwargs) -> AotAutograd

    A backend for ``ember.compile(model, backend=aot_autograd(fw_compiler=...))``."""
    return AotAutograd(**kwargs)
