#pragma once
// Memory formats at the op level: contiguous(format), clone(format), empty in a format, and the
// layout queries (Note [Memory formats] in core/memory_format.h).
#include <optional>

#include "ember/core/memory_format.h"
#include "ember/core/tensor.h"

namespace ember {

/// Whether `self` is laid out densely in `format` (Preserve asks about row-major order).
bool is_contiguous(const Tensor& self, MemoryFormat format);
/// `self` when already contiguous in `format`, else a copy laid out in it (Preserve raises).
Tensor contiguous(const Tensor& self, MemoryFormat format);
/// A copy with its own storage laid out in `format` (Preserve: `preserve_strides`).
Tensor clone(const Tensor& self, MemoryFormat format);
/// A copy with its own storage and the given strides, recorded for autograd (CloneBackward0).
Tensor clone_strided(const Tensor& self, IntArrayRef strides);
/// `self` converted to `dtype` in a new tensor with the given strides (ToCopyBackward0).
Tensor to_dtype(const Tensor& self, ScalarType dtype, IntArrayRef strides);
/// The format that `self`'s strides follow (PyTorch's `suggest_memory_format`).
MemoryFormat suggest_memory_format(const Tensor& self);
/// An uninitialized tensor of `sizes` in `format` (not Preserve).
Tensor empty(IntArrayRef sizes, ScalarType dtype, MemoryFormat format);
/// An uninitialized tensor shaped like `self` in `format` (Preserve keeps self's layout).
Tensor empty_like(const Tensor& self, ScalarType dtype, MemoryFormat format);
/// `Tensor.to(dtype, memory_format=...)`: self when nothing changes (dtype kept and self's
/// suggested format is `format`, or format is Preserve), else a converted copy.
Tensor to_format(const Tensor& self, std::optional<ScalarType> dtype, MemoryFormat format,
                 bool copy);

}  // namespace ember
