#pragma once
// ember::Tensor: a cheap ref-counted handle, the type every op takes and returns.
#include <memory>
#include <optional>
#include <vector>

#include "ember/core/scalar.h"
#include "ember/core/tensor_impl.h"

namespace ember {

namespace autograd {
class Node;
}

/// A strided, typed view of storage with optional autograd history (libtorch's `at::Tensor`).
class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(IntrusivePtr<TensorImpl> impl) : impl_(std::move(impl)) {}

  bool defined() const { return bool(impl_); }
  TensorImpl* impl() const { return impl_.get(); }
  const IntrusivePtr<TensorImpl>& impl_ptr() const { return impl_; }
  bool is_same(const Tensor& o) const { return impl_ == o.impl_; }

  IntArrayRef sizes() const { return impl_->sizes(); }
  IntArrayRef shape() const { return impl_->sizes(); }
  IntArrayRef strides() const { return impl_->strides(); }
  /// Size of `dim` (negative counts from the end); out of range raises IndexError.
  int64_t size(int64_t dim) const;
  int64_t stride(int64_t dim) const;
  int64_t dim() const { return impl_->dim(); }
  int64_t ndimension() const { return dim(); }
  int64_t numel() const { return impl_->numel(); }
  int64_t storage_offset() const { return impl_->storage_offset(); }
  ScalarType dtype() const { return impl_->dtype(); }
  ScalarType scalar_type() const { return impl_->dtype(); }
  Device device() const { return impl_->storage()->device(); }
  const Storage& storage() const { return impl_->storage(); }
  size_t element_size() const { return ember::element_size(dtype()); }
  size_t nbytes() const { return size_t(numel()) * element_size(); }
  bool is_contiguous() const { return impl_->is_contiguous(); }
  bool is_floating_point() const { return ember::is_floating_point(dtype()); }
  void* data_ptr() const { return impl_->data(); }
  template <class T>
  T* data_ptr() const {
    EMBER_CHECK(dtype_of<T> == dtype(), "data_ptr: expected dtype ", dtype_name(dtype_of<T>),
                " but tensor has ", dtype_name(dtype()));
    return reinterpret_cast<T*>(impl_->data());
  }
  /// The single value of a one-element tensor.
  Scalar item() const;
  template <class T>
  T item() const {
    return item().to<T>();
  }
  uint32_t _version() const { return storage()->version(); }
  void bump_version() const { storage()->bump_version(); }

  // Autograd (defined in autograd/variable.cpp).
  bool requires_grad() const;
  /// Marks a leaf as requiring grad; raises on non-leaves and non-float dtypes like PyTorch.
  const Tensor& requires_grad_(bool requires_grad = true) const;
  /// Accumulated gradient of a leaf (undefined until a backward reaches it).
  Tensor grad() const;
  void set_grad(const Tensor& grad) const;
  const std::shared_ptr<autograd::Node>& grad_fn() const;
  bool is_leaf() const;
  uint32_t output_nr() const;
  void retain_grad() const;
  bool retains_grad() const;
  /// Runs backward from this tensor; `gradient` may be omitted for scalars.
  void backward(const Tensor& gradient = {}, std::optional<bool> retain_graph = std::nullopt,
                bool create_graph = false) const;
  /// A view sharing storage with no autograd history.
  Tensor detach() const;
  const Tensor& detach_() const;
  /// The same data viewed with other geometry (no checks: callers validate).
  Tensor as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const;

 private:
  IntrusivePtr<TensorImpl> impl_;
};

using TensorList = ArrayRef<Tensor>;

/// Allocates an uninitialized contiguous tensor.
Tensor empty(IntArrayRef sizes, ScalarType dtype = default_dtype(), Device device = Device());
/// Allocates with the given strides (storage large enough for them).
Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype = default_dtype(),
                     Device device = Device());
/// Wraps external memory without copying; `deleter` frees it when the tensor dies.
Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                 Deleter deleter = [](void*) {});
/// A 0-d tensor of the scalar's dtype; `wrapped` marks it as a Python number for promotion.
Tensor scalar_tensor(const Scalar& s, ScalarType dtype, bool wrapped = false);

}  // namespace ember
