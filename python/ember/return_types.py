"""The tuples with named fields that ops with several outputs return (torch.return_types).

torch's are C structseqs (as ``os.stat_result``), not namedtuples: a direct tuple subclass
built from one sequence, fields read-only, ``n_fields`` instead of ``_fields``, final. These
classes behave the same way so that code written against torch's (``type(r)(seq)`` rebuilds,
``__match_args__`` for the field names, pickling) works unchanged. ``X_out`` is the type an
op returns when it wrote into ``out=``, as torch's.
"""

import builtins


class _Field:
    """A read-only field: the tuple's item at `index`."""

    __slots__ = ("index", "name", "owner")

    def __init__(self, index, name, owner):
        self.index, self.name, self.owner = index, name, owner

    def __get__(self, obj, owner=None):
        return self if obj is None else tuple.__getitem__(obj, self.index)

    def __set__(self, obj, value):
        raise AttributeError("readonly attribute")

    def __delete__(self, obj):
        raise AttributeError("readonly attribute")

    def __repr__(self):
        return f"<member '{self.name}' of 'torch.return_types.{self.owner}' objects>"


class _StructSeq(tuple):
    __slots__ = ()

    def __new__(cls, sequence, dict=None):  # noqa: A002 (torch's keyword names)
        name = f"torch.return_types.{cls.__name__}()"
        try:
            items = tuple(sequence)
        except TypeError:
            raise TypeError("constructor requires a sequence") from None
        if dict is not None and not isinstance(dict, builtins.dict):
            raise TypeError(f"{name} takes a dict as second arg, if any")
        if len(items) != cls.n_fields:
            raise TypeError(f"{name} takes a {cls.n_fields}-sequence ({len(items)}-sequence given)")
        return tuple.__new__(cls, items)

    def __init_subclass__(cls, **kwargs):
        if cls.__base__ is not _StructSeq:
            raise TypeError(
                f"type 'torch.return_types.{cls.__base__.__name__}' is not an acceptable base type"
            )
        super().__init_subclass__(**kwargs)

    def __getattr__(self, name):  # only reached for a name that is not a field
        raise AttributeError(
            f"'torch.return_types.{type(self).__name__}' object has no attribute '{name}'"
        )

    def __setattr__(self, name, value):
        getattr(self, name)  # a field's descriptor refuses by itself; others are unknown
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        getattr(self, name)
        object.__delattr__(self, name)

    def __repr__(self):
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self.__match_args__, self))
        return f"torch.return_types.{type(self).__name__}(\n{body})"

    def __reduce__(self):
        return type(self), (tuple(self), {})


def _struct(name, fields):
    ns = {"__slots__": (), "__module__": __name__, "__qualname__": name, "__doc__": None}
    ns.update({f: _Field(i, f, name) for i, f in enumerate(fields)})
    ns.update(__match_args__=tuple(fields), n_fields=len(fields), n_sequence_fields=len(fields))
    ns["n_unnamed_fields"] = 0
    return type(name, (_StructSeq,), ns)


_FIELDS = {
    "aminmax": "min max",
    "cummax": "values indices",
    "cummin": "values indices",
    "frexp": "mantissa exponent",
    "geqrf": "a tau",
    "histogram": "hist bin_edges",
    "histogramdd": "hist bin_edges",
    "kthvalue": "values indices",
    "linalg_cholesky_ex": "L info",
    "linalg_eig": "eigenvalues eigenvectors",
    "linalg_eigh": "eigenvalues eigenvectors",
    "linalg_inv_ex": "inverse info",
    "linalg_ldl_factor": "LD pivots",
    "linalg_ldl_factor_ex": "LD pivots info",
    "linalg_lstsq": "solution residuals rank singular_values",
    "linalg_lu": "P L U",
    "linalg_lu_factor": "LU pivots",
    "linalg_lu_factor_ex": "LU pivots info",
    "linalg_qr": "Q R",
    "linalg_slogdet": "sign logabsdet",
    "linalg_solve_ex": "result info",
    "linalg_svd": "U S Vh",
    "lu_unpack": "P L U",
    "max": "values indices",
    "median": "values indices",
    "min": "values indices",
    "mode": "values indices",
    "nanmedian": "values indices",
    "qr": "Q R",
    "slogdet": "sign logabsdet",
    "sort": "values indices",
    "svd": "U S V",
    "topk": "values indices",
    "triangular_solve": "solution cloned_coefficient",
}
# histogramdd and the private one have no out= form in torch
_NO_OUT = ("histogramdd",)

all_return_types = []
for _name, _fields in _FIELDS.items():
    all_return_types.append(_struct(_name, _fields.split()))
    if _name not in _NO_OUT:
        all_return_types.append(_struct(_name + "_out", _fields.split()))
all_return_types.append(_struct("_lu_with_info", ["LU", "pivots", "info"]))
globals().update((t.__name__, t) for t in all_return_types)
__all__ = ["all_return_types"] + [t.__name__ for t in all_return_types if t.__name__[0] != "_"]


def out_type(kind):
    """The type an op with result type `kind` returns when it wrote into out= (torch's X_out)."""
    if not isinstance(kind, type) or not issubclass(kind, _StructSeq):
        return kind
    return globals().get(kind.__name__ + "_out", kind)
