#pragma once
// Copies, casts, clones and fills (ops/copy.cpp, which also runs the in-place machinery of
// ops/inplace.h).
#include "ember/core/tensor.h"

namespace ember {

/// The same tensor if contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& self);
/// A contiguous copy with its own storage.
Tensor clone(const Tensor& self);
/// `self` converted to `dtype` (the same tensor if it already has it, unless `copy`).
Tensor to_dtype(const Tensor& self, ScalarType dtype, bool copy = false);
/// Copies `src` into `self` with broadcasting and dtype conversion.
Tensor& copy_(Tensor& self, const Tensor& src);
/// Fills in place.
Tensor& fill_(Tensor& self, const Scalar& value);
Tensor& zero_(Tensor& self);

}  // namespace ember
