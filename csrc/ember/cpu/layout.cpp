#include "ember/cpu/layout.h"

#include "ember/cpu/copy.h"

namespace ember::cpu {

MemoryFormat spatial_format(std::initializer_list<const Tensor*> ts) {
  for (const Tensor* t : ts) {
    if (!t->defined() || t->dim() < 4) continue;
    MemoryFormat f = suggest_memory_format(t->sizes(), t->strides());
    if (f != MemoryFormat::Contiguous) return f;
  }
  return MemoryFormat::Contiguous;
}

Tensor in_format(const Tensor& t, MemoryFormat format) {
  if (!t.defined() || format == MemoryFormat::Preserve) return t;
  if (format == MemoryFormat::Contiguous) return contiguous(t);
  if (size_t(t.dim()) != (format == MemoryFormat::ChannelsLast ? 4u : 5u)) return t;
  DimVector strides = strides_for(t.sizes(), format);
  if (t.strides().equals(strides)) return t;
  // Already in that order, size-1 dims aside (an (N, C, 1, 1) result): the same memory, restrided
  // to the exact strides PyTorch gives such a result.
  if (is_contiguous_as(t.sizes(), t.strides(), format))
    return t.as_strided_view(t.sizes(), strides, t.storage_offset());
  Tensor out = empty_strided(t.sizes(), strides, t.dtype(), t.device());
  copy_(out, t);
  return out;
}

}  // namespace ember::cpu
