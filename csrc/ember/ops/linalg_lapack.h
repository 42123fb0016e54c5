#pragma once
// LAPACK-backed factorizations over batches of float/double matrices (..., m, n). They record no
// graph: ember.linalg (Python) composes them and writes their derivatives in public ops. Each
// returns LAPACK's per-matrix `info` (int32) so the caller can raise torch's error messages.
#include <string>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// LU with partial pivoting: (LU, 1-based pivots, info), as torch.linalg.lu_factor_ex.
std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A);
/// X with A X = B for square A (..., n, n) and B (..., n, k) of the same batch shape; and info.
std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B);
/// The lower (or upper) Cholesky factor of symmetric positive-definite A; and info.
std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper);
/// (Q, R) for mode "reduced", "complete" or "r" (Q is then empty).
std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode);
/// (U, S, Vh, info); U and Vh are empty unless compute_uv.
std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_svd_ex(const Tensor& A, bool full_matrices,
                                                         bool compute_uv);
/// Ascending eigenvalues and (if compute_v) eigenvectors of symmetric A from one triangle; info.
std::tuple<Tensor, Tensor, Tensor> linalg_eigh_ex(const Tensor& A, bool upper, bool compute_v);
/// Eigenvalues (complex) and right eigenvectors (complex columns, unit norm) of a general square
/// A, real or complex (LAPACK geev); no autograd.
std::tuple<Tensor, Tensor, Tensor> linalg_eig_ex(const Tensor& A, bool compute_v);
/// X with A X = B for triangular A (left side, no singularity check).
Tensor linalg_solve_triangular_left(const Tensor& A, const Tensor& B, bool upper,
                                    bool unitriangular);

}  // namespace ember
