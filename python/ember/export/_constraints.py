"""Dynamic dims that the traced code specializes or bounds: a comparison of one size with a
number (``if x.shape[0] > 2:``, ``_check(x.shape[0] >= 3)``) narrows the dim's range
(``refine``); any other Python branch on a size that export was told is dynamic
(``if x.shape[0] == 4:`` with ``{0: Dim("n")}``) raises torch's UserError shape,
``Constraints violated (n)! ...``, naming the Dim; one marked ``Dim.AUTO`` is made static instead,
as torch's export does, and the capture runs again. A dim an op fixes (a view to a constant
shape, the features dim of a ``linear``, a static operand of a broadcast) is found by running the
finished graph at other sizes (``op_specialized``)."""

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


_BOUNDS = {  # op -> (lo, hi) of the size when `size OP c` holds, and when it does not
    operator.gt: (lambda c: (c + 1, None), lambda c: (None, c)),
    operator.ge: (lambda c: (c, None), lambda c: (None, c - 1)),
    operator.lt: (lambda c: (None, c - 1), lambda c: (c, None)),
    operator.le: (lambda c: (None, c), lambda c: (c + 1, None)),
}
_SWAPPED = {operator.gt: operator.lt, operator.ge: operator.le, operator.lt: operator.gt,
            operator.le: operator.ge}  # fmt: skip


def _size_read(n):
    """(placeholder, dim) when ``n`` reads one size of an input (``x.shape[d]``, ``x.size(d)``)."""
    if n.op == "call_function" and n.target is operator.getitem and _shape_node(n.args[0]):
        if isinstance(n.args[1], int):
            return n.args[0].args[0], n.args[1]
    if n.op == "call_method" and n.target == "size" and n.args[0].op == "placeholder":
        if len(n.args) > 1 and isinstance(n.args[1], int):
            return n.args[0], n.args[1]
    return None


def refine(node, found, examples, holds=None):
    """A comparison of one dynamic size with a number (``x.shape[0] > 2``), as torch's export
    keeps it: the size stays symbolic, its range narrowed to where the comparison has the
    example's outcome. Returns that outcome (``holds`` when given: a ``_check``), narrowing a
    ``Dim.AUTO`` in place; raises torch's UserError for a named Dim whose range is wider; None
    when ``node`` is no such comparison (``==`` specializes the size, as in torch)."""
    if len(found) != 1 or node.op != "call_function" or len(node.args) != 2:
        return None
    op, (a, b) = node.target, node.args
    if isinstance(a, int) and not isinstance(a, bool) and op in _SWAPPED:
        op, a, b = _SWAPPED[op], b, a
    read = _size_read(a) if hasattr(a, "op") else None
    if op not in _BOUNDS or read is None or not isinstance(b, int) or isinstance(b, bool):
        if op is operator.ne and read is not None and holds is None:  # a guard, no range
            ph, d = read
            return examples[ph.target].size(d) != b
        return None
    name, d, dim, size = found[0]
    outcome = op(size, b) if holds is None else holds
    lo, hi = _BOUNDS[op][0 if outcome else 1](b)
    base = max(dim.min, 2)  # torch's symbolic sizes are at least 2 (0 and 1 specialize)
    lo = base if lo is None else max(lo, base)
    hi = dim.max if hi is None else min(hi, dim.max)
    if (lo, hi) == (base, dim.max):
        return outcome
    if getattr(dim, "auto", False):
        dim.min, dim.max = lo, hi
        return outcome
    raise _range_error(name, d, dim, lo, hi)


def _range_error(name, d, dim, lo, hi):
    """torch's UserError for a named Dim whose range is wider than a guard allows."""
    where = f"L['{name}'].size()[{d}]"
    top = "IntInfinity()" if hi >= (1 << 62) else hi
    given = [f"{dim.__name__} >= {dim.min}" if dim.min > 2 else "",
             f"{dim.__name__} <= {dim.max}" if dim.max < (1 << 62) else ""]  # fmt: skip
    given = " and ".join(g for g in given if g)
    fix = "".join([f", min={lo}" if lo != 2 else "", f", max={hi}" if hi < (1 << 62) else ""])
    return UserError(
        f"Constraints violated ({dim.__name__})! For more information, run with "
        'TORCH_LOGS="+dynamic".\n'
        f"  - Not all values of {dim.__name__} = {where} in the specified range "
        f"{given + ' ' if given else ''}satisfy the generated guard {lo} <= {where} and {where} "
        f"<= {top}\nSuggested fixes:\n  {dim.__name__} = Dim('{dim.__name__}'{fix})"
    )


class TiedDims(Exception):
    """Two ``Dim.AUTO``/``Dim.DYNAMIC`` sizes a branch finds equal (``x.shape[0] ==
    y.shape[0]``): the capture runs again with ``merged`` ((input, dim index)) on ``kept``."""

    def __init__(self, kept, merged):
        super().__init__("tied dims")
        self.kept, self.merged = kept, merged


def equal_sizes(node, found, examples):
    """The outcome of ``==``/``!=`` between two dynamic sizes that are one Dim, as torch's
    symbols compare; raises TiedDims when two unnamed ones of one example size are compared
    (torch unifies them); None otherwise."""
    if node.op != "call_function" or node.target not in (operator.eq, operator.ne):
        return None
    reads = [_size_read(a) if hasattr(a, "op") else None for a in node.args]
    if len(found) != 2 or None in reads:
        return None
    order = list(examples)
    found = sorted(found, key=lambda f: (order.index(f[0]), f[1]))  # the first input's is kept
    (_, _, first, size), (name, d, second, other) = found
    if first is second:
        return node.target is operator.eq
    hinted = getattr(first, "hinted", False) and getattr(second, "hinted", False)
    if not hinted or size != other or getattr(second, "root", None) is not None:
        return None
    first.min, first.max = max(first.min, second.min), min(first.max, second.max)
    first.auto = first.auto and second.auto
    raise TiedDims(first, (name, d))


_UNBOUNDED = 1 << 62  # a max at or above this is no bound (Dim's max is 2**63 - 1)

_NEGATED = {operator.eq: operator.ne, operator.lt: operator.ge, operator.gt: operator.le}
_NEGATED.update({v: k for k, v in _NEGATED.items()})
_SYMBOL = {operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
           operator.gt: ">", operator.ge: ">="}  # fmt: skip


class SizeGuard:
    """SizeGuard(op, a, b): the relation ``a OP b`` between two input sizes ((input, dim) each)
    that a branch of the exported code took; ``ep.module()`` checks it (torch's guard)."""

    def __init__(self, op, a, b):
        self.op, self.a, self.b = op, a, b

    def __str__(self):
        (x, i), (y, j) = self.a, self.b
        return f"{x}.size()[{i}] {_SYMBOL[self.op]} {y}.size()[{j}]"

    def check(self, values):
        (x, i), (y, j) = self.a, self.b
        if not self.op(values[x].size(i), values[y].size(j)):
            raise AssertionError(f"Guard failed: {self}")


def compare_sizes(node, found, examples):
    """``(outcome, SizeGuard)`` for a comparison of two sizes of different dynamic dims (``if
    x.shape[0] > y.shape[0]:``), as torch's export keeps it: both stay symbolic and the branch
    the examples take is guarded; None for any other condition. Two named Dims compared equal
    that are equal in the examples raise torch's UserError (they must be one Dim)."""
    if node.op != "call_function" or node.target not in _SYMBOL or len(node.args) != 2:
        return None
    reads = [_size_read(a) if hasattr(a, "op") else None for a in node.args]
    if len(found) != 2 or None in reads or found[0][2] is found[1][2]:
        return None
    order = list(examples)
    (pa, da), (pb, db) = reads
    sa, sb = examples[pa.target].size(da), examples[pb.target].size(db)
    op, outcome = node.target, node.target(sa, sb)
    if (order.index(pa.target), da) > (order.index(pb.target), db):  # torch prints x first
        op, pa, da, pb, db, sa, sb = _SWAPPED.get(op, op), pb, db, pa, da, sb, sa
    named = not any(getattr(dim, "hinted", False) for _, _, dim, _ in found)
    if named and op in (operator.eq, operator.ne) and sa == sb:
        dims = {(n, d): dim for n, d, dim, _ in found}
        first, second = dims[(pa.target, da)].__name__, dims[(pb.target, db)].__name__
        raise UserError(
            f"Constraints violated ({second})! For more information, run with "
            f'TORCH_LOGS="+dynamic".\n  - The values of {second} = L[\'{pb.target}\'].size()'
            f"[{db}] and {first} = L['{pa.target}'].size()[{da}] must always be equal.\n"
            f"Suggested fixes:\n  {second} = {first}"
        )
    holds = op(sa, sb)
    guard = SizeGuard(op if holds else _NEGATED[op], (pa.target, da), (pb.target, db))
    dims = {(n, d): dim for n, d, dim, _ in found}
    if guard.op in (operator.lt, operator.gt):  # x > y >= 2: x >= 3, as torch's ranges
        (bp, bd), small = ((pb, db), (pa, da)) if guard.op is operator.lt else ((pa, da), (pb, db))
        big, lo = dims[(bp.target, bd)], max(dims[(small[0].target, small[1])].min, 2) + 1
        if getattr(big, "hinted", False):
            big.min = max(big.min, lo)
        elif big.min < lo:
            raise _range_error(bp.target, bd, big, lo, big.max)
    return outcome, guard


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


def _resized(t, d, size):
    """``t`` with dim ``d`` grown (its leading slices repeated) or cut to ``size``: an input of
    another size with the example's data, so numbers read from it keep their values."""
    import ember

    t = t.detach()
    n = t.size(d)
    if size <= n:
        return t.narrow(d, 0, size).contiguous()
    parts = [t]
    while n < size:
        k = min(t.size(d), size - n)
        parts.append(t.narrow(d, 0, k))
        n += k
    return ember.cat(parts, d)


def _other_size(dim, size):
    """A size in ``dim``'s range other than the example's ``size`` (above it where the range
    allows: a check such as ``n <= y.shape[0]`` on a number read from data still holds), never
    0 or 1 (torch specializes those); None if the range has none."""
    hi = dim.max if dim.max is not None else (1 << 62)
    lo = max(dim.min or 0, 2)
    for other in (size + 1, size - 1):
        if lo <= other <= hi and other != size:
            return other
    return None


def _runs(parts, users):
    """Whether the captured graph runs on the user inputs ``users`` (by name); buffers are
    copies and the random state is restored, so probing changes nothing."""
    import ember

    from .graph_signature import InputKind

    args = []
    state, constants = parts["state_dict"], parts["constants"]
    for spec in parts["graph_signature"].input_specs:
        if spec.kind == InputKind.USER_INPUT:
            args.append(users[spec.arg.name])
        elif spec.kind == InputKind.BUFFER:
            args.append(state[spec.target].clone())
        else:
            value = state.get(spec.target, constants.get(spec.target))
            args.append(value.clone() if _is_tensor(value) else value)
    rng = ember.get_rng_state()
    try:
        with ember.no_grad():
            parts["graph_module"](*args)
        return True
    except Exception as e:  # a size clash raises whatever the op raises
        # a check on a number read from data is the program's own assertion, not a size clash
        return str(e).startswith("Runtime assertion failed")
    finally:
        ember.set_rng_state(rng)


def op_specialized(parts, dims, user_tensors):
    """The dims marked dynamic that an op of the captured program ``parts`` fixes (a view to a
    constant shape, a matmul or linear contracting with a static weight, broadcasting or cat
    against a static tensor, conv's channels): the graph is run with each root Dim (a derived
    dim follows its root) at another size, all at once first (one run when none is fixed), then
    one at a time. One marked ``Dim.AUTO`` is made static in ``parts``, as torch's; for any
    other, UserError in torch's words (else None)."""
    groups = {}  # root Dim name -> (root Dim, [(input, dim index, Dim)])
    for name, spec in dims.items():
        if name not in user_tensors:
            continue
        for d, dim in spec.items():
            root = getattr(dim, "root", dim)
            groups.setdefault(root.__name__, (root, []))[1].append((name, d, dim))
    sizes = {}  # root name -> the size probed
    for key, (root, where) in groups.items():
        name, d, dim = where[0]
        size = user_tensors[name].size(d)
        size = dim.root_size(size) if dim is not root else size
        other = _other_size(root, size) if size is not None else None
        if other is not None:
            sizes[key] = other
    if not sizes or not set(parts["graph_signature"].user_inputs) <= set(user_tensors):
        return None  # nested inputs (their placeholders are named apart): not probed

    def probe(keys):
        inputs = dict(user_tensors)
        for key in keys:
            root = groups[key][0]
            for name, d, dim in groups[key][1]:
                size = sizes[key] if dim is root else dim.a * sizes[key] + dim.b
                inputs[name] = _resized(inputs[name], d, size)
        return _runs(parts, inputs)

    all_run = probe(list(sizes))
    # plain roots probed by one step (+1 or -1): only these can be tied, equal or at an offset
    # (``x[1:] + y``: x's size is y's + 1)
    peers, example = {}, {}
    for key, (root, where) in groups.items():
        if key in sizes and all(dim is root for _, _, dim in where):
            name, d, _ = where[0]
            example[key] = user_tensors[name].size(d)
            peers.setdefault(sizes[key] - example[key], []).append(key)
    tied_keys = {key for keys in peers.values() if len(keys) > 1 for key in keys}
    failed = [key for key in sizes if (not all_run or key in tied_keys) and not probe([key])]
    if all_run and not failed:
        return None
    classes = _tied(peers, failed, probe)
    shapes, ranges = parts["input_shapes"], parts["range_constraints"]
    error = _merge(classes, groups, shapes, ranges, example)
    if error is not None:
        return error
    tied = {key for keys in classes for key in keys}
    found = {}
    for key in [key for key in failed if key not in tied]:
        for name, d, dim in groups[key][1]:
            size = user_tensors[name].size(d)
            if getattr(dim, "auto", False):
                ranges.pop(dim.__name__, None)
                for n, dims_of in shapes.items():
                    shapes[n] = [size if s == dim.__name__ else s for s in dims_of]
            else:
                found.setdefault(dim.__name__, size)
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


def _tied(peers, failed, probe):
    """Classes of root Dims an op ties equal (``x + y``): each fails when changed alone and runs
    when changed with the others of its class (all of one example size)."""
    classes = []
    for keys in peers.values():
        left = [key for key in keys if key in failed]
        if len(left) > 1 and probe(left):
            classes.append(left)
            continue
        while len(left) > 1:
            first = left.pop(0)
            partners = [key for key in left if probe([first, key])]
            if partners:
                classes.append([first, *partners])
                left = [key for key in left if key not in partners]
    return classes


def _merge(classes, groups, shapes, ranges, example):
    """Roots tied by an op become one, as torch's: in a class of equal sizes a ``Dim.AUTO``/
    ``Dim.DYNAMIC`` takes the class's first named Dim (else its first Dim); a size at an offset
    from the class's smallest becomes that root plus the offset (``s17 + 1``); the ranges are
    intersected. Two named Dims raise torch's UserError."""
    problems = []
    for keys in classes:
        dims = [groups[key][0] for key in keys]
        named = [dim for dim in dims if not getattr(dim, "hinted", False)]
        smallest = min(example[key] for key in keys)
        lowest = [dim for dim in dims if example[dim.__name__] == smallest]
        kept = next((dim for dim in named if dim in lowest), lowest[0])
        for dim in named:
            if dim is not kept:
                problems.append((dim, kept, example[dim.__name__] - smallest))
        if len(named) > 1:
            continue
        lo, hi = ranges.get(kept.__name__, (kept.min, kept.max))
        shifted = {}
        for dim in dims:
            if dim is kept:
                continue
            b = example[dim.__name__] - smallest
            dlo, dhi = ranges.pop(dim.__name__, (dim.min, dim.max))
            lo, hi = max(lo, dlo - b), min(hi, dhi - b if dhi < _UNBOUNDED else dhi)
            name = kept.__name__ if b == 0 else f"{kept.__name__} + {b}"
            if b:
                shifted[name] = b
            for n, dims_of in shapes.items():
                shapes[n] = [name if s == dim.__name__ else s for s in dims_of]
        ranges[kept.__name__] = (lo, hi)
        for name, b in shifted.items():
            ranges[name] = (lo + b, hi + b if hi < _UNBOUNDED else hi)
    if not problems:
        return None
    names = sorted({dim.__name__ for dim, _, _ in problems})
    lines = [f"Constraints violated ({', '.join(names)})! For more information, run with "
             'TORCH_LOGS="+dynamic".']  # fmt: skip
    fixes = []
    for dim, kept, b in problems:
        (name, d, _), (kname, kd, _) = groups[dim.__name__][1][0], groups[kept.__name__][1][0]
        this, other = (
            f"{dim.__name__} = L['{name}'].size()[{d}]",
            f"{kept.__name__} = L['{kname}'].size()[{kd}]",
        )
        rel = kept.__name__ if b == 0 else f"{kept.__name__} + {b}"
        if b == 0:
            lines.append(f"  - The values of {this} and {other} must always be equal.")
        else:
            lines.append(
                f"  - The values of {this} must always be related to the values of {other} by "
                f"{dim.__name__} = {rel}."
            )
        fixes.append(f"  {dim.__name__} = {rel}")
    lines += ["Suggested fixes:", *fixes]
    return UserError("\n".join(lines))
