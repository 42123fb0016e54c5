#pragma once
// Binary elementwise ops and arithmetic operators (ops/binary.cpp). The X-macro list drives
// declarations, kernels, derivatives and bindings.
#include <optional>
#include <string>

#include "ember/core/tensor.h"
#include "ember/core/type_promotion.h"  // result_type, can_cast, wrap_scalar

namespace ember {
// Binary ops: (name, backward node name). Each has Tensor-Tensor and in-place forms;
// Python numbers arrive as wrapped 0-d tensors (see Note [Wrapped numbers]).
#define EMBER_BINARY_OPS(_)              \
  _(mul, MulBackward0)                   \
  _(true_divide, DivBackward0)           \
  _(floor_divide, FloorDivideBackward0)  \
  _(remainder, RemainderBackward0)       \
  _(fmod, FmodBackward0)                 \
  _(pow, PowBackward1)                   \
  _(atan2, Atan2Backward0)               \
  _(hypot, HypotBackward0)               \
  _(copysign, CopysignBackward0)         \
  _(minimum, MinimumBackward0)           \
  _(maximum, MaximumBackward0)           \
  _(fmin, FminBackward0)                 \
  _(fmax, FmaxBackward0)                 \
  _(bitwise_and, NotImplemented)         \
  _(bitwise_or, NotImplemented)          \
  _(bitwise_xor, NotImplemented)         \
  _(bitwise_left_shift, NotImplemented)  \
  _(bitwise_right_shift, NotImplemented) \
  _(logical_and, NotImplemented)         \
  _(logical_or, NotImplemented)          \
  _(logical_xor, NotImplemented)         \
  _(eq, NotImplemented)                  \
  _(ne, NotImplemented)                  \
  _(lt, NotImplemented)                  \
  _(le, NotImplemented)                  \
  _(gt, NotImplemented)                  \
  _(ge, NotImplemented)

#define EMBER_DECLARE_BINARY(name, node)                \
  Tensor name(const Tensor& self, const Tensor& other); \
  Tensor& name##_(Tensor& self, const Tensor& other);
EMBER_BINARY_OPS(EMBER_DECLARE_BINARY)
#undef EMBER_DECLARE_BINARY

/// self + alpha * other.
Tensor add(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& add_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
/// self - alpha * other.
Tensor sub(const Tensor& self, const Tensor& other, const Scalar& alpha = 1);
Tensor& sub_(Tensor& self, const Tensor& other, const Scalar& alpha = 1);
/// Division with rounding_mode: none (true division), "trunc" or "floor".
Tensor div(const Tensor& self, const Tensor& other,
           std::optional<std::string> rounding_mode = std::nullopt);
Tensor& div_(Tensor& self, const Tensor& other,
             std::optional<std::string> rounding_mode = std::nullopt);

/// Clamps into [min, max]; either bound may be absent.
Tensor clamp(const Tensor& self, const std::optional<Tensor>& min,
             const std::optional<Tensor>& max);
Tensor& clamp_(Tensor& self, const std::optional<Tensor>& min, const std::optional<Tensor>& max);
/// cond ? self : other, broadcasting all three.
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);
/// self + weight * (end - self).
Tensor lerp(const Tensor& self, const Tensor& end, const Tensor& weight);
/// self + value * t1 * t2.
Tensor addcmul(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor& addcmul_(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
/// self + value * t1 / t2.
Tensor addcdiv(const Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);
Tensor& addcdiv_(Tensor& self, const Tensor& t1, const Tensor& t2, const Scalar& value = 1);

// Operators for C++ users.
Tensor operator+(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a, const Tensor& b);
Tensor operator*(const Tensor& a, const Tensor& b);
Tensor operator/(const Tensor& a, const Tensor& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const Scalar& b);
Tensor operator-(const Tensor& a, const Scalar& b);
Tensor operator*(const Tensor& a, const Scalar& b);
Tensor operator/(const Tensor& a, const Scalar& b);
Tensor operator*(const Scalar& a, const Tensor& b);
Tensor operator+(const Scalar& a, const Tensor& b);
Tensor operator-(const Scalar& a, const Tensor& b);
Tensor operator/(const Scalar& a, const Tensor& b);

}  // namespace ember
