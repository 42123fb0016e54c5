#pragma once
// Matrix products and LAPACK factorizations: operator declarations (Note [Op schemas] in
// dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(mm, "mm(Tensor self, Tensor mat2) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(bmm, "bmm(Tensor self, Tensor mat2) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(mv, "mv(Tensor self, Tensor vec) -> Tensor", Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(dot, "dot(Tensor self, Tensor tensor) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(
    addmm,
    "addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor",
    Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&));
EMBER_DECLARE_OP(baddbmm,
                 "baddbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar "
                 "alpha=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const Scalar&, const Scalar&));
EMBER_DECLARE_OP(linalg_lu_factor,
                 "linalg_lu_factor_ex(Tensor A) -> (Tensor LU, Tensor pivots, Tensor info)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&));
EMBER_DECLARE_OP(linalg_solve,
                 "linalg_solve_ex(Tensor A, Tensor B) -> (Tensor result, Tensor info)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(linalg_cholesky,
                 "linalg_cholesky_ex(Tensor self, bool upper=False) -> (Tensor L, Tensor info)",
                 std::tuple<Tensor, Tensor>(const Tensor&, bool));
EMBER_DECLARE_OP(linalg_qr, "linalg_qr(Tensor A, str mode=\"reduced\") -> (Tensor Q, Tensor R)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const std::string&));
EMBER_DECLARE_OP(linalg_svd,
                 "linalg_svd_ex(Tensor A, bool full_matrices=True, bool compute_uv=True) -> "
                 "(Tensor U, Tensor S, Tensor Vh, Tensor info)",
                 std::tuple<Tensor, Tensor, Tensor, Tensor>(const Tensor&, bool, bool));
EMBER_DECLARE_OP(linalg_eigh,
                 "linalg_eigh_ex(Tensor self, bool upper=False, bool compute_v=True) -> (Tensor "
                 "eigenvalues, Tensor eigenvectors, Tensor info)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, bool, bool));
EMBER_DECLARE_OP(linalg_eig,
                 "linalg_eig_ex(Tensor self, bool compute_v=True) -> (Tensor eigenvalues, Tensor "
                 "eigenvectors, Tensor info)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, bool));
EMBER_DECLARE_OP(linalg_solve_triangular,
                 "linalg_solve_triangular(Tensor self, Tensor B, bool upper, bool "
                 "unitriangular=False) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, bool, bool));

}  // namespace ember::op
