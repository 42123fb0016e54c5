#include "ember/ops/memory_format.h"

#include "ember/core/profiler.h"
#include "ember/core/shape.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/ops.h"

namespace ember {

bool is_contiguous(const Tensor& self, MemoryFormat format) {
  if (format == MemoryFormat::Contiguous || format == MemoryFormat::Preserve)
    return self.is_contiguous();
  return is_contiguous_as(self.sizes(), self.strides(), format);
}

Tensor contiguous(const Tensor& self, MemoryFormat format) {
  if (is_contiguous(self, format)) return self;
  EMBER_CHECK(format != MemoryFormat::Preserve,
              "preserve memory format is unsupported by the contiguous operator");
  return clone(self, format);
}

Tensor clone(const Tensor& self, MemoryFormat format) {
  profiler::OpRange prof_range("clone", self, format);
  if (format == MemoryFormat::Contiguous)
    return clone_strided(self, contiguous_strides(self.sizes()));
  return clone_strided(self, strides_like(self.sizes(), self.strides(), format));
}

MemoryFormat suggest_memory_format(const Tensor& self) {
  return suggest_memory_format(self.sizes(), self.strides());
}

Tensor empty(IntArrayRef sizes, ScalarType dtype, MemoryFormat format) {
  for (int64_t s : sizes)  // before the strides, which a negative size would make meaningless
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  return empty_strided(sizes, strides_for(sizes, format), dtype);
}

Tensor empty_like(const Tensor& self, ScalarType dtype, MemoryFormat format) {
  return empty_strided(self.sizes(), strides_like(self.sizes(), self.strides(), format), dtype,
                       self.device());
}

Tensor to_format(const Tensor& self, std::optional<ScalarType> dtype, MemoryFormat format,
                 bool copy) {
  const ScalarType t = dtype.value_or(self.dtype());
  if (!copy && t == self.dtype() &&
      (format == MemoryFormat::Preserve || suggest_memory_format(self) == format)) {
    profiler::mark_op("to", self, dtype, false, copy, format);  // Note [Profiler rows]
    return self;
  }
  return to_dtype(self, t, strides_like(self.sizes(), self.strides(), format));
}

}  // namespace ember
