#pragma once
// Products of a sparse matrix given by its index and value arrays (CSR or COO) with dense ones.
// No autograd here: python/ember/sparse/ records the graph over these (Note [Sparse autograd]).
#include "ember/core/tensor.h"

namespace ember {

/// The (nrows, n) product of the CSR matrix (crow_indices, col_indices, values) with the dense
/// (ncols, n) matrix `dense`; nrows is crow_indices.numel() - 1.
Tensor _sparse_csr_mm(const Tensor& crow_indices, const Tensor& col_indices, const Tensor& values,
                      const Tensor& dense);
/// out[j] = dot(a[rows[j]], b[cols[j]]) for 2-d a and b: the product a @ b^T sampled at the
/// pattern (rows, cols) (the gradient of a sparse matrix's values in sparse @ dense).
Tensor _sparse_sampled_dot(const Tensor& rows, const Tensor& cols, const Tensor& a,
                           const Tensor& b);

}  // namespace ember
