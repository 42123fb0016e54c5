#pragma once
// Kernels that other kernels call directly (the fused RNN layer runs its GEMMs and sums through
// these, LAPACK's results mask a triangle with where): the same code the dispatcher reaches,
// without going back up through ops.
#include "ember/core/tensor.h"

namespace ember::cpu {

/// self @ mat2 (2-d), as the "mm" kernel.
Tensor mm(const Tensor& self, const Tensor& mat2);
/// self + mat1 @ mat2 (self broadcast to the product's shape), as the "addmm" kernel.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2);
/// The sum over `dims`, as the "sum" kernel.
Tensor sum(const Tensor& self, IntArrayRef dims);
/// cond ? a : b (cond bool, all three broadcast), as the "where" kernel.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b);

}  // namespace ember::cpu
