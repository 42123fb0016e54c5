#pragma once
// The object behind a Tensor handle: a strided view of a Storage.
#include <memory>

#include "ember/core/array_ref.h"
#include "ember/core/dtype.h"
#include "ember/core/storage.h"

namespace ember {

/// Autograd state lives in the autograd layer; core only owns it through this interface.
struct AutogradMetaInterface {
  virtual ~AutogradMetaInterface() = default;
};

struct Quantizer;  // core/quantizer.h

/// Sizes, strides (in elements), offset and dtype over shared storage.
class TensorImpl : public RefCounted {
 public:
  TensorImpl(Storage storage, ScalarType dtype, IntArrayRef sizes, IntArrayRef strides,
             int64_t storage_offset);

  IntArrayRef sizes() const { return sizes_; }
  IntArrayRef strides() const { return strides_; }
  int64_t dim() const { return int64_t(sizes_.size()); }
  int64_t numel() const { return numel_; }
  int64_t storage_offset() const { return storage_offset_; }
  ScalarType dtype() const { return dtype_; }
  const Storage& storage() const { return storage_; }
  bool is_contiguous() const { return is_contiguous_; }
  /// Byte address of element 0.
  char* data() const {
    return static_cast<char*>(storage_->data()) + storage_offset_ * int64_t(element_size(dtype_));
  }
  /// Re-points this impl at new geometry (used by in-place view ops such as `t_`, `squeeze_`).
  void set_geometry(IntArrayRef sizes, IntArrayRef strides, int64_t storage_offset);
  /// Re-points this impl at other storage (`set_`, `.data = ...`).
  void set_storage(Storage storage, ScalarType dtype);

  /// True for tensors made from Python numbers: they promote like scalars, not like tensors.
  bool is_wrapped_number = false;
  std::unique_ptr<AutogradMetaInterface> autograd_meta;
  /// Set on tensors of a quantized dtype (Note [Quantized tensors] in core/quantizer.h).
  std::shared_ptr<const Quantizer> quantizer;

 private:
  void refresh();
  Storage storage_;
  DimVector sizes_, strides_;
  int64_t storage_offset_;
  int64_t numel_ = 1;
  ScalarType dtype_;
  bool is_contiguous_ = true;
};

}  // namespace ember
