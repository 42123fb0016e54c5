"""Dim and the dynamic_shapes argument of ember.export.export (torch.export.Dim's API)."""

import inspect

__all__ = ["Dim", "dims"]

_INT_MAX = (1 << 63) - 1


class _Dim:
    """A named dynamic dimension with an inclusive range [min, max]."""

    def __init__(self, name, min=None, max=None):
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Dim: expected a Python identifier as the name; got {name!r}")
        lo = 0 if min is None else int(min)
        hi = _INT_MAX if max is None else int(max)
        if lo < 0 or hi < lo:
            raise ValueError(f"Dim {name}: expected 0 <= min <= max; got min={lo}, max={hi}")
        self.__name__ = name
        self.min = lo
        self.max = hi

    def __repr__(self):
        bounds = []
        if self.min:
            bounds.append(f"min={self.min}")
        if self.max != _INT_MAX:
            bounds.append(f"max={self.max}")
        return f"Dim('{self.__name__}'{''.join(', ' + b for b in bounds)})"


class _Auto:
    """Dim.AUTO / Dim.DYNAMIC: a dynamic dim named after its input and position."""

    def __init__(self, what):
        self.what = what

    def __repr__(self):
        return f"Dim.{self.what}"


class _DimFactory:
    """Dim(name, *, min=None, max=None)

    A symbolic size: a dim of an example input marked with it is not fixed in the exported
    graph, which accepts any size in [min, max] there. ``Dim.AUTO``/``Dim.DYNAMIC`` mark a
    dynamic dim without naming it; ``Dim.STATIC`` (or None) keeps the example's size."""

    AUTO = _Auto("AUTO")
    DYNAMIC = _Auto("DYNAMIC")
    STATIC = None

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
        if dim is None:
            continue
        if not isinstance(d, int) or not -ndim <= d < ndim:
            raise ValueError(f"export: dynamic_shapes for '{input_name}': bad dim index {d!r}")
        d %= ndim
        if isinstance(dim, _Auto):
            dim = _Dim(f"s_{input_name}_{d}")
        if not isinstance(dim, _Dim):
            raise ValueError(
                f"export: dynamic_shapes for '{input_name}' dim {d}: expected a Dim; got {dim!r}"
            )
        out[d] = dim
    return out


def resolve(dynamic_shapes, forward, names, tensors):
    """{input name: {dim: _Dim}} for the user's tensor inputs, checking the examples' sizes."""
    if dynamic_shapes is None:
        return {}
    if isinstance(dynamic_shapes, dict):
        by_name = dict(dynamic_shapes)
        unknown = set(by_name) - set(names)
        if unknown:
            try:
                params = list(inspect.signature(forward).parameters)
            except (TypeError, ValueError):
                params = names
            raise ValueError(
                f"export: dynamic_shapes names {sorted(unknown)}, which are not tensor inputs of "
                f"the function (its parameters: {params})"
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
        for d, dim in spec.items():
            size = t.size(d)
            if not dim.min <= size <= dim.max:
                raise ValueError(
                    f"export: the example size {size} of {name}.shape[{d}] is outside the range "
                    f"[{dim.min}, {dim.max}] of {dim!r}"
                )
            prev = seen.get(dim.__name__)
            if prev is not None and prev[0] != size:
                raise ValueError(
                    f"export: Dim '{dim.__name__}' has two example sizes: {prev[0]} "
                    f"({prev[1]}) and {size} ({name}.shape[{d}])"
                )
            seen[dim.__name__] = (size, f"{name}.shape[{d}]")
        if spec:
            out[name] = spec
    return out
