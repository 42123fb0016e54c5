"""vmap's pytrees: flattening the arguments and outputs, and in_dims/out_dims matched against
their structure (with torch's error texts)."""


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


def _spec_str(spec):
    if spec is None:
        return "*"
    kind, subs = spec
    if kind is dict:
        return "{" + ", ".join(f"{k!r}: {_spec_str(s)}" for k, s in subs) + "}"
    return f"{kind.__name__}(" + ", ".join(_spec_str(s) for s in subs) + ")"


def _broadcast_dims(dims, spec, what, fname, args_spec_text):
    """dims (an int/None or a pytree prefix of spec) -> one dim per leaf of spec."""
    if dims is None or isinstance(dims, int):
        n = len(_tree_unflatten_count(spec))
        return [dims] * n
    if spec is None:
        raise ValueError(
            f"vmap({fname}, ...): {what} is not compatible with the structure of "
            f"`{args_spec_text}`. {what} has structure {_describe(dims)} but {args_spec_text} "
            "has structure *."
        )
    kind, subs = spec
    if kind is dict:
        if not isinstance(dims, dict) or set(dims) != {k for k, _ in subs}:
            raise ValueError(
                f"vmap({fname}, ...): {what} is not compatible with the structure of "
                f"`{args_spec_text}`. {what} has structure {_describe(dims)} but "
                f"{args_spec_text} has structure {_spec_str(spec)}."
            )
        out = []
        for k, s in subs:
            out += _broadcast_dims(dims[k], s, what, fname, args_spec_text)
        return out
    if not isinstance(dims, (tuple, list)) or len(dims) != len(subs):
        raise ValueError(
            f"vmap({fname}, ...): {what} is not compatible with the structure of "
            f"`{args_spec_text}`. {what} has structure {_describe(dims)} but {args_spec_text} "
            f"has structure {_spec_str(spec)}."
        )
    out = []
    for d, s in zip(dims, subs):
        out += _broadcast_dims(d, s, what, fname, args_spec_text)
    return out


def _tree_unflatten_count(spec):
    if spec is None:
        return [0]
    kind, subs = spec
    out = []
    for s in subs:
        out += _tree_unflatten_count(s[1] if kind is dict else s)
    return out


def _describe(dims):
    if isinstance(dims, (tuple, list)):
        return f"{type(dims).__name__}(" + ", ".join(_describe(d) for d in dims) + ")"
    if isinstance(dims, dict):
        return "{" + ", ".join(f"{k!r}: {_describe(v)}" for k, v in dims.items()) + "}"
    return "*"


def _check_dims_type(dims, what, fname):
    if dims is None or (isinstance(dims, int) and not isinstance(dims, bool)):
        return
    if isinstance(dims, (tuple, list)):
        for d in dims:
            _check_dims_type(d, what, fname)
        return
    if isinstance(dims, dict):
        for d in dims.values():
            _check_dims_type(d, what, fname)
        return
    raise ValueError(
        f"vmap({fname}, {what}={dims!r}, ...)(<inputs>): expected `{what}` to be int or a "
        f"(potentially nested) tuple matching the structure of inputs, got: {type(dims)}."
    )
