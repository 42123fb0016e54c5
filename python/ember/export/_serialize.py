"""ember.export.save / load: an ExportedProgram as one data-only file (the format is described in
ember/export/__init__.py and csrc/ember/export/program.h)."""

import os
import sys
import tempfile

from .. import fx
from ..nn import Module
from ..serialization import _save_ember_format
from . import _aten_names, _ops, _ops_flow, _to_ops
from ._cond import branch_program
from .exported_program import ExportedProgram, _check_spec, tree_flatten, tree_unflatten
from .graph_signature import (
    ExportGraphSignature,
    InputKind,
    InputSpec,
    OutputKind,
    OutputSpec,
    TensorArgument,
)

__all__ = ["save", "load", "FORMAT", "VERSION"]

FORMAT = "ember.export"
VERSION = 1
VERSION_MUTATIONS = 2  # a file with buffer updates (a version-1 reader would skip them)

_KIND_NAMES = {
    InputKind.PARAMETER: "parameter",
    InputKind.BUFFER: "buffer",
    InputKind.CONSTANT_TENSOR: "constant",
    InputKind.USER_INPUT: "user_input",
}
_KINDS = {v: k for k, v in _KIND_NAMES.items()}


def _ember():
    return sys.modules["ember"]


def _encode(a, where):
    ember = _ember()
    if isinstance(a, fx.Node):
        return {"ref": a.name}
    if a is None or isinstance(a, (bool, int, float, str)):
        return a
    if isinstance(a, (list, tuple)):
        return [_encode(x, where) for x in a]
    if isinstance(a, slice):
        return {"slice": [_encode(a.start, where), _encode(a.stop, where), _encode(a.step, where)]}
    if a is Ellipsis:
        return {"ellipsis": None}
    if isinstance(a, ember.dtype):
        return {"dtype": str(a).split(".")[-1]}
    raise RuntimeError(
        f"ember.export.save: {where} has an argument of type {type(a).__name__}, which the file "
        "format cannot hold"
    )


def _dtype_name(t):
    return str(t.dtype).split(".")[-1]


def _program_dict(ep):
    ep = ep.run_decompositions()
    runtime = set(_ember()._C._export_runtime_ops())
    inputs = []
    state = {}
    outer_names = {}  # state name -> its placeholder (cond branches read them as operands)
    for spec, node in zip(ep.graph_signature.input_specs, _placeholders(ep.graph)):
        kind = _KIND_NAMES.get(spec.kind)
        if kind is None:
            raise RuntimeError(
                f"ember.export.save: inputs of kind {spec.kind.name} are unsupported"
            )
        if spec.kind == InputKind.USER_INPUT:
            val = node.meta.get("val")
            shape = ep.input_shapes.get(node.name)
            dtype = node.meta.get("dtype") or (val is not None and _dtype_name(val))
            if shape is None and val is not None:
                shape = list(val.shape)
            if shape is None or not dtype:
                raise RuntimeError(
                    f"ember.export.save: the dtype and shape of input '{node.name}' are unknown"
                )
            inputs.append(
                {"name": node.name, "kind": kind, "target": None, "dtype": dtype, "shape": shape}
            )
            continue
        value = ep.state_dict.get(spec.target)
        if value is None:
            value = ep.constants[spec.target]
        value = value.detach()
        state[spec.target] = value
        outer_names[spec.target] = node.name
        inputs.append(
            {
                "name": node.name,
                "kind": kind,
                "target": spec.target,
                "dtype": _dtype_name(value),
                "shape": list(value.shape),
            }
        )
    enc = _Encoder(ep, runtime, state, outer_names)
    nodes, outputs = enc.graph(ep.graph)
    structure = ep._output_structure
    if structure is None and len(enc.expanded) == 1 and len(outputs) == enc.expanded[0][1]:
        kind, n = enc.expanded[0]  # the program returns a cond's tuple as it is
        structure = [kind, [None] * n]
    # constants only a cond branch reads: inputs of the program, before the user inputs
    first_user = next((k for k, i in enumerate(inputs) if i["kind"] == "user_input"), len(inputs))
    inputs[first_user:first_user] = enc.new_inputs
    root = {
        "format": FORMAT,
        "version": VERSION,
        "inputs": inputs,
        "state": state,
        "nodes": nodes,
        "outputs": outputs,
        "output_structure": structure,
        "dims": {
            k: [lo, -1 if hi >= (1 << 63) - 1 else hi]
            for k, (lo, hi) in ep._range_constraints.items()
        },
    }
    specs = ep.graph_signature.output_specs
    mutated = [s for s in specs if s.kind == OutputKind.BUFFER_MUTATION]
    # a user input's new value is not kept: the runtime does not write into its inputs
    root["outputs"] = [
        o for s, o in zip(specs, outputs) if s.kind != OutputKind.USER_INPUT_MUTATION
    ]
    if mutated:
        # buffers_to_mutate: the graph returns their new values first; the file keeps the user
        # outputs in "outputs" and the updates apart (the runtime writes them back after a run)
        root["outputs"] = root["outputs"][len(mutated) :]
        root["mutations"] = [{"target": s.target, "value": out} for s, out in zip(mutated, outputs)]
        root["version"] = VERSION_MUTATIONS
    return root


class _Encoder:
    """Encodes graphs node by node; cond branches become nested graphs (see _cond.py)."""

    def __init__(self, ep, runtime, state, outer_names):
        self.ep, self.runtime, self.state, self.outer_names = ep, runtime, state, outer_names
        self.new_inputs = []
        self.expanded = []  # (kind, length) of tuple-valued outputs encoded as getitems

    def graph(self, graph, modules=None):
        nodes, outputs = [], None
        for node in graph.nodes:
            if node.op in ("placeholder", "get_attr"):
                continue  # get_attr: a loaded program's cond branch, encoded at the cond
            if node.op == "output":
                items, _ = tree_flatten(node.args[0])
                outputs = []
                self.expanded = []  # this graph's (the program's is encoded last)
                for x in items:
                    val = x.meta.get("val") if isinstance(x, fx.Node) else None
                    if isinstance(val, (tuple, list)):  # a cond returning its tuple directly
                        for k in range(len(val)):
                            name = f"{x.name}__out{k}"
                            nodes.append(
                                {"name": name, "op": "getitem", "args": [{"ref": x.name}, k]}
                            )
                            outputs.append({"ref": name})
                        self.expanded.append(
                            ("list" if isinstance(val, list) else "tuple", len(val))
                        )
                        continue
                    outputs.append(_encode(x, "the output"))
                continue
            if node.op == "call_function" and _ops_flow.is_cond(node.target):
                nodes.append(self.cond(node, modules))
                continue
            if node.op == "call_function" and _to_ops.is_assert(node.target):
                continue  # the runtime checks the inputs' dtypes, fixing this one's (_to_ops.py)
            op = getattr(node.target, "_export_op", None) if node.op == "call_function" else None
            args = node.args
            if op is None and node.op == "call_function":  # an ATen overload (from_runtime's)
                mapped = _aten_names.to_runtime(node.target, node.args, dict(node.kwargs))
                if mapped is not None:
                    op, args = mapped
            if op is None or op not in self.runtime:
                name = node.meta.get("source_target") or _ops.target_name(node.target)
                why = node.meta.get("export_unsupported")
                detail = f" ({why})" if why else ""
                raise RuntimeError(
                    f"ember.export.save: node '{node.name}' calls {name}{detail}, which the C++ "
                    "runtime of exported programs does not run; its ops are "
                    "ember._C._export_runtime_ops()"
                )
            nodes.append(
                {
                    "name": node.name,
                    "op": op,
                    "args": [_encode(a, f"node '{node.name}'") for a in args],
                }
            )
        return nodes, outputs

    def cond(self, node, modules):
        where = f"node '{node.name}'"
        args = list(node.args) + [None] * (4 - len(node.args))
        if node.kwargs:
            names = ("pred", "true_fn", "false_fn", "operands")
            for k, name in enumerate(names):
                if name in node.kwargs:
                    args[k] = node.kwargs[name]
        pred, fns, operands = args[0], args[1:3], list(args[3] or ())
        single = len(args) > 4 and args[4] is not None and bool(args[4])
        if len(args) <= 4 or args[4] is None:
            val = node.meta.get("val")
            single = not isinstance(val, (tuple, list))
        branches = []
        for fn in fns:
            if isinstance(fn, fx.Node) and fn.op == "get_attr":
                fn = _attr(modules or self.ep.graph_module, fn.target)
            branches.append(branch_program(fn, operands, self.ep, self.outer_names, where))
        # the node's operands: its own, then every outer input a branch reads
        extra = []
        for b in branches:
            for outer in b.lifted.values():
                if outer not in extra:
                    extra.append(outer)
        for b_index, b in enumerate(branches):  # a branch's own constants: new program inputs
            for ph, value in b.constants.items():
                name = f"c_{node.name}_{b_index}_{ph}"
                target = f"_cond.{node.name}.{b_index}.{ph}"
                self.state[target] = value
                self.new_inputs.append(
                    {
                        "name": name,
                        "kind": "constant",
                        "target": target,
                        "dtype": _dtype_name(value),
                        "shape": list(value.shape),
                    }
                )
                b.lifted[ph] = name
                extra.append(name)
        graphs = []
        for b_index, b in enumerate(branches):
            by_outer = {outer: ph for ph, outer in b.lifted.items()}
            names = list(b.user) + [by_outer.get(o, f"_unused_{k}") for k, o in enumerate(extra)]
            shapes = list(b.shapes) + [None] * len(extra)
            nodes, outputs = self.graph(b.graph, b.gm)
            if single and len(outputs) != 1:
                raise RuntimeError(f"ember.export.save: {where}: a cond branch returns no tensor")
            graphs.append(
                {
                    "graph": {
                        "inputs": names,
                        "input_shapes": shapes,
                        "nodes": nodes,
                        "outputs": outputs,
                    }
                }
            )
        refs = [_encode(a, where) for a in operands] + [{"ref": n} for n in extra]
        return {
            "name": node.name,
            "op": "cond",
            "args": [_encode(pred, where), graphs[0], graphs[1], refs, single],
        }


def _attr(module, target):
    for part in target.split("."):
        module = getattr(module, part)
    return module


def _placeholders(graph):
    return [n for n in graph.nodes if n.op == "placeholder"]


def save(
    ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None, module_training=None
):
    """save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None) -> None

    Writes ``ep`` (after run_decompositions()) to the path ``f`` as one data-only file, atomically
    (a temporary file, fsync, rename). Raises RuntimeError naming the first node whose op the C++
    runtime does not run. ``module_training`` (ember.jit.save) records the saved module's
    training flag, which jit.load restores as torch's loaded ScriptModules keep theirs."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"ember.export.save: expected an ExportedProgram; got {type(ep).__name__}")
    if extra_files:
        raise NotImplementedError("ember.export.save: extra_files is not supported")
    root = _program_dict(ep)
    nested = getattr(ep, "_nested", None)
    if nested is not None:  # the model's own argument structure, for ep.module() after load
        from ._nested import encode_structure

        root["input_structure"] = encode_structure(nested)
    if module_training is not None:
        root["module_training"] = bool(module_training)
    if hasattr(f, "write") and not isinstance(f, (str, os.PathLike)):
        # a buffer (io.BytesIO, an open file): write the file aside, then copy its bytes
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "program.pt2")
            _save_ember_format(root, path)
            with open(path, "rb") as src:
                f.write(src.read())
        return
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    if path is None:
        raise TypeError(
            "ember.export.save: expected a path (str or os.PathLike) or a writable buffer; "
            f"got {type(f).__name__}"
        )
    # ember's own data-only container, which the C++ runtime reads (not torch's pickle-based zip)
    _save_ember_format(root, path)


def _decode(a, env, graphs=None):
    if isinstance(a, dict):
        ((tag, body),) = a.items()
        if tag == "ref":
            return env[body]
        if tag == "slice":
            return slice(*(_decode(x, env) for x in body))
        if tag == "ellipsis":
            return Ellipsis
        if tag == "dtype":
            return getattr(_ember(), body)
        if tag == "graph":  # a cond branch: a submodule of the graph module, read by get_attr
            return graphs(body)
    if isinstance(a, (list, tuple)):
        return [_decode(x, env, graphs) for x in a]
    return a


# runtime ops whose result is not one tensor (a number, sizes, or a list of tensors)
_NOT_TENSOR = {"size", "sizes", "item", "_assert_scalar"}
_TENSOR_LISTS = {"cond", "chunk", "split", "split_with_sizes", "unbind", "rnn_layer", "max_dim",
                 "min_dim"}  # fmt: skip


def _returns_tensor(op, args):
    """Whether a loaded node's value is a tensor (what naming it by its ATen overload needs,
    a loaded graph having no example values)."""
    if op == "getitem":
        first = args[0] if args else None
        return bool(getattr(first, "meta", {}).get("is_tensor")) or (
            getattr(first, "target", None) is not None
            and getattr(first.target, "_export_op", None) in _TENSOR_LISTS
        )
    return op not in _NOT_TENSOR and op not in _TENSOR_LISTS


def _build_nodes(graph, root, env, specs):
    """Adds the nodes of ``specs`` to ``graph``; cond branches become submodules of ``root``
    (``true_graph_0``, ``false_graph_0``, ... as torch names them)."""

    def branch(body):
        count = sum(1 for n in graph.nodes if n.op == "get_attr")
        kind = "true" if count % 2 == 0 else "false"
        name = f"{kind}_graph_{count // 2}"
        sub = fx.Graph()
        sub_root = Module()
        sub_env = {n: sub.placeholder(n) for n in body["inputs"]}
        _build_nodes(sub, sub_root, sub_env, body["nodes"])
        outs = [_decode(o, sub_env) for o in body["outputs"]]
        sub.output(outs[0] if len(outs) == 1 else tuple(outs))
        gm = fx.GraphModule(sub_root, sub)
        gm._input_shapes = body.get("input_shapes")
        gm._runtime_ops = True  # saved as runtime ops: encoded again as it is
        root.add_module(name, gm)
        return graph.get_attr(name)

    for spec in specs:
        args = tuple(_decode(a, env, branch) for a in spec["args"])
        node = graph.create_node(
            "call_function", getattr(_ops.ops, spec["op"]), args, {}, spec["name"]
        )
        node.meta["is_tensor"] = _returns_tensor(spec["op"], args)
        env[spec["name"]] = node


def load(f, *, extra_files=None, expected_opset_version=None):
    """load(f, *, extra_files=None, expected_opset_version=None) -> ExportedProgram

    Reads a file written by ember.export.save. The C++ loader validates it first (magic,
    version, sizes, dtypes, op names, argument kinds, references), so a truncated, corrupt or
    foreign file raises RuntimeError and nothing in it is executed."""
    if hasattr(f, "read") and not isinstance(f, (str, os.PathLike)):
        # a buffer: the C++ validator reads paths, so its bytes go to a file aside first
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "program.pt2")
            with open(path, "wb") as dst:
                dst.write(f.read())
            return load(path)
    ember = _ember()
    path = os.fspath(f)
    try:
        ember._C._export_check(path)
    except RuntimeError as e:
        msg = str(e)
        for prefix in ("ember::export_::load: ",):
            if msg.startswith(prefix):
                msg = msg[len(prefix) :]
        raise RuntimeError(f"ember.export.load: {msg}") from None
    root = ember.load(path)
    graph = fx.Graph()
    env = {}
    input_specs = []
    state_dict, constants = {}, {}
    input_shapes = {}
    for spec in root["inputs"]:
        node = graph.placeholder(spec["name"])
        env[spec["name"]] = node
        kind = _KINDS[spec["kind"]]
        node.meta["dtype"] = spec["dtype"]
        node.meta["is_tensor"] = True
        if kind == InputKind.USER_INPUT:
            input_shapes[spec["name"]] = list(spec["shape"])
            input_specs.append(InputSpec(kind, TensorArgument(node.name), None))
            continue
        value = root["state"][spec["target"]]
        node.meta["val"] = value
        if kind == InputKind.PARAMETER:
            state_dict[spec["target"]] = value
        elif kind == InputKind.BUFFER:
            state_dict[spec["target"]] = value
        else:
            constants[spec["target"]] = value
        input_specs.append(
            InputSpec(
                kind,
                TensorArgument(node.name),
                spec["target"],
                True if kind == InputKind.BUFFER else None,
            )
        )
    gm_root = Module()
    _build_nodes(graph, gm_root, env, root["nodes"])
    _aten_names.from_runtime(graph)  # printed as torch's ATen overloads (as run_decompositions)
    outs = [_decode(o, env) for o in root["outputs"]]
    structure = root.get("output_structure")
    if _check_spec(structure) != len(outs):
        raise RuntimeError("ember.export.load: output_structure does not match the outputs")
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(n.name), None) for n in outs]
    mutations = root.get("mutations") or []
    if mutations:  # as exported: the buffers' new values first, then the user's outputs
        news = [_decode(m["value"], env) for m in mutations]
        graph.output(tuple(news) + tuple(outs))
        output_specs = [
            OutputSpec(OutputKind.BUFFER_MUTATION, TensorArgument(n.name), m["target"])
            for n, m in zip(news, mutations)
        ] + output_specs
    else:
        graph.output(tree_unflatten(structure, outs))
    ranges = {
        k: (v[0], (1 << 63) - 1 if v[1] < 0 else v[1]) for k, v in root.get("dims", {}).items()
    }
    gm = fx.GraphModule(gm_root, graph)
    ep = ExportedProgram(
        gm,
        ExportGraphSignature(input_specs, output_specs),
        state_dict,
        ranges,
        constants,
        input_shapes=input_shapes,
        output_structure=structure,
        decomposed=True,
    )
    if root.get("input_structure") is not None:
        from ._nested import StoredNested

        ep._nested = StoredNested(root["input_structure"], [s.arg.name for s in input_specs])
    ep._module_training = root.get("module_training")
    return ep
