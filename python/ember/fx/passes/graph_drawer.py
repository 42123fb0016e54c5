"""``FxGraphDrawer``: an fx graph as a Graphviz (pydot) graph, torch.fx.passes.graph_drawer's
class.

As torch's, it needs the optional ``pydot`` package: without it, constructing one raises the
RuntimeError torch raises; with it, ``get_dot_graph()`` returns a ``pydot.Dot`` with one record
node per fx node (its name, op code, target, literal arguments, user count and, when a
ShapeProp pass left one, the tensor's dtype and shape) and an edge per use; the parameters and
buffers of called submodules are drawn as nodes of their own unless
``ignore_parameters_and_buffers``. ``dot.to_string()`` is the dot source and ``dot.create_svg()``
renders it where Graphviz is installed."""

__all__ = ["FxGraphDrawer", "HAS_PYDOT"]

try:
    import pydot

    HAS_PYDOT = True
except ImportError:  # optional, as in torch
    pydot = None
    HAS_PYDOT = False

_COLORS = {
    "placeholder": "AliceBlue",
    "call_module": "LemonChiffon1",
    "get_param": "Salmon",
    "get_attr": "Gainsboro",
    "output": "PowderBlue",
    "call_method": "PeachPuff1",
    "call_function": "Wheat1",
}


def _escape(text):
    for ch in "{}<>|":
        text = text.replace(ch, "\\" + ch)
    return text


def _target_name(target):
    if isinstance(target, str):
        return target
    mod = getattr(target, "__module__", None) or ""
    name = getattr(target, "__qualname__", None) or getattr(target, "__name__", repr(target))
    return f"{mod}.{name}" if mod else name


def _tensor_label(value):
    import ember

    if isinstance(value, ember.Tensor):
        return f"{str(value.dtype).split('.')[-1]}{list(value.shape)}"
    return None


class FxGraphDrawer:
    """FxGraphDrawer(graph_module, name, ignore_getattr=False,
    ignore_parameters_and_buffers=False, skip_node_names_in_args=True, parse_stack_trace=False,
    dot_graph_shape=None, normalize_args=False)

    Draws ``graph_module``'s graph (and the graphs of GraphModule submodules it calls) as
    pydot graphs, named ``name`` (submodules ``name_<target>``)."""

    def __init__(self, graph_module, name, ignore_getattr=False,
                 ignore_parameters_and_buffers=False, skip_node_names_in_args=True,
                 parse_stack_trace=False, dot_graph_shape=None, normalize_args=False):  # fmt: skip
        if not HAS_PYDOT:
            raise RuntimeError(
                "FXGraphDrawer requires the pydot package to be installed. Please install pydot "
                "through your favorite Python package manager."
            )
        from ..graph_module import GraphModule

        self._name = name
        self._shape = dot_graph_shape or "record"
        self._ignore_getattr = ignore_getattr
        self._ignore_state = ignore_parameters_and_buffers
        self._skip_names = skip_node_names_in_args
        self._dot_graphs = {name: self._to_dot(graph_module, name)}
        for node in graph_module.graph.nodes:
            if node.op != "call_module":
                continue
            sub = graph_module.get_submodule(node.target)
            if isinstance(sub, GraphModule):
                key = f"{name}_{node.target}"
                self._dot_graphs[key] = self._to_dot(sub, key)

    def get_dot_graph(self, submod_name=None):
        """get_dot_graph(submod_name=None) -> pydot.Dot

        The main graph, or the graph of the GraphModule submodule ``submod_name``."""
        if submod_name is None:
            return self.get_main_dot_graph()
        return self.get_submod_dot_graph(submod_name)

    def get_main_dot_graph(self):
        """get_main_dot_graph() -> pydot.Dot"""
        return self._dot_graphs[self._name]

    def get_submod_dot_graph(self, submod_name):
        """get_submod_dot_graph(submod_name) -> pydot.Dot"""
        return self._dot_graphs[f"{self._name}_{submod_name}"]

    def get_all_dot_graphs(self):
        """get_all_dot_graphs() -> Dict[str, pydot.Dot]"""
        return self._dot_graphs

    # ---- building ----------------------------------------------------------------------------

    def _label(self, gm, node):
        parts = [f"name=%{node.name}", f"op_code={node.op}"]
        if node.op == "call_module":
            leaf = gm.get_submodule(node.target)
            parts.append(f"{type(leaf).__module__}.{type(leaf).__name__}")
            extra = leaf.extra_repr() if hasattr(leaf, "extra_repr") else ""
            if extra:
                parts.append(extra.replace(", ", "\\n"))
        else:
            parts.append(f"target={_target_name(node.target)}")
            literal = [a for a in node.args if not hasattr(a, "op")] if self._skip_names else []
            shown = literal if self._skip_names else list(node.args)
            if shown:
                parts.append(f"args={tuple(shown)}")
            if node.kwargs:
                parts.append(f"kwargs={dict(node.kwargs)}")
        parts.append(f"num_users={len(node.users)}")
        meta = node.meta.get("tensor_meta")
        if meta is not None and hasattr(meta, "shape"):
            parts.append(f"{str(meta.dtype).split('.')[-1]}{list(meta.shape)}")
        return "{" + "|".join(_escape(p) + "\\n" for p in parts) + "}"

    def _to_dot(self, gm, name):
        dot = pydot.Dot(name, rankdir="TB")
        for node in gm.graph.nodes:
            if self._ignore_getattr and node.op == "get_attr":
                continue
            dot.add_node(
                pydot.Node(
                    node.name,
                    label=self._label(gm, node),
                    shape=self._shape,
                    fillcolor=_COLORS.get(node.op, "LightGrey"),
                    style='"filled,rounded"',
                    fontcolor="#000000",
                )
            )
            if node.op == "call_module" and not self._ignore_state:
                leaf = gm.get_submodule(node.target)
                for pname, value in list(leaf.named_parameters(recurse=False)) + list(
                    leaf.named_buffers(recurse=False)
                ):
                    qual = f"{node.target}.{pname}"
                    meta = _tensor_label(value) or ""
                    dot.add_node(
                        pydot.Node(
                            f'"{qual}"',
                            label="{"
                            + _escape(qual)
                            + "|"
                            + _escape(f"op_code=get_parameter{meta}")
                            + "\\n}",
                            shape=self._shape,
                            fillcolor=_COLORS["get_param"],
                            style='"filled,rounded"',
                            fontcolor="#000000",
                        )
                    )
                    dot.add_edge(pydot.Edge(f'"{qual}"', node.name))
        for node in gm.graph.nodes:
            if self._ignore_getattr and node.op == "get_attr":
                continue
            for user in node.users:
                if self._ignore_getattr and user.op == "get_attr":
                    continue
                dot.add_edge(pydot.Edge(node.name, user.name))
        return dot
