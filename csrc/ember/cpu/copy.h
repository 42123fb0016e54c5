#pragma once
// Kernel-side copies, casts and fills. A kernel that needs a converted, contiguous or zeroed
// tensor calls these: they run the cpu loops directly, with no dispatch, no autograd and no
// version bump, so an op goes ops -> dispatcher -> kernel and never back up. Inside namespace
// ember::cpu they hide the public ops of the same names (ops/view.h, ops/creation.h).
#include "ember/core/tensor.h"

namespace ember::cpu {

/// dst <- src, converting the dtype; src broadcasts to dst's shape.
Tensor& copy_(Tensor& dst, const Tensor& src);
/// self with dtype `dtype`: self when it has it already, else a contiguous converted copy.
Tensor to_dtype(const Tensor& self, ScalarType dtype);
/// self when contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& self);
/// Writes `value` into every element of self.
Tensor& fill_(Tensor& self, const Scalar& value);
/// A new contiguous tensor filled with `value` (zeros, ones).
Tensor full(IntArrayRef sizes, const Scalar& value, ScalarType dtype);
inline Tensor zeros(IntArrayRef sizes, ScalarType dtype) { return full(sizes, 0, dtype); }
inline Tensor ones(IntArrayRef sizes, ScalarType dtype) { return full(sizes, 1, dtype); }

}  // namespace ember::cpu
