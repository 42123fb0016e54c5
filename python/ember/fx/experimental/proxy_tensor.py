"""``make_fx``: a graph of the ember calls a function makes, recorded by running it on example
inputs (torch.fx.experimental.proxy_tensor's entry point).

ember records with ember.compile's capture mode (Note [Capture] in ember/_dynamo/capture.py):
the function runs for real and each public ember call becomes a node. torch's make_fx records
ATen overloads (``aten.sin.default``); ember's graph names the public functions and Tensor
methods instead, which compute the same values. Tensors the function reads that are not
inputs (closures, globals) become ``_tensor_constant<i>`` attributes of the GraphModule.
Python control flow is run, not recorded: a data-dependent branch or ``.item()`` raises."""

import functools

from ... import _C

__all__ = ["make_fx"]


def _flatten(value, out):
    if isinstance(value, _C.Tensor):
        out.append(value)
    elif isinstance(value, (tuple, list)):
        for v in value:
            _flatten(v, out)
    elif isinstance(value, dict):
        for v in value.values():
            _flatten(v, out)
    return out


def _arg_names(f, args, count):
    """torch's placeholder names: ``<param>_1`` where each argument is one tensor."""
    import inspect

    try:
        params = list(inspect.signature(f).parameters.values())
    except (TypeError, ValueError):
        params = []
    simple = len(params) >= len(args) and all(isinstance(a, _C.Tensor) for a in args)
    if simple and all(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params[:count]
    ):
        return [f"{p.name}_1" for p in params[:count]]
    return [f"arg{i}_1" for i in range(count)]


def make_fx(
    f,
    decomposition_table=None,
    tracing_mode="real",
    _allow_non_fake_inputs=False,
    *,
    pre_dispatch=False,
    record_module_stack=False,
    _allow_fake_constant=False,
    _error_on_data_dependent_ops=True,
    record_stack_traces=False,
):
    """make_fx(f, decomposition_table=None, tracing_mode='real', ...) -> callable

    ``make_fx(f)(*args)`` runs ``f(*args)`` once and returns a GraphModule whose forward takes
    the tensors of ``args`` (flattened, in order) and computes what ``f`` returned (same
    structure of tensors). ``tracing_mode`` may be "real", "fake" or "symbolic" (ember records
    with real values in every case; the graph keeps the example shapes).
    """
    if tracing_mode not in ("real", "fake", "symbolic"):
        raise AssertionError(f"Unexpected tracing type: {tracing_mode}")

    @functools.wraps(f)
    def wrapped(*args):
        from ..._dynamo.capture import Capture, GraphBreak
        from ..._dynamo.eval_frame import _flatten_output, _rebuild
        from ..graph_module import GraphModule

        constants = {}

        def find_named(t):
            name = f"_tensor_constant{len(constants)}"
            constants[name] = t
            return name

        cap = Capture({}, find_named, False, True)
        inputs = _flatten(args, [])
        names = _arg_names(f, args, len(inputs))
        for name, t in zip(names, inputs):
            cap.add_input(name, t)
        with cap:
            result = f(*args)
        cap.finished = True
        out_nodes = []
        try:
            spec = _flatten_output(result, cap, out_nodes)
        except GraphBreak as e:
            raise RuntimeError(f"make_fx: {e}") from None
        cap.graph.output(_rebuild(spec, out_nodes) if spec is not None else tuple(out_nodes))
        cap.drop_unused_sym_nodes()
        gm = GraphModule(dict(cap.attrs), cap.graph)
        return gm

    return wrapped
