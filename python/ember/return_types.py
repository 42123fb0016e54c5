"""Named tuples returned by ops with several outputs (torch.return_types)."""

from collections import namedtuple

max = namedtuple("max", ["values", "indices"])  # noqa: A001
min = namedtuple("min", ["values", "indices"])  # noqa: A001
sort = namedtuple("sort", ["values", "indices"])
topk = namedtuple("topk", ["values", "indices"])
kthvalue = namedtuple("kthvalue", ["values", "indices"])
median = namedtuple("median", ["values", "indices"])
mode = namedtuple("mode", ["values", "indices"])
cummax = namedtuple("cummax", ["values", "indices"])
cummin = namedtuple("cummin", ["values", "indices"])
var_mean = namedtuple("var_mean", ["var", "mean"])  # torch returns a plain tuple; fields help reading
std_mean = namedtuple("std_mean", ["std", "mean"])
aminmax = namedtuple("aminmax", ["min", "max"])
nanmedian = namedtuple("nanmedian", ["values", "indices"])
frexp = namedtuple("frexp", ["mantissa", "exponent"])
linalg_slogdet = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
slogdet = namedtuple("slogdet", ["sign", "logabsdet"])
linalg_qr = namedtuple("linalg_qr", ["Q", "R"])
linalg_svd = namedtuple("linalg_svd", ["U", "S", "Vh"])
svd = namedtuple("svd", ["U", "S", "V"])
linalg_eigh = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
linalg_lstsq = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
linalg_lu_factor = namedtuple("linalg_lu_factor", ["LU", "pivots"])
linalg_cholesky_ex = namedtuple("linalg_cholesky_ex", ["L", "info"])
linalg_inv_ex = namedtuple("linalg_inv_ex", ["inverse", "info"])
triangular_solve = namedtuple("triangular_solve", ["solution", "cloned_coefficient"])
lu_unpack = namedtuple("lu_unpack", ["P", "L", "U"])
linalg_lu = namedtuple("linalg_lu", ["P", "L", "U"])
histogram = namedtuple("histogram", ["hist", "bin_edges"])
