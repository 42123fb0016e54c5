"""Backends: what a captured graph is handed to, with torch's contract
``backend(gm: ember.fx.GraphModule, example_inputs: list[Tensor]) -> callable(*tensors)``.

- ``eager``: the GraphModule itself (its generated forward calls ember's ops).
- ``aot_eager``: AOT autograd (``ember._functorch``): when a call needs gradients, the joint
  forward+backward graph is built from the derivative table and partitioned, and both halves
  run node by node by an interpreter over the same ops; calls without grad (and graphs with an
  op the table lacks, whose backward is then ember's own autograd) run the captured graph
  through the interpreter.
- ``inductor``: ``ember._inductor.compile_fx(gm, example_inputs)``, imported on first use; under
  autograd, AOT autograd with ``compile_fx`` for the forward and the backward graph.
"""

from ..exc import InvalidBackend
from . import common  # noqa: F401  (torch._dynamo.backends.common)

__all__ = ["register_backend", "lookup_backend", "list_backends"]

_BACKENDS = {}
_TAGS = {}


def register_backend(compiler_fn=None, name=None, tags=()):
    """register_backend(compiler_fn=None, name=None, tags=())

    Registers ``compiler_fn`` under ``name`` (its ``__name__`` by default); usable as a
    decorator."""
    if compiler_fn is None:
        return lambda fn: register_backend(fn, name=name, tags=tags)
    _BACKENDS[name or compiler_fn.__name__] = compiler_fn
    _TAGS[name or compiler_fn.__name__] = tuple(tags)
    return compiler_fn


def lookup_backend(compiler_fn):
    """lookup_backend(compiler_fn) -> callable

    The backend callable for a name (raising InvalidBackend for an unknown one) or a callable."""
    if isinstance(compiler_fn, str):
        if compiler_fn not in _BACKENDS:
            raise InvalidBackend(compiler_fn)
        return _BACKENDS[compiler_fn]
    if not callable(compiler_fn):
        # torch takes any other object and fails when the first graph is compiled (as a
        # BackendCompilerFailed whose inner error is the call's TypeError)
        return _Uncallable(compiler_fn)
    return compiler_fn


class _Uncallable:
    def __init__(self, obj):
        self.obj = obj
        self.__name__ = str(obj)

    def __call__(self, gm, example_inputs):
        return self.obj(gm, example_inputs)


def list_backends(exclude_tags=("debug", "experimental")):
    """list_backends(exclude_tags=('debug', 'experimental')) -> list[str]

    The names of the registered backends, but those tagged with one of ``exclude_tags`` (as
    torch's, ``eager`` and ``aot_eager`` are tagged "debug")."""
    drop = set(exclude_tags or ())
    return sorted(k for k in _BACKENDS if not drop.intersection(_TAGS.get(k, ())))


@register_backend(tags=("debug",))
def eager(gm, example_inputs, **kwargs):
    return gm.forward


def _interpret(gm):
    """Runs ``gm.graph`` node by node (an fx Interpreter over the GraphModule's attributes)."""
    from ...fx.graph import _get_attr
    from ...fx.node import map_arg

    nodes = list(gm.graph.nodes)
    # values no later node reads are dropped as soon as their last reader ran
    last = {}
    for i, node in enumerate(nodes):
        for a in node.all_input_nodes:
            last[a] = i
    drop = [[] for _ in nodes]
    for a, i in last.items():
        if nodes[i].op != "output":
            drop[i].append(a)

    def run(*inputs):
        env = {}
        it = iter(inputs)

        def load(a):
            return map_arg(a, env.__getitem__)

        for node, dead in zip(nodes, drop):
            op = node.op
            if op == "placeholder":
                env[node] = next(it)
            elif op == "get_attr":
                env[node] = _get_attr(gm, node.target)
            elif op == "call_function":
                env[node] = node.target(*load(node.args), **load(node.kwargs))
            elif op == "call_method":
                self_, *rest = load(node.args)
                env[node] = getattr(self_, node.target)(*rest, **load(node.kwargs))
            elif op == "output":
                return load(node.args[0])
            else:  # call_module does not occur in captured graphs, but is cheap to support
                env[node] = _get_attr(gm, node.target)(*load(node.args), **load(node.kwargs))
            for a in dead:
                del env[a]
        return None

    return run


def _interpreter(gm, example_inputs):
    return _interpret(gm)


@register_backend(tags=("debug",))
def aot_eager(gm, example_inputs, **kwargs):
    from ..._functorch import aot_module_simplified

    return aot_module_simplified(gm, example_inputs, fw_compiler=_interpreter)


@register_backend
def inductor(gm, example_inputs, **kwargs):
    from ... import _inductor

    return _inductor.compile_fx_aot(gm, example_inputs)


@register_backend
def cudagraphs(gm, example_inputs, **kwargs):
    """torch's CUDA-graph backend: ember runs on the CPU, where it records no CUDA graph, so the
    graph runs as under ``aot_eager`` (torch's does the same for CPU tensors)."""
    return aot_eager(gm, example_inputs)


def _missing(name, package):
    def backend(gm, example_inputs, **kwargs):
        raise ImportError(f"{name} backend: expected the {package} package; it is not installed")

    backend.__name__ = name
    return register_backend(backend, name=name)


# registered as torch's are (listed, accepted by compile), failing at the first graph as torch's
# do without their packages
_missing("tvm", "apache-tvm")
_missing("openxla", "torch_xla")
