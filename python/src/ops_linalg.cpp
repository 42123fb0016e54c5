// Linear algebra (csrc/ember/ops/linalg.cpp, einsum.cpp, linalg_lapack.cpp): matrix products as
// ember.<op> and Tensor methods, einsum, and the LAPACK factorizations in ember._C._linalg that
// python/ember/linalg.py composes into ember.linalg.
#include "common.h"
#include "ember/ops/linalg_lapack.h"
#include "ember/ops/sparse.h"

namespace ember::py {

void bind_linalg(nb::module_& m) {
  auto cls = tensor_class();
  both(
      m, cls, "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); },
      {"matmul(input, other) -> Tensor",
       "Matrix product with numpy's rules: dot for vectors, batched products with broadcast "
       "batch dims for higher ranks."},
      nb::arg("other"));
  both(
      m, cls, "mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); },
      {"mm(input, mat2) -> Tensor", "The product of two matrices, (n, m) @ (m, p) -> (n, p)."},
      nb::arg("mat2"));
  both(
      m, cls, "bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); },
      {"bmm(input, mat2) -> Tensor",
       "Matrix products of two batches of the same size, (b, n, m) @ (b, m, p) -> (b, n, p)."},
      nb::arg("mat2"));
  both(
      m, cls, "mv", [](const Tensor& a, const Tensor& b) { return mv(a, b); },
      {"mv(input, vec) -> Tensor", "The product of a matrix and a vector."}, nb::arg("vec"));
  both(
      m, cls, "dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); },
      {"dot(input, other) -> Tensor", "The sum of the elementwise products of two 1-D tensors."},
      nb::arg("other"));
  both(
      m, cls, "inner",
      [](const Tensor& a, const Tensor& b) {
        return a.dim() == 1 && b.dim() == 1 ? dot(a, b) : matmul(a, matrix_transpose(b));
      },
      {"inner(input, other) -> Tensor", "Sums products over the last dim of both operands."},
      nb::arg("other"));
  both(
      m, cls, "outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); },
      {"outer(input, vec2) -> Tensor",
       "The matrix of all products input[i] * vec2[j] of two vectors."},
      nb::arg("vec2"));
  both(
      m, cls, "ger", [](const Tensor& a, const Tensor& b) { return outer(a, b); },
      {"ger(input, vec2) -> Tensor", "Another name for outer()."}, nb::arg("vec2"));
  both(
      m, cls, "addmm",
      [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
        return addmm(s, a, b, beta, alpha);
      },
      {"addmm(input, mat1, mat2, *, beta=1, alpha=1) -> Tensor",
       "beta * input + alpha * (mat1 @ mat2), with input broadcast to the product's shape."},
      nb::arg("mat1"), nb::arg("mat2"), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  both(
      m, cls, "baddbmm",
      [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
        return baddbmm(s, a, b, beta, alpha);
      },
      {"baddbmm(input, batch1, batch2, *, beta=1, alpha=1) -> Tensor",
       "beta * input + alpha * bmm(batch1, batch2)."},
      nb::arg("batch1"), nb::arg("batch2"), nb::kw_only(), nb::arg("beta") = 1,
      nb::arg("alpha") = 1);
  m.def(
      "einsum",
      [](const std::string& eq, nb::args ops) {
        std::vector<Tensor> v = ops.size() == 1 && !nb::isinstance<Tensor>(ops[0])
                                    ? tensor_seq(ops[0], "einsum")
                                    : tensor_seq(ops, "einsum");
        return einsum(eq, v);
      },
      nb::arg("equation"), nb::arg("operands"),
      doc("einsum(equation, *operands) -> Tensor",
          "Sums products of the operands over the indices that the Einstein-notation equation "
          "leaves out of its output (e.g. 'ij,jk->ik')."));

  // The kernels behind ember.sparse's products (python/ember/sparse/): plain index and value
  // arrays in, a dense tensor out, no autograd (Note [Sparse autograd]).
  m.def("_sparse_csr_mm", &_sparse_csr_mm, nb::arg("crow_indices"), nb::arg("col_indices"),
        nb::arg("values"), nb::arg("dense"),
        doc("_sparse_csr_mm(crow_indices, col_indices, values, dense) -> Tensor",
            "The product of a CSR matrix, given by its arrays, with a dense matrix."));
  m.def("_sparse_sampled_dot", &_sparse_sampled_dot, nb::arg("rows"), nb::arg("cols"), nb::arg("a"),
        nb::arg("b"),
        doc("_sparse_sampled_dot(rows, cols, a, b) -> Tensor",
            "out[j] = dot(a[rows[j]], b[cols[j]]): a @ b.T sampled at a sparse pattern."));

  nb::module_ la = m.def_submodule("_linalg", "LAPACK factorizations behind ember.linalg");
  la.def("lu_factor_ex", &linalg_lu_factor_ex, nb::arg("A"),
         doc("lu_factor_ex(A) -> (LU, pivots, info)",
             "LU factorization with partial pivoting; pivots are 1-based, as LAPACK's."));
  la.def("solve_ex", &linalg_solve_ex, nb::arg("A"), nb::arg("B"),
         doc("solve_ex(A, B) -> (X, info)", "Solves A X = B for square (batched) A."));
  la.def("cholesky_ex", &linalg_cholesky_ex, nb::arg("A"), nb::arg("upper"),
         doc("cholesky_ex(A, upper) -> (L, info)",
             "The Cholesky factor of a symmetric positive-definite A (upper or lower)."));
  la.def("qr", &linalg_qr, nb::arg("A"), nb::arg("mode"),
         doc("qr(A, mode) -> (Q, R)",
             "QR factorization, mode 'reduced', 'complete' or 'r' (Q empty)."));
  la.def("svd_ex", &linalg_svd_ex, nb::arg("A"), nb::arg("full_matrices"), nb::arg("compute_uv"),
         doc("svd_ex(A, full_matrices, compute_uv) -> (U, S, Vh, info)",
             "Singular value decomposition; U and Vh are empty without compute_uv."));
  la.def("eigh_ex", &linalg_eigh_ex, nb::arg("A"), nb::arg("upper"), nb::arg("compute_v"),
         doc("eigh_ex(A, upper, compute_v) -> (L, Q, info)",
             "Ascending eigenvalues (and eigenvectors) of a symmetric A read from one triangle."));
  la.def("eig_ex", &linalg_eig_ex, nb::arg("A"), nb::arg("compute_v"),
         doc("eig_ex(A, compute_v) -> (L, V, info)",
             "Complex eigenvalues and right eigenvectors (unit-norm columns) of a general A."));
  la.def("solve_triangular_left", &linalg_solve_triangular_left, nb::arg("A"), nb::arg("B"),
         nb::arg("upper"), nb::arg("unitriangular"),
         doc("solve_triangular_left(A, B, upper, unitriangular) -> Tensor",
             "Solves A X = B for triangular A without a singularity check."));
}

}  // namespace ember::py
