"""vmap's pytrees: flattening the arguments and outputs, and in_dims/out_dims matched against
their structure (with torch's error texts)."""

from .._C import Tensor


def _tree_flatten(tree):
    if isinstance(tree, (tuple, list)):  # a BatchedTensor is neither (its class is Tensor)
        leaves, specs = [], []
        for t in tree:
            lf, sp = _tree_flatten(t)
            leaves += lf
            specs.append(sp)
        return leaves, (type(tree), specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for k, v in tree.items():
            lf, sp = _tree_flatten(v)
            leaves += lf
            specs.append((k, sp))
        return leaves, (dict, specs)
    return [tree], None


def _tree_unflatten(leaves, spec):
    it = iter(leaves)

    def build(sp):
        if sp is None:
            return next(it)
        kind, subs = sp
        if kind is dict:
            return {k: build(s) for k, s in subs}
        items = [build(s) for s in subs]
        return kind(*items) if hasattr(kind, "_fields") else kind(items)

    return build(spec)


def _spec_node(spec):
    """ember's spec as (type name, context, children) for torch's TreeSpec text; None: a leaf."""
    if spec is None:
        return None
    kind, subs = spec
    if kind is dict:
        return ("dict", [k for k, _ in subs], [_spec_node(s) for _, s in subs])
    if hasattr(kind, "_fields"):
        return ("namedtuple", kind, [_spec_node(s) for s in subs])
    return (kind.__name__, None, [_spec_node(s) for s in subs])


def _dims_node(dims):
    if isinstance(dims, (tuple, list)):
        return (type(dims).__name__, None, [_dims_node(d) for d in dims])
    if isinstance(dims, dict):
        return ("dict", list(dims), [_dims_node(d) for d in dims.values()])
    return None


def _treespec_text(node, indent=0):
    """torch's repr of a TreeSpec: the first child on the opening line, each next one on its own
    line indented two spaces per level."""
    if node is None:
        return "*"
    name, context, children = node
    indent += 2
    texts = [_treespec_text(c, indent) for c in children]
    inner = ",".join(texts[:1] + ["\n" + " " * indent + t for t in texts[1:]])
    return f"TreeSpec({name}, {context}, [{inner}])"


def _spec_pprint(spec):
    """torch's treespec_pprint: the structure as Python literal syntax with * for leaves."""
    if spec is None:
        return "*"
    kind, subs = spec
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {_spec_pprint(s)}" for k, s in subs) + "}"
    parts = [_spec_pprint(s) for s in subs]
    if hasattr(kind, "_fields"):
        return (
            f"{kind.__name__}(" + ", ".join(f"{f}={p}" for f, p in zip(kind._fields, parts)) + ")"
        )
    if kind is list:
        return "[" + ", ".join(parts) + "]"
    return "(" + ", ".join(parts) + (",)" if len(parts) == 1 else ")")


def _broadcast_dims(dims, spec):
    """dims (an int/None or a pytree prefix of spec) -> one dim per leaf of spec, or None where
    dims does not fit spec."""
    if not isinstance(dims, (tuple, list, dict)):  # a leaf (the caller checks its type)
        return [dims] * len(_tree_unflatten_count(spec))
    if spec is None:
        return None
    kind, subs = spec
    if kind is dict:
        if not isinstance(dims, dict) or set(dims) != {k for k, _ in subs}:
            return None
        pairs = [(dims[k], s) for k, s in subs]
    elif not isinstance(dims, (tuple, list)) or len(dims) != len(subs):
        return None
    else:
        pairs = list(zip(dims, subs))
    out = []
    for d, s in pairs:
        part = _broadcast_dims(d, s)
        if part is None:
            return None
        out += part
    return out


def _structure_error(prefix, what, dims, spec, of):
    return ValueError(
        f"{prefix}: {what} is not compatible with the structure of `{of}`. {what} has structure "
        f"{_treespec_text(_dims_node(dims))} but {of} has structure "
        f"{_treespec_text(_spec_node(spec))}."
    )


def _tree_unflatten_count(spec):
    if spec is None:
        return [0]
    kind, subs = spec
    out = []
    for s in subs:
        out += _tree_unflatten_count(s[1] if kind is dict else s)
    return out


def _mapped_inputs(fname, in_dims, args):
    """vmap's flat inputs, their spec, one in_dim per leaf and the batch size, with torch's
    checks and texts."""
    _check_in_dims(in_dims, fname)
    if not args:
        raise ValueError(
            f"vmap({fname})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you "
            "are trying to vmap over a function with no inputs. The latter is unsupported."
        )
    leaves, spec = _tree_flatten(args)
    dims = _broadcast_dims(in_dims, spec)
    if dims is None:
        raise _structure_error(
            f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>)",
            "in_dims",
            in_dims,
            spec,
            "inputs",
        )
    size = None
    for leaf, d in zip(leaves, dims):
        if d is None:
            continue
        if not isinstance(d, int):
            raise ValueError(
                f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                "input but in_dim must be either an integer dimension or None."
            )
        if not isinstance(leaf, Tensor):
            raise ValueError(
                f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an "
                f"input but the input is of type {type(leaf)}. We cannot vmap over "
                "non-Tensor arguments, please use None as the respective in_dim"
            )
        n = leaf.dim()
        if not -n <= d < n:
            raise ValueError(
                f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some "
                f"input, but that input is a Tensor of dimensionality {n} so expected in_dim "
                f"to satisfy -{n} <= in_dim < {n}."
            )
        s = leaf.shape[d]
        if size is None:
            size = s
        elif s != size:
            sizes = [lf.shape[dd] for lf, dd in zip(leaves, dims) if dd is not None]
            raise ValueError(
                f"vmap: Expected all tensors to have the same size in the mapped dimension, "
                f"got sizes {sizes} for the mapped dimension"
            )
    if size is None:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    return leaves, spec, dims, size


def _check_in_dims(in_dims, fname):
    if not isinstance(in_dims, (int, tuple)):
        raise ValueError(
            f"vmap({fname}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            f"(potentially nested) tuple matching the structure of inputs, got: {type(in_dims)}."
        )


def _check_out_dims(out_dims, fname):
    for d in _leaves_of(out_dims):
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({fname}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                "python collection of ints representing where in the outputs the vmapped "
                "dimension should appear."
            )


def _leaves_of(dims):
    if isinstance(dims, (tuple, list)):
        return [d for x in dims for d in _leaves_of(x)]
    if isinstance(dims, dict):
        return [d for x in dims.values() for d in _leaves_of(x)]
    return [dims]
