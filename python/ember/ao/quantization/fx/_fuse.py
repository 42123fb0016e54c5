"""FX graph mode quantization: tracing (the quantization tracer keeps fused modules and the
configured non-traceable modules as leaves) and fusion by matching conv-bn-relu / conv-relu /
linear-relu / linear-bn / bn-relu chains whose intermediate values are used once."""

from .... import fx, nn
from ...nn import intrinsic as nni
from ..fuser_method_mappings import get_fuser_method
from ._patterns import _BN_FOR_CONV, _CONV_TYPES, _fuses, _module_of, _set_module, _sole_user


def _chain(node, modules):
    """The fusable chain of nodes starting at node, longest first, or None."""
    first = _module_of(node, modules)
    nxt = _sole_user(node)
    if first is None or nxt is None:
        return None
    second = _module_of(nxt, modules)
    if type(first) in _CONV_TYPES:
        if type(second) is _BN_FOR_CONV[type(first)]:
            after = _sole_user(nxt)
            if after is not None and _fuses(after, modules):
                return [node, nxt, after]
            return [node, nxt]
        if _fuses(nxt, modules):
            return [node, nxt]
    elif type(first) is nn.Linear:
        if type(second) is nn.BatchNorm1d:
            return [node, nxt]
        if _fuses(nxt, modules):
            return [node, nxt]
    elif type(first) in (nn.BatchNorm2d, nn.BatchNorm3d) and _fuses(nxt, modules):
        return [node, nxt]
    return None


def _fuse_graph(gm, is_qat, extra_fusers=None):
    modules = dict(gm.named_modules())
    for node in list(gm.graph.nodes):
        if node.graph is None or node.op != "call_module":
            continue
        chain = _chain(node, modules)
        if chain is None:
            continue
        mods = []
        for n in chain:
            m = _module_of(n, modules)
            if m is None:  # functional or method relu
                m = nn.ReLU()
                m.training = mods[0].training
            mods.append(m)
        fuser = get_fuser_method(tuple(type(m) for m in mods), extra_fusers)
        fused = fuser(is_qat, *mods)
        _set_module(gm, node.target, fused)
        modules[node.target] = fused
        chain[-1].replace_all_uses_with(node)
        for n in reversed(chain[1:]):
            gm.graph.erase_node(n)
    gm.graph.lint()
    gm.recompile()
    return gm


def _trace(model, prepare_custom_config):
    cfg = prepare_custom_config or {}
    if not isinstance(cfg, dict):
        cfg = cfg.to_dict() if hasattr(cfg, "to_dict") else {}
    leaf_names = set(cfg.get("non_traceable_module_name", []))
    leaf_classes = tuple(cfg.get("non_traceable_module_class", []))

    class _Tracer(fx.Tracer):
        def is_leaf_module(self, m, qualname):
            if qualname in leaf_names or (leaf_classes and isinstance(m, leaf_classes)):
                return True
            if isinstance(m, nni._FusedModule):
                return True
            return super().is_leaf_module(m, qualname)

    tracer = _Tracer()
    graph = tracer.trace(model)
    return fx.GraphModule(model, graph)  # torch's class name: GraphModule, whatever the model
