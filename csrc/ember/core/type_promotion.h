#pragma once
// PyTorch's dtype rules for elementwise ops: result_type, in-place casts, wrapped Python numbers.
// They are backend-independent, so public ops and kernels of every backend share them.
#include "ember/core/tensor.h"

namespace ember {

/// A 0-d tensor for a Python number, marked so it promotes like a scalar.
Tensor wrap_scalar(const Scalar& s);

/// PyTorch's result_type over tensors with dim, 0-d tensors and wrapped numbers.
ScalarType result_type(TensorList tensors);
/// Whether a value of type `from` may be written into `to` by an in-place op.
bool can_cast(ScalarType from, ScalarType to);
/// Checks that an in-place result of dtype `result` fits `self` (no float into int, ...).
void check_inplace_dtype(const Tensor& self, ScalarType result, const char* op);

}  // namespace ember
