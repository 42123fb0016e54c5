#pragma once
// The layout of a new elementwise output (Note [Output layout] in core/output_layout.cpp): a
// backend-independent rule, used by the meta step of the elementwise ops (ops/meta.h) and by the
// kernels that allocate a result of their own.
#include <initializer_list>

#include "ember/core/tensor.h"

namespace ember {

/// An uninitialized elementwise output of `shape` on `device` laid out in the inputs' memory
/// order (Note [Output layout]); contiguous when the inputs are.
Tensor empty_like_inputs(IntArrayRef shape, ScalarType dtype,
                         std::initializer_list<const Tensor*> inputs, Device device = Device());

}  // namespace ember
