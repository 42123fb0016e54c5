#pragma once
// Factory functions: zeros, ones, full, arange, linspace, eye, ... (libtorch names).
#include <initializer_list>
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// dtype, device and requires_grad for factories; converts from a ScalarType or a Device.
struct TensorOptions {
  std::optional<ScalarType> dtype_;
  Device device_;
  bool requires_grad_ = false;
  TensorOptions() = default;
  TensorOptions(ScalarType t) : dtype_(t) {}
  TensorOptions(Device d) : device_(d) {}
  TensorOptions(DeviceType d) : device_(d) {}
  TensorOptions dtype(ScalarType t) const {
    auto o = *this;
    o.dtype_ = t;
    return o;
  }
  TensorOptions device(Device d) const {
    auto o = *this;
    o.device_ = d;
    return o;
  }
  TensorOptions requires_grad(bool r = true) const {
    auto o = *this;
    o.requires_grad_ = r;
    return o;
  }
  ScalarType dtype_or_default() const { return dtype_.value_or(default_dtype()); }
  /// libtorch's getters: the dtype (the default one if unset) and the device.
  ScalarType dtype() const { return dtype_or_default(); }
  Device device() const { return device_; }
};

/// libtorch's option builders: `ember::dtype(kFloat).requires_grad(true)`.
inline TensorOptions dtype(ScalarType t) { return TensorOptions(t); }
inline TensorOptions device(Device d) { return TensorOptions(d); }
inline TensorOptions requires_grad(bool r = true) { return TensorOptions().requires_grad(r); }

Tensor empty(IntArrayRef sizes, const TensorOptions& options);
/// Wraps external memory without copying or freeing it (contiguous strides).
Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& options = {});
/// A 1-d tensor of `values`: int64 for integers, the default dtype for floating point.
Tensor tensor(ArrayRef<int64_t> values, const TensorOptions& options = {});
Tensor tensor(ArrayRef<double> values, const TensorOptions& options = {});
template <class T>
requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) Tensor
    tensor(std::initializer_list<T> values, const TensorOptions& options = {}) {
  using Wide = std::conditional_t<std::is_floating_point_v<T>, double, int64_t>;
  return tensor(ArrayRef<Wide>(std::vector<Wide>(values.begin(), values.end())), options);
}
Tensor zeros(IntArrayRef sizes, const TensorOptions& options = {});
Tensor ones(IntArrayRef sizes, const TensorOptions& options = {});
/// Filled with `value`; without a dtype, the value's kind decides (bool, int64 or default float).
Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& options = {});
Tensor empty_like(const Tensor& self, const TensorOptions& options = {});
Tensor zeros_like(const Tensor& self, const TensorOptions& options = {});
Tensor ones_like(const Tensor& self, const TensorOptions& options = {});
Tensor full_like(const Tensor& self, const Scalar& value, const TensorOptions& options = {});
/// [start, end) by step; dtype int64 when all arguments are integers, else the default dtype.
Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step = 1,
              const TensorOptions& options = {});
Tensor arange(const Scalar& end, const TensorOptions& options = {});
Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps,
                const TensorOptions& options = {});
Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base = 10.0,
                const TensorOptions& options = {});
Tensor eye(int64_t n, std::optional<int64_t> m = std::nullopt, const TensorOptions& options = {});
/// Lower/upper triangle (elements above/below `diagonal` zeroed).
Tensor tril(const Tensor& self, int64_t diagonal = 0);
Tensor triu(const Tensor& self, int64_t diagonal = 0);
/// 1-d -> square matrix with the vector on a diagonal; 2-d -> that diagonal as a vector.
Tensor diag(const Tensor& self, int64_t diagonal = 0);

}  // namespace ember
