"""Named tuples returned by ops with several outputs (torch.return_types)."""

from collections import namedtuple


def _struct(name, fields, plain=False):
    """A named tuple printed as torch prints its return types (plain: as a bare tuple, for the
    ops where torch returns one)."""

    def __repr__(self):
        if plain:
            return tuple.__repr__(self)
        body = ",\n".join(f"{f}={v!r}" for f, v in zip(self._fields, self))
        return f"torch.return_types.{name}(\n{body})"

    base = namedtuple(name, fields)
    return type(name, (base,), {"__slots__": (), "__repr__": __repr__, "__module__": __name__})


max = _struct("max", ["values", "indices"])  # noqa: A001
min = _struct("min", ["values", "indices"])  # noqa: A001
sort = _struct("sort", ["values", "indices"])
topk = _struct("topk", ["values", "indices"])
kthvalue = _struct("kthvalue", ["values", "indices"])
median = _struct("median", ["values", "indices"])
mode = _struct("mode", ["values", "indices"])
cummax = _struct("cummax", ["values", "indices"])
cummin = _struct("cummin", ["values", "indices"])
var_mean = _struct(
    "var_mean", ["var", "mean"], plain=True
)  # torch returns a plain tuple; fields help reading
std_mean = _struct("std_mean", ["std", "mean"], plain=True)
aminmax = _struct("aminmax", ["min", "max"])
nanmedian = _struct("nanmedian", ["values", "indices"])
frexp = _struct("frexp", ["mantissa", "exponent"])
linalg_slogdet = _struct("linalg_slogdet", ["sign", "logabsdet"])
slogdet = _struct("slogdet", ["sign", "logabsdet"])
linalg_qr = _struct("linalg_qr", ["Q", "R"])
qr = _struct("qr", ["Q", "R"])
linalg_svd = _struct("linalg_svd", ["U", "S", "Vh"])
svd = _struct("svd", ["U", "S", "V"])
linalg_eigh = _struct("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_eig = _struct("linalg_eig", ["eigenvalues", "eigenvectors"])
linalg_lstsq = _struct("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lu_factor = _struct("linalg_lu_factor", ["LU", "pivots"])
linalg_cholesky_ex = _struct("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex = _struct("linalg_inv_ex", ["inverse", "info"])
triangular_solve = _struct("triangular_solve", ["solution", "cloned_coefficient"])
lu_unpack = _struct("lu_unpack", ["P", "L", "U"])
linalg_lu = _struct("linalg_lu", ["P", "L", "U"])
histogram = _struct("histogram", ["hist", "bin_edges"])
geqrf = _struct("geqrf", ["a", "tau"])
histogramdd = _struct("histogramdd", ["hist", "bin_edges"])
