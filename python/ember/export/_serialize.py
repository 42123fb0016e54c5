"""ember.export.save / load: an ExportedProgram as one data-only file (the format is described in
ember/export/__init__.py and csrc/ember/export/program.h)."""

import os
import sys
import tempfile

from .. import fx
from ..nn import Module
from ..serialization import _save_ember_format
from . import _ops
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
        inputs.append(
            {
                "name": node.name,
                "kind": kind,
                "target": spec.target,
                "dtype": _dtype_name(value),
                "shape": list(value.shape),
            }
        )
    nodes = []
    outputs = None
    for node in ep.graph.nodes:
        if node.op == "placeholder":
            continue
        if node.op == "output":
            items, _ = tree_flatten(node.args[0])
            outputs = [_encode(x, "the output") for x in items]
            continue
        op = getattr(node.target, "_export_op", None) if node.op == "call_function" else None
        if op is None or op not in runtime:
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
                "args": [_encode(a, f"node '{node.name}'") for a in node.args],
            }
        )
    return {
        "format": FORMAT,
        "version": VERSION,
        "inputs": inputs,
        "state": state,
        "nodes": nodes,
        "outputs": outputs,
        "output_structure": ep._output_structure,
        "dims": {
            k: [lo, -1 if hi >= (1 << 63) - 1 else hi]
            for k, (lo, hi) in ep.range_constraints.items()
        },
    }


def _placeholders(graph):
    return [n for n in graph.nodes if n.op == "placeholder"]


def save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None):
    """save(ep, f, *, extra_files=None, opset_version=None, pickle_protocol=None) -> None

    Writes ``ep`` (after run_decompositions()) to the path ``f`` as one data-only file, atomically
    (a temporary file, fsync, rename). Raises RuntimeError naming the first node whose op the C++
    runtime does not run."""
    if not isinstance(ep, ExportedProgram):
        raise TypeError(f"ember.export.save: expected an ExportedProgram; got {type(ep).__name__}")
    if extra_files:
        raise NotImplementedError("ember.export.save: extra_files is not supported")
    mutated = ep.graph_signature.buffers_to_mutate
    if mutated:
        raise RuntimeError(
            "ember.export.save: expected a program without buffer mutations (the C++ runtime "
            f"runs functional programs); got updates of {sorted(mutated.values())} (export the "
            "model in eval() mode)"
        )
    root = _program_dict(ep)
    nested = getattr(ep, "_nested", None)
    if nested is not None:  # the model's own argument structure, for ep.module() after load
        from ._nested import encode_structure

        root["input_structure"] = encode_structure(nested)
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


def _decode(a, env):
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
    if isinstance(a, (list, tuple)):
        return [_decode(x, env) for x in a]
    return a


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
    for spec in root["nodes"]:
        args = tuple(_decode(a, env) for a in spec["args"])
        node = graph.create_node(
            "call_function", getattr(_ops.ops, spec["op"]), args, {}, spec["name"]
        )
        env[spec["name"]] = node
    outs = [_decode(o, env) for o in root["outputs"]]
    structure = root.get("output_structure")
    if _check_spec(structure) != len(outs):
        raise RuntimeError("ember.export.load: output_structure does not match the outputs")
    graph.output(tree_unflatten(structure, outs))
    output_specs = [OutputSpec(OutputKind.USER_OUTPUT, TensorArgument(n.name), None) for n in outs]
    ranges = {
        k: (v[0], (1 << 63) - 1 if v[1] < 0 else v[1]) for k, v in root.get("dims", {}).items()
    }
    gm = fx.GraphModule(Module(), graph)
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
    return ep
