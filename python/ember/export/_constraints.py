"""Dynamic dims that the traced code specializes: a Python branch on a size that export was told
is dynamic (``if x.shape[0] == 4:`` with ``{0: Dim("n")}``) raises torch's UserError shape,
``Constraints violated (n)! ...``, naming the Dim; one marked ``Dim.AUTO`` is made static instead,
as torch's export does, and the capture runs again. A dim an op fixes (the features dim of a
``linear``) is found on the finished graph (``linear_features``)."""

import operator

from .._dynamo.exc import UserError


class ConstraintsViolated(UserError):
    """UserError(message): dims marked dynamic that the code specializes (``.dims`` lists them as
    (input name, dim index, Dim, example size))."""

    def __init__(self, message, dims):
        super().__init__(message)
        self.dims = dims


def _is_tensor(v):
    import ember

    return isinstance(v, ember.Tensor)


def _shape_node(n):
    return (
        n.op == "call_function"
        and n.target is getattr
        and len(n.args) == 2
        and n.args[1] == "shape"
        and n.args[0].op == "placeholder"
    )


def specialized_dims(node, dynamic, examples):
    """[(input, dim, Dim, size)] of the dynamic dims a bool() on `node` reads, when it reads no
    tensor data (only sizes); [] otherwise."""
    found, seen, stack = [], set(), [node]

    def add(ph, dims):
        spec = dynamic.get(ph.target, {})
        ex = examples.get(ph.target)
        for d in dims:
            d = d % ex.dim() if ex is not None and ex.dim() else d
            if d in spec:
                found.append((ph.target, d, spec[d], ex.size(d) if ex is not None else None))

    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.op == "placeholder":
            continue
        if n.op == "call_method" and n.target == "size" and n.args[0].op == "placeholder":
            ph = n.args[0]
            dims = [n.args[1]] if len(n.args) > 1 and isinstance(n.args[1], int) else None
            add(ph, dims if dims is not None else list(dynamic.get(ph.target, {})))
            continue
        if n.op == "call_function" and n.target is operator.getitem and _shape_node(n.args[0]):
            if isinstance(n.args[1], int):
                add(n.args[0].args[0], [n.args[1]])
                continue
        if _shape_node(n):
            ph = n.args[0]
            add(ph, list(dynamic.get(ph.target, {})))
            continue
        if n.op != "call_function" and n.op != "call_method" or _is_tensor(n.meta.get("val")):
            return []  # a branch on tensor data, not on a size
        stack.extend(n.all_input_nodes)
    return found


def violation(found, line):
    names = sorted({dim.__name__ for _, _, dim, _ in found})
    lines = [
        f"Constraints violated ({', '.join(names)})! The exported program cannot keep them dynamic."
    ]
    for name, d, dim, size in found:
        lines.append(
            f"  - You marked {dim.__name__} as dynamic ({name}.shape[{d}]) but the code "
            f"branches on it, which specializes it to a constant ({size}). Use Dim.STATIC (or "
            "no Dim) for this dim, Dim.AUTO to let export decide, or ember.cond for the branch."
        )
    if line:
        lines.append(line)
    return ConstraintsViolated("\n".join(lines), found)


def linear_features(parts, dims):
    """The dims marked dynamic that are the features dim of a ``linear`` in the captured program
    ``parts`` (its size must equal the weight's: torch specializes it): one marked ``Dim.AUTO``
    is made static in ``parts``, as torch's; for any other, UserError in torch's words (else
    None)."""
    import ember

    from ._sym_shapes import annotate

    shapes, ranges = parts["input_shapes"], parts["range_constraints"]
    annotate(parts["graph_module"].graph, shapes, ranges)
    by_name = {dim.__name__: dim for spec in dims.values() for dim in spec.values()}
    linear = ember.ops.aten.linear.default
    found = {}
    for node in parts["graph_module"].graph.nodes:
        if node.op != "call_function" or node.target is not linear:
            continue
        sizes = node.args[0].meta.get("sym_shape") or ()
        dim = by_name.get(sizes[-1]) if sizes else None
        if dim is None:
            continue
        size = node.args[0].meta["val"].shape[-1]
        if getattr(dim, "auto", False):
            ranges.pop(dim.__name__, None)
            for name, dims_of in shapes.items():
                shapes[name] = [size if d == dim.__name__ else d for d in dims_of]
        else:
            found[dim.__name__] = size
    if not found:
        return None
    lines = [f"Constraints violated ({', '.join(sorted(found))})! For more information, run with "
             'TORCH_LOGS="+dynamic".']  # fmt: skip
    for name, size in found.items():
        lines.append(
            f"  - You marked {name} as dynamic but your code specialized it to be a constant "
            f"({size}). If you're using mark_dynamic, either remove it or use maybe_mark_dynamic. "
            "If you're using Dim.DYNAMIC, replace it with either Dim.STATIC or Dim.AUTO."
        )
    lines += ["Suggested fixes:", *(f"  {name} = {size}" for name, size in found.items())]
    return UserError("\n".join(lines))
