"""Schema inference for ember.library.custom_op: torch's schema text from a function's type
annotations (``infer_schema``), with the forms the ``torch.Tag.inplace`` / ``torch.Tag.out`` tags
give a custom op."""

import inspect
import typing


def _type_table():
    import ember

    t = ember.Tensor
    opt = typing.Optional
    table = {t: "Tensor", opt[t]: "Tensor?"}
    for seq in (typing.Sequence, typing.List, list):
        table[seq[t]] = "Tensor[]"
        table[seq[opt[t]]] = "Tensor?[]"
    for py, name in ((int, "SymInt"), (float, "float"), (bool, "bool")):
        table[py] = name
        table[opt[py]] = name + "?"
        for seq in (typing.Sequence, typing.List, list):
            table[seq[py]] = name + "[]"
            table[opt[seq[py]]] = name + "[]?"
    table[str] = "str"
    table[opt[str]] = "str?"
    number = typing.Union[int, float, bool]
    table[number] = "Scalar"
    table[opt[number]] = "Scalar?"
    for seq in (typing.Sequence, typing.List, list):
        table[seq[number]] = "Scalar[]"
    table[ember.dtype] = "ScalarType"
    table[opt[ember.dtype]] = "ScalarType?"
    table[ember.device] = "Device"
    table[opt[ember.device]] = "Device?"
    return table


def _return_table():
    import ember

    t = ember.Tensor
    return {
        t: "Tensor",
        typing.List[t]: "Tensor[]",
        list[t]: "Tensor[]",
        int: "SymInt",
        float: "float",
        bool: "bool",
        typing.Union[int, float, bool]: "Scalar",
    }


def _default_text(value):
    if value is None or isinstance(value, (bool, int, float)):
        return repr(value) if not isinstance(value, bool) else str(value)
    if isinstance(value, str):
        return '"' + value + '"'
    return None


def normalize_tags(tags):
    """tags (an ember.Tag, a sequence of them, or None) as a tuple without repeats, in order
    (defining the op refuses what is not a Tag)."""
    from ._runtime_names import Tag

    if tags is None:
        return ()
    if isinstance(tags, Tag):
        tags = (tags,)
    return tuple(dict.fromkeys(tags))


def infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()):
    """infer_schema(prototype_function, /, *, mutates_args, op_name=None, tags=()) -> str

    The schema string (torch's grammar) of a function from its type annotations: Tensor, Tensor?,
    list[Tensor], int (SymInt), float, bool, str, their Optional and list forms, dtype and device;
    ``mutates_args`` names the arguments the function writes ("unknown": every tensor).
    ``tags=ember.Tag.inplace`` (the function writes its first argument and returns it) or
    ``ember.Tag.out`` (it writes keyword-only tensors and returns them) make the return alias
    them, as torch's."""
    from ._runtime_names import Tag

    sig = inspect.signature(prototype_function)

    def error_fn(what):
        raise ValueError(f"infer_schema(func): {what} Got func with signature {sig})")

    tags = normalize_tags(tags)
    is_inplace, is_out = Tag.inplace in tags, Tag.out in tags
    if is_inplace and is_out:
        raise AssertionError("torch.Tag.inplace and torch.Tag.out are mutually exclusive")
    try:
        hints = typing.get_type_hints(prototype_function)
    except Exception:
        hints = {}
    table = _type_table()
    params = []
    seen_kwarg_only = False
    names = list(sig.parameters)
    first = None  # (name, type, alias) of the first positional argument
    out_aliases, out_names = [], []
    for idx, (name, param) in enumerate(sig.parameters.items()):
        if param.kind not in (param.POSITIONAL_OR_KEYWORD, param.KEYWORD_ONLY):
            error_fn("We do not support positional-only args, varargs, or varkwargs.")
        if param.kind == param.KEYWORD_ONLY and not seen_kwarg_only:
            params.append("*")
            seen_kwarg_only = True
        if param.annotation is inspect.Parameter.empty:
            error_fn(f"Parameter {name} must have a type annotation.")
        ann = hints.get(name, param.annotation)
        if ann not in table:
            error_fn(
                f"Parameter {name} has unsupported type {param.annotation}. "
                f"The valid types are: {table.keys()}."
            )
        typ = table[ann]
        if param.kind == param.POSITIONAL_OR_KEYWORD and first is None:
            first = (name, typ, f"a{idx}")
        mutated = mutates_args == "unknown" or (
            not isinstance(mutates_args, str) and name in mutates_args
        )
        if mutated and typ.startswith("Tensor"):
            typ = f"Tensor(a{idx}!)" + typ[len("Tensor") :]
        elif mutated and mutates_args != "unknown":
            error_fn(
                f"Parameter {name} is in mutable_args but only Tensors or collections of Tensors "
                "can be mutated"
            )
        if is_out and mutated and typ.startswith("Tensor"):
            if param.kind != param.KEYWORD_ONLY:
                error_fn("torch.Tag.out requires mutable arguments to be keyword-only.")
            if typ != f"Tensor(a{idx}!)":
                error_fn("torch.Tag.out only supports mutable keyword-only Tensor arguments.")
            out_aliases.append(f"a{idx}")
            out_names.append(name)
        if param.default is inspect.Parameter.empty:
            params.append(f"{typ} {name}")
        else:
            text = _default_text(param.default)
            if text is None:
                error_fn(
                    f"Parameter {name} has an unsupported default value type "
                    f"{type(param.default)}. Please file an issue on GitHub so we can prioritize "
                    "this."
                )
            params.append(f"{typ} {name}={text}")
    if mutates_args != "unknown":
        if isinstance(mutates_args, str):
            mutates_args = (mutates_args,)
        missing = set(mutates_args) - set(names)
        if missing:
            error_fn(
                f"{missing} in mutates_args were not found in the custom op's signature. "
                "mutates_args should contain the names of all args that the custom op mutates, or "
                "just the string 'unknown' if you don't know."
            )
    if is_inplace:
        if first is None:
            error_fn("torch.Tag.inplace requires a positional Tensor argument.")
        if first[1] != "Tensor":
            error_fn("torch.Tag.inplace requires the first positional argument to be a Tensor.")
        if isinstance(mutates_args, str) or set(mutates_args) != {first[0]}:
            shown = mutates_args if isinstance(mutates_args, str) else tuple(mutates_args)
            error_fn(
                "torch.Tag.inplace requires mutates_args to contain exactly the first positional "
                f"argument, got {shown}."
            )
    if is_out and not out_aliases:
        error_fn("torch.Tag.out requires at least one mutable keyword-only Tensor argument.")
    if sig.return_annotation is inspect.Signature.empty:
        error_fn("No return type annotation was provided. Please add one.")
    ret = hints.get("return", sig.return_annotation)
    if is_out:
        returns = _out_return_text(ret, out_aliases, out_names, error_fn)
    else:
        returns = _return_text(ret, sig.return_annotation, error_fn)
    if is_inplace:
        if returns != "Tensor":
            error_fn("torch.Tag.inplace requires the return annotation to be torch.Tensor.")
        returns = f"Tensor({first[2]}!)"
    prefix = op_name or ""
    return f"{prefix}({', '.join(params)}) -> {returns}"


def _out_return_text(ret, aliases, names, error_fn):
    """The returns of a Tag.out op: its out tensors, in order (the annotation must say so)."""
    import ember

    t = ember.Tensor
    if len(aliases) == 1:
        matches = ret is t
    else:
        matches = typing.get_origin(ret) is tuple and typing.get_args(ret) == (t,) * len(aliases)
    if not matches:
        error_fn(
            "torch.Tag.out requires the return annotation to match the mutable keyword-only "
            f"Tensor arguments {tuple(names)}."
        )
    items = [f"Tensor({a}!)" for a in aliases]
    return items[0] if len(items) == 1 else f"({', '.join(items)})"


def _return_text(ret, shown, error_fn):
    table = _return_table()
    if ret is None or ret is type(None):
        return "()"
    origin = typing.get_origin(ret)
    if origin is tuple:
        items = []
        for r in typing.get_args(ret):
            if r not in table:
                error_fn(f"Return has unsupported type {r}. The valid types are: {table}.")
            items.append(table[r])
        return "(" + ", ".join(items) + ")"
    if ret not in table:
        error_fn(f"Return has unsupported type {shown}. The valid types are: {table}.")
    return table[ret]
