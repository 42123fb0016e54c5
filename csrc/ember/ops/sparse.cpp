// Argument checks of the sparse products; the loops are in cpu/sparse.cpp.
#include "ember/ops/sparse.h"

#include "ember/ops/copy.h"
#include "ember/ops/creation.h"
#include "ember/schema/sparse.h"

namespace ember {

namespace {

void check_index(const Tensor& t, const char* op, const char* what) {
  EMBER_CHECK(t.dim() == 1 && t.dtype() == kLong, op, ": expected ", what,
              " to be a 1-D int64 tensor; got ", t.dim(), "-D ", scalar_type_name(t.dtype()));
}

void check_values(const Tensor& values, const Tensor& dense, const char* op) {
  EMBER_CHECK(values.dim() == 1, op, ": expected 1-D values; got ", values.dim(), "-D");
  EMBER_CHECK(dense.dim() == 2, op, ": expected a 2-D dense operand; got ", dense.dim(), "-D");
  EMBER_CHECK(
      values.dtype() == dense.dtype() && (dense.dtype() == kFloat || dense.dtype() == kDouble), op,
      ": expected float32 or float64 values and dense operand of one dtype; got ",
      scalar_type_name(values.dtype()), " and ", scalar_type_name(dense.dtype()));
}

}  // namespace

Tensor _sparse_csr_mm(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values,
                      const Tensor& dense) {
  const char* op = "_sparse_csr_mm";
  check_index(crow_indices, op, "crow_indices");
  check_index(col_indices, op, "col_indices");
  check_values(values, dense, op);
  EMBER_CHECK(crow_indices.numel() >= 1, op, ": expected crow_indices of at least 1 element");
  EMBER_CHECK(col_indices.numel() == values.numel(), op,
              ": expected as many col_indices as values; got ", col_indices.numel(), " and ",
              values.numel());
  return op::_sparse_csr_mm.call(contiguous(crow_indices), contiguous(col_indices),
                                 contiguous(values), contiguous(dense));
}

Tensor _sparse_sampled_dot(const Tensor& rows, const Tensor& cols, const Tensor& a,
                           const Tensor& b) {
  const char* op = "_sparse_sampled_dot";
  check_index(rows, op, "rows");
  check_index(cols, op, "cols");
  EMBER_CHECK(rows.numel() == cols.numel(), op, ": expected as many rows as cols; got ",
              rows.numel(), " and ", cols.numel());
  EMBER_CHECK(a.dim() == 2 && b.dim() == 2 && a.size(1) == b.size(1), op,
              ": expected 2-D operands with equal rows; got ", a.sizes(), " and ", b.sizes());
  EMBER_CHECK(a.dtype() == b.dtype() && (a.dtype() == kFloat || a.dtype() == kDouble), op,
              ": expected float32 or float64 operands of one dtype; got ",
              scalar_type_name(a.dtype()), " and ", scalar_type_name(b.dtype()));
  return op::_sparse_sampled_dot.call(contiguous(rows), contiguous(cols), contiguous(a),
                                      contiguous(b));
}

}  // namespace ember
