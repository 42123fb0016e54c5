"""The tags of custom operators (ember.library): which an op carries (``OpOverload.tags``), and
what ``Tag.inplace`` and ``Tag.out`` promise, as torch checks it: the schema's form, the kernel's
return (the first argument, or the out= tensors) and the fake kernel they make unnecessary."""

import inspect

from ._runtime_names import Tag


def _schema_error(tag, what, schema):
    return ValueError(f"Schema tagged with torch.Tag.{tag} {what}. Got: {schema}")


def validate_schema(text, tags):
    """Refuses tags that are not ember.Tag values (TypeError) and a schema (its text as the op's
    definition wrote it) that cannot carry its Tag.out / Tag.inplace tag (ValueError)."""
    for t in tags:
        if not isinstance(t, Tag):
            raise TypeError(
                f"define(): tags must be ember.Tag values; got {type(t).__name__} {t!r}"
            )
    if Tag.out not in tags and Tag.inplace not in tags:
        return
    from ._op_overloads import FunctionSchema

    schema = FunctionSchema(text)
    if Tag.out in tags:
        _validate_out(schema)
    if Tag.inplace in tags:
        _validate_inplace(schema)


def _validate_out(schema):
    mutable = [a for a in schema.arguments if a.is_write]
    if not mutable:
        raise _schema_error("out", "must have at least one mutable argument", schema)
    positional = [a.name for a in mutable if not a.kwarg_only]
    if positional:
        raise _schema_error(
            "out",
            "requires all mutable arguments to be keyword-only (after the *). Found mutable "
            f"positional args: {positional}",
            schema,
        )
    others = [a.name for a in mutable if a.type != "Tensor"]
    if others:
        raise _schema_error(
            "out",
            f"only supports Tensor mutable arguments. Found unsupported mutable args: {others}",
            schema,
        )
    if len(schema.returns) != len(mutable):
        raise _schema_error(
            "out",
            f"must return all mutable arguments (got {len(mutable)} mutable args but "
            f"{len(schema.returns)} returns)",
            schema,
        )
    for i, (ret, arg) in enumerate(zip(schema.returns, mutable)):
        if ret.alias_info is None:
            what = f"must alias mutable arg '{arg.name}'"
        elif not ret.is_write:
            what = f"must be a mutable alias (e.g., Tensor(a!), not Tensor(a)) of arg '{arg.name}'"
        elif ret.alias_info.before_set != arg.alias_info.before_set:
            what = (
                f"must alias mutable arg '{arg.name}' (return aliases "
                f"{ret.alias_info.before_set} but arg aliases {arg.alias_info.before_set})"
            )
        else:
            continue
        raise ValueError(f"Return {i} of schema tagged with torch.Tag.out {what}. Got: {schema}")


def _validate_inplace(schema):
    args = schema.arguments
    if not args or args[0].kwarg_only:
        raise _schema_error("inplace", "must have at least one positional argument", schema)
    first = args[0]
    if not first.is_write:
        raise _schema_error(
            "inplace",
            "requires the first positional argument to be mutable (e.g., Tensor(a!))",
            schema,
        )
    if first.type != "Tensor":
        raise _schema_error(
            "inplace",
            "requires the first positional argument to be a Tensor. Got type "
            f"'{first.type}' for arg '{first.name}'",
            schema,
        )
    if len(schema.returns) != 1:
        raise _schema_error(
            "inplace",
            f"must return exactly one value (the first argument). Got {len(schema.returns)} "
            "returns",
            schema,
        )
    ret = schema.returns[0]
    if ret.type != "Tensor":
        why = f"return must be a Tensor, got type '{ret.type}'"
    elif ret.alias_info is None:
        why = "return must alias the first argument"
    elif not ret.is_write:
        why = "return must be a mutable alias, e.g., Tensor(a!)"
    elif ret.alias_info.before_set != first.alias_info.before_set:
        why = (
            f"return aliases {ret.alias_info.before_set} but first arg aliases "
            f"{first.alias_info.before_set}"
        )
    else:
        why = None
    if why is not None:
        raise _schema_error("inplace", f"must return the first mutable argument ({why})", schema)
    others = [a.name for a in args[1:] if a.is_write]
    if others:
        raise _schema_error(
            "inplace",
            f"must only mutate the first positional argument. Found additional mutable args: "
            f"{others}",
            schema,
        )


def out_names(schema):
    """The names of a Tag.out op's out= tensors, in order."""
    return tuple(a.name for a in schema.arguments if a.is_write)


def returns_promised(schema, tags, name, fn):
    """fn checked as torch checks the kernel of an op tagged inplace / out: the result must be
    the first argument, or the out= tensors in order (RuntimeError)."""
    inplace = Tag.inplace in tags
    outs = out_names(schema)

    def kernel(*args, **kwargs):
        result = fn(*args, **kwargs)
        if inplace:
            ok = bool(args) and result is args[0]
            what = "An operator tagged with torch.Tag.inplace must return its first argument."
        elif len(outs) == 1:
            ok = result is kwargs.get(outs[0])
            what = (
                "An operator tagged with torch.Tag.out must return its mutable keyword-only "
                "arguments."
            )
        else:
            ok = (
                isinstance(result, tuple)
                and len(result) == len(outs)
                and all(r is kwargs.get(n) for r, n in zip(result, outs))
            )
            what = (
                "An operator tagged with torch.Tag.out must return its mutable keyword-only "
                "arguments."
            )
        if not ok:
            raise RuntimeError(f"{name} (with implementation in {inspect.getmodule(fn)}): {what}")
        return result

    return kernel


def trivial_fake(schema, tags):
    """The fake kernel an inplace / out op gets without register_fake: it returns what the op
    writes (torch generates the same one)."""
    if Tag.inplace in tags:
        return lambda *args, **kwargs: args[0]
    outs = out_names(schema)
    if len(outs) == 1:
        return lambda *args, **kwargs: kwargs[outs[0]]
    return lambda *args, **kwargs: tuple(kwargs[n] for n in outs)
