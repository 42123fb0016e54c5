#pragma once
// Kernels that other kernels call directly (the fused RNN layer runs its GEMMs and bias sums
// through these): the same code the dispatcher reaches, without going back up through ops.
#include "ember/core/tensor.h"

namespace ember::cpu {

/// self @ mat2 (2-d), as the "mm" kernel.
Tensor mm(const Tensor& self, const Tensor& mat2);
/// self + mat1 @ mat2 (self broadcast to the product's shape), as the "addmm" kernel.
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2);
/// The sum over `dims`, as the "sum" kernel.
Tensor sum(const Tensor& self, IntArrayRef dims);

}  // namespace ember::cpu
