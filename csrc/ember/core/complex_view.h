#pragma once
// Complex tensors seen as real pairs and back, without autograd: the building block of
// view_as_real/view_as_complex (ops/complex.cpp) and of kernels that reduce complex data through
// their real paths.
#include "ember/core/tensor.h"

namespace ember {

/// A complex tensor's memory as its real type with a trailing dim of 2 (real, imaginary).
Tensor real_pairs_view(const Tensor& self);
/// The inverse: a real tensor whose last dim has size 2 and stride 1 read as complex values.
Tensor complex_pairs_view(const Tensor& self);

}  // namespace ember
