#pragma once
// Matrix products: matmul with PyTorch's broadcasting rules, and the BLAS-like family.
// float32/float64 run on OpenBLAS; other numeric dtypes on a blocked loop (cpu/gemm.cpp).
#include <string>

#include "ember/core/tensor.h"

namespace ember {

/// torch.matmul: dot, mv, mm, or a batched product with broadcast batch dims.
Tensor matmul(const Tensor& self, const Tensor& other);
/// (n, m) @ (m, p); both operands of one dtype.
Tensor mm(const Tensor& self, const Tensor& mat2);
/// (b, n, m) @ (b, m, p), batch sizes equal (no broadcasting, as in PyTorch).
Tensor bmm(const Tensor& self, const Tensor& mat2);
/// (n, m) @ (m,).
Tensor mv(const Tensor& self, const Tensor& vec);
/// Inner product of two 1-d tensors of one dtype and length.
Tensor dot(const Tensor& self, const Tensor& other);
/// Outer product of two 1-d tensors (dtypes promote, bool allowed).
Tensor outer(const Tensor& self, const Tensor& vec2);
/// beta * self + alpha * (mat1 @ mat2); self broadcasts; beta = 0 ignores self (NaN included).
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta = 1,
             const Scalar& alpha = 1);
/// beta * self + alpha * bmm(batch1, batch2).
Tensor baddbmm(const Tensor& self, const Tensor& batch1, const Tensor& batch2,
               const Scalar& beta = 1, const Scalar& alpha = 1);

}  // namespace ember
