#include "ember/core/tensor_impl.h"

#include "ember/core/shape.h"

namespace ember {

TensorImpl::TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
                       int64_t storage_offset)
    : storage_(std::move(storage)),
      sizes_(sizes),
      strides_(strides),
      storage_offset_(storage_offset),
      dtype_(dtype) {
  refresh();
}

void TensorImpl::set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset) {
  sizes_ = DimVector(sizes);
  strides_ = DimVector(strides);
  storage_offset_ = storage_offset;
  refresh();
}

void TensorImpl::set_storage(Storage storage, ScalarType dtype) {
  storage_ = std::move(storage);
  dtype_ = dtype;
}

void TensorImpl::refresh() {
  numel_ = numel_of(sizes_);  // rejects shapes whose element count overflows int64
  // PyTorch's rule: size-1 dims may have any stride; empty tensors are contiguous.
  is_contiguous_ = true;
  if (numel_ == 0) return;
  int64_t expected = 1;
  for (int64_t d = dim() - 1; d >= 0; --d) {
    if (sizes_[d] == 1) continue;
    if (strides_[d] != expected) {
      is_contiguous_ = false;
      return;
    }
    expected *= sizes_[d];
  }
}

}  // namespace ember
