"""Dim and the dynamic_shapes argument of ember.export.export (torch.export.Dim's API)."""

import inspect

__all__ = ["Dim", "dims", "ShapesCollection", "ConstraintViolationError", "AdditionalInputs"]

_INT_MAX = (1 << 63) - 1


class _Dim:
    """A named dynamic dimension with an inclusive range [min, max]."""

    def __init__(self, name, min=None, max=None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Dim: expected a Python identifier as the name; got {name!r}")
        lo = 0 if min is None else int(min)
        hi = _INT_MAX if max is None else int(max)
        if hi <= lo:  # torch's check and words (a Dim of one size is Dim.STATIC's job)
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if lo < 0:
            raise ValueError(f"Dim {name}: expected 0 <= min; got min={lo}")
        self.__name__ = name
        self.min = lo
        self.max = hi

    def __repr__(self):
        bounds = []
        if self.min != 2:  # torch's repr leaves out only min=2
            bounds.append(f"min={self.min}")
        if self.max != _INT_MAX:
            bounds.append(f"max={self.max}")
        return f"Dim('{self.__name__}'{''.join(', ' + b for b in bounds)})"

    # Derived dims (torch's `2 * d`, `d + 1`): a * root + b, another input's size in terms of
    # this one; the range follows the root's.
    def _derive(self, a, b):
        if not isinstance(a, int) or not isinstance(b, int) or isinstance(a, bool):
            return NotImplemented
        return _DerivedDim(self, a, b)

    def __add__(self, other):
        return self._derive(1, other)

    __radd__ = __add__

    def __sub__(self, other):
        return self._derive(1, -other) if isinstance(other, int) else NotImplemented

    def __mul__(self, other):
        if not isinstance(other, int) or other <= 0:
            raise TypeError(f"Dim: expected a positive int factor; got {other!r}")
        return self._derive(other, 0)

    __rmul__ = __mul__


def _expr(root, a, b):
    text = root if a == 1 else f"{a}*{root}"
    return text if b == 0 else f"{text} {'+' if b > 0 else '-'} {abs(b)}"


class _DerivedDim(_Dim):
    """a * root + b for a root Dim: a dim whose size follows another's."""

    def __init__(self, root, a, b):
        if isinstance(root, _DerivedDim):  # a * (a0 * r + b0) + b
            root, a, b = root.root, a * root.a, a * root.b + b
        self.root, self.a, self.b = root, a, b
        self.__name__ = _expr(root.__name__, a, b)
        self.min = a * root.min + b
        self.max = _INT_MAX if root.max == _INT_MAX else a * root.max + b
        if self.min < 0:
            raise ValueError(
                f"Dim {self.__name__}: expected a non-negative minimum; got {self.min} (the "
                f"root Dim {root.__name__} has min={root.min})"
            )

    def root_size(self, size):
        """The root's size that gives this dim `size`, or None if none does."""
        q, r = divmod(size - self.b, self.a)
        return q if r == 0 else None

    def __repr__(self):
        return self.__name__


class _Auto:
    """Dim.AUTO / Dim.DYNAMIC / Dim.STATIC (torch's DimHint): a dynamic dim named after its
    input and position, or (STATIC) the example's size."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return f"DimHint({self.what})"


class ConstraintViolationError(RuntimeError, ValueError):
    """ConstraintViolationError(message)

    An example input outside the dynamic_shapes it was exported with (torch's class of the same
    name; a ValueError too, as ember raised before)."""


class ShapesCollection:
    """ShapesCollection()

    dynamic_shapes given per tensor rather than per argument: ``sc[tensor] = {0: Dim("b")}``,
    then ``export(..., dynamic_shapes=sc)`` (or ``sc.dynamic_shapes(model, args, kwargs)``)."""

    def __init__(self):
        self._shapes = {}

    def __setitem__(self, tensor, spec):
        self._shapes[id(tensor)] = (tensor, spec)

    def __getitem__(self, tensor):
        return self._shapes[id(tensor)][1]

    def __contains__(self, tensor):
        return id(tensor) in self._shapes

    def dynamic_shapes(self, m, args, kwargs=None):
        """dynamic_shapes(m, args, kwargs=None) -> dict

        The per-argument dynamic_shapes of these tensors for ``m`` called on args/kwargs."""
        fn = getattr(m, "forward", m)
        bound = inspect.signature(fn).bind(*args, **(kwargs or {}))
        return {
            name: self._shapes[id(v)][1]
            for name, v in bound.arguments.items()
            if id(v) in self._shapes
        }


class _DimFactory:
    """Dim(name, *, min=None, max=None)

    A symbolic size: a dim of an example input marked with it is not fixed in the exported
    graph, which accepts any size in [min, max] there. ``Dim.AUTO``/``Dim.DYNAMIC`` mark a
    dynamic dim without naming it; ``Dim.STATIC`` (or None) keeps the example's size."""

    AUTO = _Auto("AUTO")
    DYNAMIC = _Auto("DYNAMIC")
    STATIC = _Auto("STATIC")

    def __call__(self, name, *, min=None, max=None):
        return _Dim(name, min=min, max=max)

    def __repr__(self):
        return "Dim"

    def __instancecheck__(self, obj):
        return isinstance(obj, _Dim)


Dim = _DimFactory()


def dims(*names, min=None, max=None):
    """dims(*names, min=None, max=None) -> tuple[Dim, ...]

    Several Dims with the same range."""
    return tuple(Dim(n, min=min, max=max) for n in names)


def _spec_of(spec, ndim, input_name):
    """{dim index: _Dim} for one input's dynamic_shapes entry."""
    if spec is None:
        return {}
    if isinstance(spec, dict):
        items = spec.items()
    elif isinstance(spec, (list, tuple)):
        if len(spec) != ndim:
            raise ValueError(
                f"export: dynamic_shapes for '{input_name}': expected {ndim} entries (one per dim);"
                f" got {len(spec)}"
            )
        items = enumerate(spec)
    else:
        raise ValueError(
            f"export: dynamic_shapes for '{input_name}': expected a dict or a tuple; "
            f"got {type(spec).__name__}"
        )
    out = {}
    for d, dim in items:
        if dim is None or dim is _DimFactory.STATIC:
            continue
        if not isinstance(d, int) or not -ndim <= d < ndim:
            raise ValueError(f"export: dynamic_shapes for '{input_name}': bad dim index {d!r}")
        d %= ndim
        if isinstance(dim, _Auto):
            auto = dim is _DimFactory.AUTO
            dim = _Dim(f"s_{input_name}_{d}", min=2)  # torch's range: sizes 0 and 1 specialize
            dim.auto = auto  # static again if the code specializes it
            dim.hinted = True  # unnamed: merged into another dim an op ties it to
        if not isinstance(dim, _Dim):
            raise ValueError(
                f"export: dynamic_shapes for '{input_name}' dim {d}: expected a Dim; got {dim!r}"
            )
        out[d] = dim
    return out


def resolve(dynamic_shapes, arg_names, names, tensors):
    """{input name: {dim: _Dim}} for the user's tensor inputs (``names``, of forward's arguments
    ``arg_names``), checking the examples' sizes."""
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, ShapesCollection):
        dynamic_shapes = {
            n: dynamic_shapes[t] for n, t in zip(names, tensors) if t in dynamic_shapes
        }
    if isinstance(dynamic_shapes, dict):
        by_name = dict(dynamic_shapes)
        unknown = set(by_name) - set(names)
        if unknown:
            from .._dynamo.exc import UserError

            raise UserError(
                "When `dynamic_shapes` is specified as a dict, its top-level keys must be the arg "
                f"names {list(arg_names)} of `inputs`, but here they are {list(by_name)}. "
                "Alternatively, you could also ignore arg names entirely and specify "
                "`dynamic_shapes` as a list/tuple matching `inputs`."
            )
    elif isinstance(dynamic_shapes, (list, tuple)):
        if len(dynamic_shapes) != len(names):
            raise ValueError(
                f"export: dynamic_shapes has {len(dynamic_shapes)} entries; expected one per "
                f"tensor input ({len(names)})"
            )
        by_name = dict(zip(names, dynamic_shapes))
    else:
        raise ValueError("export: dynamic_shapes must be a dict, a tuple or a list")
    out = {}
    seen = {}
    for name, t in zip(names, tensors):
        spec = _spec_of(by_name.get(name), t.dim(), name)
        for d, dim in list(spec.items()):
            size = t.size(d)
            if getattr(dim, "auto", False) and size < 2:
                del spec[d]  # torch's Dim.AUTO on an example of size 0 or 1: that size
                continue
            where = f"{name}.shape[{d}]"
            if not dim.min <= size <= dim.max:
                raise ConstraintViolationError(
                    f"{size} not in range [{dim.min}, {dim.max}]: export: the example size "
                    f"{size} of {where} is outside the range [{dim.min}, {dim.max}] of {dim!r}"
                )
            root, root_size = dim, size
            if isinstance(dim, _DerivedDim):
                root, root_size = dim.root, dim.root_size(size)
                if root_size is None or not root.min <= root_size <= root.max:
                    raise ConstraintViolationError(
                        f"export: the example size {size} of {where} is not {dim.__name__} for "
                        f"any {root.__name__} in [{root.min}, {root.max}]"
                    )
            prev = seen.get(root.__name__)
            if prev is not None and prev[0] != root_size:
                raise ConstraintViolationError(
                    f"export: Dim '{root.__name__}' has two example sizes: {prev[0]} "
                    f"({prev[1]}) and {root_size} ({where}"
                    + (f", as {dim.__name__})" if dim is not root else ")")
                )
            seen[root.__name__] = (root_size, where)
        if spec:
            out[name] = spec
    return out


class AdditionalInputs:
    """AdditionalInputs()

    More example inputs for export's ``dynamic_shapes``: ``add(args, kwargs=None)`` records one
    call's inputs; ``dynamic_shapes(m, args, kwargs=None)`` marks each tensor dim whose size
    differs across them (``Dim.DYNAMIC``; others None), in the argument structure export takes;
    ``verify(ep)`` runs the program on each recorded input."""

    def __init__(self):
        self._examples = []

    def add(self, args, kwargs=None):
        """add(args, kwargs=None) -> None

        Records the inputs of one more example call."""
        if not isinstance(args, tuple):
            raise ValueError(f"AdditionalInputs.add: expected args to be a tuple; got {args!r}")
        self._examples.append((args, dict(kwargs or {})))

    def dynamic_shapes(self, m, args, kwargs=None):
        """dynamic_shapes(m, args, kwargs=None) -> dict

        Per argument of ``m``, the dims that vary across the recorded examples (and the
        given ``args``/``kwargs``), as export's ``dynamic_shapes``."""
        fn = m.forward if hasattr(m, "forward") else m
        sig = inspect.signature(fn)
        calls = [(args, dict(kwargs or {}))] + self._examples
        bound = [sig.bind(*a, **k).arguments for a, k in calls]
        return {name: _varying([b.get(name) for b in bound]) for name in bound[0]}

    def verify(self, ep):
        """verify(ep) -> None

        Runs ``ep.module()`` on each recorded input (raising where one does not fit)."""
        mod = ep.module()
        for args, kwargs in self._examples:
            mod(*args, **kwargs)


def _varying(values):
    import ember

    first = values[0]
    if isinstance(first, ember.Tensor):
        if not all(isinstance(v, ember.Tensor) and v.dim() == first.dim() for v in values):
            raise ValueError("AdditionalInputs: expected the examples to agree in rank")
        return tuple(
            Dim.DYNAMIC if len({v.size(d) for v in values}) > 1 else None
            for d in range(first.dim())
        )
    if isinstance(first, (list, tuple)):
        return type(first)(_varying([v[i] for v in values]) for i in range(len(first)))
    if isinstance(first, dict):
        return {k: _varying([v[k] for v in values]) for k in first}
    return None
