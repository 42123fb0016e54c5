"""GraphModule: an nn.Module whose forward is Python code generated from a Graph."""

import copy
import itertools
import linecache

from ..nn.modules.module import Module
from .graph import Graph

__all__ = ["GraphModule"]

_counter = itertools.count()


def _exec_forward(src, globals_):
    # The source is registered with linecache so tracebacks and inspect show the generated lines.
    key = f"<eval_with_key>.{next(_counter)}"
    linecache.cache[key] = (len(src), None, src.splitlines(True), key)
    scope = dict(globals_)
    exec(compile(src, key, "exec"), scope)  # noqa: S102 (code generated from the graph)
    return scope["forward"]


def _copy_attr(from_module, to_module, target):
    """Makes ``to_module.<target>`` the object ``from_module.<target>``, creating empty modules
    for the missing levels; tensors that are not parameters become buffers."""
    *prefix, field = target.split(".")
    for item in prefix:
        f = getattr(from_module, item)
        t = getattr(to_module, item, None)
        if f is t:  # a parent was copied already
            return
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        from_module, to_module = f, t
    orig = getattr(from_module, field)
    from .. import _C
    from ..nn.parameter import Parameter

    if isinstance(orig, _C.Tensor) and not isinstance(orig, Parameter):
        persistent = field not in getattr(from_module, "_non_persistent_buffers_set", ())
        to_module.register_buffer(field, orig, persistent=persistent)
    else:
        setattr(to_module, field, orig)


def _assign_attr(obj, to_module, target):
    *prefix, field = target.split(".")
    for item in prefix:
        t = getattr(to_module, item, None)
        if t is None:
            t = Module()
            setattr(to_module, item, t)
        to_module = t
    from .. import _C
    from ..nn.parameter import Parameter

    if isinstance(obj, _C.Tensor) and not isinstance(obj, Parameter):
        to_module.register_buffer(field, obj)
    else:
        setattr(to_module, field, obj)


class GraphModule(Module):
    """GraphModule(root, graph, class_name='GraphModule')

    An nn.Module built from a Graph: it takes from ``root`` (a Module, or a dict from qualified
    names to objects) the submodules, parameters and buffers the graph's get_attr and call_module
    nodes name, and its ``forward`` is the Python code generated from ``graph`` (``.code``).
    """

    def __new__(cls, *args, **kwargs):
        # Each instance gets its own class, so that forward can be set on the class (special
        # method lookups and copy.copy then see it) without affecting other GraphModules.
        for t in cls.__mro__:
            if t.__dict__.get("_is_instance_class") is not True:
                cls = t
                break

        class GraphModuleImpl(cls):
            _is_instance_class = True

        GraphModuleImpl.__name__ = GraphModuleImpl.__qualname__ = cls.__name__
        return super().__new__(GraphModuleImpl)

    def __init__(self, root, graph, class_name="GraphModule"):
        super().__init__()
        type(self).__name__ = type(self).__qualname__ = class_name
        if isinstance(root, Module):
            self.training = root.training
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    _copy_attr(root, self, node.target)
        elif isinstance(root, dict):
            for node in graph.nodes:
                if node.op in ("get_attr", "call_module"):
                    if node.target not in root:
                        raise RuntimeError(
                            f"Node {node} referenced target {node.target} but that target was "
                            "not provided in ``root``!"
                        )
                    _assign_attr(root[node.target], self, node.target)
        else:
            raise RuntimeError(f"Unsupported type {root} passed for root!")
        self.meta = {}
        self.graph = graph

    # ---- the graph and its code ----------------------------------------------------------------

    @property
    def graph(self):
        """graph -> Graph: the graph this module runs; assigning one regenerates the code."""
        return self._graph

    @graph.setter
    def graph(self, g):
        if not isinstance(g, Graph):
            raise AssertionError(f"Expected a Graph instance, but got {type(g)}")
        self.__dict__["_graph"] = g
        g.owning_module = self
        self.recompile()

    @property
    def code(self):
        """code -> str: the Python source of the generated forward."""
        if "_code" not in self.__dict__:
            raise RuntimeError("Code has not been generated! Please report a bug to PyTorch")
        return self._code

    def recompile(self):
        """recompile() -> PythonCode

        Regenerates forward from ``self.graph`` (call it after editing the graph in place).
        """
        python_code = self._graph.python_code(root_module="self")
        self.__dict__["_code"] = python_code.src
        self.__dict__["_lineno_map"] = python_code._lineno_map
        type(self).forward = _exec_forward(python_code.src, python_code.globals)
        return python_code

    def print_readable(self, print_output=True, include_stride=False, include_device=False,
                       colored=False):  # fmt: skip
        """print_readable(print_output=True, include_stride=False, include_device=False, colored=False) -> str

        The module as a class definition, with dtype/shape annotations where nodes know them,
        including GraphModule submodules; printed unless ``print_output`` is False.
        """  # noqa: E501
        out = self._readable(type(self).__name__)
        if print_output:
            print(out)
        return out

    def _readable(self, name):
        verbose = self._graph.python_code(root_module="self", verbose=True).src
        body = verbose.strip("\n").rstrip()
        from ._codegen import shown_name

        lines = [f"class {name}({shown_name('ember.nn.Module')}):"]
        lines += ["    " + ln if ln else "" for ln in body.splitlines()]
        for sub_name, sub in self.named_children():  # after forward, as torch prints them
            if isinstance(sub, GraphModule):
                lines += [""] + ["    " + ln for ln in sub._readable(sub_name).splitlines()]
        return "\n".join(lines) + "\n"

    def to_folder(self, folder, module_name="FxModule"):
        """to_folder(folder, module_name='FxModule')

        Writes the module to ``folder`` as a Python package: ``module.py`` defines class
        ``module_name`` (its ``__init__`` rebuilds the submodules and loads the weights saved
        beside it, its ``forward`` is ``self.code``), so ``from folder import module_name``
        gives an equivalent module without fx.
        """
        from ._to_folder import write_folder

        write_folder(self, str(folder), module_name)

    def __str__(self):
        reminder = "# To see more debug info, please use `graph_module.print_readable()`"
        return "\n".join([super().__str__(), self._code, reminder])

    # ---- submodules ----------------------------------------------------------------------------

    def add_submodule(self, target, m):
        """add_submodule(target, m) -> bool

        Installs module ``m`` at dotted path ``target``, creating empty parent modules.
        """
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            sub = getattr(mod, item, None)
            if sub is None:
                sub = Module()
                mod.add_module(item, sub)
            if not isinstance(sub, Module):
                return False
            mod = sub
        mod.add_module(field, m)
        return True

    def delete_submodule(self, target):
        """delete_submodule(target) -> bool

        Removes the submodule at ``target``; False if there is none.
        """
        *prefix, field = target.split(".")
        mod = self
        for item in prefix:
            if not hasattr(mod, item):
                return False
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                return False
        if not isinstance(getattr(mod, field, None), Module):
            return False
        delattr(mod, field)
        return True

    def delete_all_unused_submodules(self):
        """delete_all_unused_submodules() -> None

        Removes the submodules that no call_module or get_attr node of the graph reaches.
        """
        used = set()
        for node in self._graph.nodes:
            if node.op in ("call_module", "get_attr"):
                parts = node.target.split(".")
                for i in range(1, len(parts) + 1):
                    used.add(".".join(parts[:i]))
                if node.op == "call_module":
                    sub = self.get_submodule(node.target)
                    for name, _ in sub.named_modules():
                        if name:
                            used.add(node.target + "." + name)
        # every path: a module also held under a used path (a relu fused into conv) still
        # goes from its unused one
        to_delete = [
            name
            for name, _ in self.named_modules(remove_duplicate=False)
            if name and name not in used
        ]
        for name in to_delete:
            self.delete_submodule(name)

    # ---- copying and pickling ------------------------------------------------------------------

    def __reduce__(self):
        d = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code", "_lineno_map")}
        return (_rebuild_graph_module, (d, self._graph))

    def __deepcopy__(self, memo):
        res = GraphModule.__new__(type(self))
        memo[id(self)] = res
        d = {k: v for k, v in self.__dict__.items() if k not in ("_graph", "_code", "_lineno_map")}
        res.__dict__.update(copy.deepcopy(d, memo))
        res.graph = copy.deepcopy(self._graph)
        return res

    def __copy__(self):
        res = GraphModule(self, self._graph)
        res.meta = getattr(self, "meta", {})
        return res


def _rebuild_graph_module(state, graph, class_name="GraphModule"):
    # Copies are named GraphModule whatever the original's class_name, as torch's are;
    # class_name is kept for pickles written before.
    gm = GraphModule.__new__(GraphModule)
    gm.__dict__.update(state)
    type(gm).__name__ = type(gm).__qualname__ = class_name
    gm.graph = graph
    return gm
