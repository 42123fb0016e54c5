// Checks and dispatch of the LAPACK-backed factorizations (kernels in cpu/lapack.cpp).
#include "ember/ops/linalg_lapack.h"

#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"
#include "ember/schema/linalg.h"

namespace ember {

namespace {

void check_matrix(const Tensor& a, const char* op, bool square) {
  EMBER_CHECK(a.dim() >= 2, op, ": expected a tensor with at least 2 dimensions; got ", a.dim());
  EMBER_CHECK(a.dtype() == kFloat || a.dtype() == kDouble, op,
              ": expected a float32 or float64 tensor; got ", dtype_name(a.dtype()));
  EMBER_CHECK(!square || a.size(-1) == a.size(-2), op,
              ": expected batches of square matrices; got ", a.size(-2), " by ", a.size(-1),
              " matrices");
}

void check_rhs(const Tensor& a, const Tensor& b, const char* op) {
  EMBER_CHECK(b.dim() == a.dim() && b.size(-2) == a.size(-2) && a.dtype() == b.dtype() &&
                  std::equal(a.sizes().begin(), a.sizes().end() - 2, b.sizes().begin()),
              op, ": expected B of A's batch shape, rows and dtype; got A ", a.sizes(), " ",
              dtype_name(a.dtype()), " and B ", b.sizes(), " ", dtype_name(b.dtype()));
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> linalg_lu_factor_ex(const Tensor& A) {
  check_matrix(A, "linalg.lu_factor", false);
  return op::linalg_lu_factor.call(A);
}

std::tuple<Tensor, Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B) {
  check_matrix(A, "linalg.solve", true);
  check_rhs(A, B, "linalg.solve");
  return op::linalg_solve.call(A, B);
}

std::tuple<Tensor, Tensor> linalg_cholesky_ex(const Tensor& A, bool upper) {
  check_matrix(A, "linalg.cholesky", true);
  return op::linalg_cholesky.call(A, upper);
}

std::tuple<Tensor, Tensor> linalg_qr(const Tensor& A, const std::string& mode) {
  check_matrix(A, "linalg.qr", false);
  EMBER_CHECK(mode == "reduced" || mode == "complete" || mode == "r",
              "linalg.qr: expected mode 'reduced', 'complete' or 'r'; got '", mode, "'");
  return op::linalg_qr.call(A, mode);
}

std::tuple<Tensor, Tensor, Tensor, Tensor> linalg_svd_ex(const Tensor& A, bool full_matrices,
                                                         bool compute_uv) {
  check_matrix(A, "linalg.svd", false);
  return op::linalg_svd.call(A, full_matrices, compute_uv);
}

std::tuple<Tensor, Tensor, Tensor> linalg_eigh_ex(const Tensor& A, bool upper, bool compute_v) {
  check_matrix(A, "linalg.eigh", true);
  return op::linalg_eigh.call(A, upper, compute_v);
}

std::tuple<Tensor, Tensor, Tensor> linalg_eig_ex(const Tensor& A, bool compute_v) {
  EMBER_CHECK(A.dim() >= 2, "linalg.eig: expected a tensor with at least 2 dimensions; got ",
              A.dim());
  EMBER_CHECK(A.dtype() == kFloat || A.dtype() == kDouble || is_complex(A.dtype()),
              "linalg.eig: expected a float, double or complex tensor; got ",
              dtype_name(A.dtype()));
  EMBER_CHECK(A.size(-1) == A.size(-2), "linalg.eig: expected batches of square matrices; got ",
              A.size(-2), " by ", A.size(-1), " matrices");
  return op::linalg_eig.call(A, compute_v);
}

Tensor linalg_solve_triangular_left(const Tensor& A, const Tensor& B, bool upper,
                                    bool unitriangular) {
  check_matrix(A, "linalg.solve_triangular", true);
  check_rhs(A, B, "linalg.solve_triangular");
  return op::linalg_solve_triangular.call(A, B, upper, unitriangular);
}

}  // namespace ember
