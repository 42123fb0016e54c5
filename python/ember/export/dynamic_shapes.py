"""Dim and the dynamic_shapes argument of ember.export.export (torch.export.Dim's API)."""

import inspect

__all__ = ["Dim", "dims", "ShapesCollection", "ConstraintViolationError", "AdditionalInputs"]

_INT_MAX = (1 << 63) - 1


class _Dim:
    """A named dynamic dimension with an inclusive range [min, max]."""

    def __init__(self, name, min=None, max=None):
        lo = 0 if min is None else int(min)
        hi = _INT_MAX if max is None else int(max)
        if hi <= lo:  # torch's check and words (a Dim of one size is Dim.STATIC's job)
            raise AssertionError(f"Cannot create Dim with inconsistent min={min}, max={max}")
        if not isinstance(name, str) or not name.isidentifier():
            raise AssertionError(f"Dim name must be a valid identifier, got {name}")
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
    # this one; the range follows the root's. Only increasing integer maps, as torch's.
    def _derive(self, a, b):
        return _DerivedDim(self, a, b)

    def __add__(self, other):
        if type(other) is not int:
            raise NotImplementedError(
                f"Attempted to add {other} to {self.__name__}, where an integer was expected. "
                f"{_LINEAR_ONLY}"
            )
        return self._derive(1, other)

    def __radd__(self, other):
        return self + other

    def __sub__(self, other):
        if type(other) is not int:
            raise NotImplementedError(
                f"Attempted to subtract {other} from {self.__name__}, where an integer was "
                f"expected. {_LINEAR_ONLY}"
            )
        return self._derive(1, -other)

    def __rsub__(self, other):
        raise NotImplementedError(f"Attempted to negate {self.__name__}. {_LINEAR_ONLY}")

    def __mul__(self, other):
        if type(other) is not int or other <= 0:
            raise NotImplementedError(
                f"Attempted to multiply {other} with {self.__name__}, where a positive integer "
                f"was expected. {_LINEAR_ONLY}"
            )
        return self._derive(other, 0)

    def __rmul__(self, other):
        return self * other


_LINEAR_ONLY = "(Only increasing linear operations with integer coefficients are supported.)"


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

    # The range is read when export uses the dim, so a derived dim below 0 is reported there,
    # as torch's (``d - 1`` for a root with min=0 is a valid expression until then).
    @property
    def min(self):
        lo = self.a * self.root.min + self.b
        if lo < 0:
            raise AssertionError(
                f"Expected derived min value of {self.__name__} to be >= 0. Please specify an "
                f"appropriate min value for {self.root.__name__} (currently {self.root.min})."
            )
        return lo

    @property
    def max(self):
        if self.root.max == _INT_MAX:
            return _INT_MAX
        hi = self.a * self.root.max + self.b
        if hi > _INT_MAX - 1:
            raise AssertionError(
                f"Expected derived max value of {self.__name__} to be <= {_INT_MAX - 1}. Please "
                f"specify an appropriate max value for {self.root.__name__} (currently "
                f"{self.root.max})."
            )
        return hi

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
    for name, t in zip(names, tensors):
        spec = _spec_of(by_name.get(name), t.dim(), name)
        for d, dim in list(spec.items()):
            size = t.size(d)
            if getattr(dim, "auto", False) and size < 2:
                del spec[d]  # torch's Dim.AUTO on an example of size 0 or 1: that size
                continue
            if not isinstance(dim, _DerivedDim) and not dim.min <= size <= dim.max:
                raise ConstraintViolationError(
                    f"{size} not in range [{dim.min}, {dim.max}]: export: the example size "
                    f"{size} of {name}.shape[{d}] is outside the range [{dim.min}, {dim.max}] "
                    f"of {dim!r}"
                )
        if spec:
            out[name] = spec
    _check_examples(out, dict(zip(names, tensors)))
    return out


def _check_examples(spec, tensors):
    """The example sizes agree with the Dims as torch checks them: a root Dim's value is its
    first plain use's size (another plain use must be equal), then each derived dim must be
    its expression of that value; a derived dim whose root no input has fixes the root."""
    from .._dynamo.exc import UserError

    roots = {}  # root name -> (size, source)
    uses = [(f"L['{n}'].size()[{d}]", dim, tensors[n].size(d)) for n, s in spec.items()
            for d, dim in s.items()]  # fmt: skip
    order = [source for source, _, _ in uses]
    for source, dim, size in uses:
        if isinstance(dim, _DerivedDim):
            continue
        prev = roots.setdefault(dim.__name__, (size, source))
        if prev[0] != size:
            raise UserError(f"{source} = {size} is not equal to {prev[1]} = {prev[0]}")
    for source, dim, size in uses:
        if not isinstance(dim, _DerivedDim):
            continue
        root, lo = dim.root, dim.min  # (raises torch's error for a range reaching below 0)
        if root.__name__ not in roots:
            value = dim.root_size(size)
            if value is not None and root.min <= value <= root.max and lo <= size:
                roots[root.__name__] = (value, source)
                continue
            raise ConstraintViolationError(
                f"export: the example size {size} of {source} is not {dim.__name__} for any "
                f"{root.__name__} in [{root.min}, {root.max}]"
            )
        value, first = roots[root.__name__]
        if dim.a * value + dim.b != size:
            text = (
                f"Expected input {source} to be equal to {dim.__name__}, where "
                f"{root.__name__} = {value}, but got {size}"
            )
            # torch checks a derived dim given before its root's input (UserError); one given
            # after it fails in the first op that meets the two sizes (a RuntimeError)
            before = order.index(source) < order.index(first)
            raise UserError(text) if before else ConstraintViolationError(text)


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
