#pragma once
// A Python-like number: bool, int64 or double, remembering which.
#include <cstdint>

#include "ember/core/dtype.h"

namespace ember {

/// A scalar argument (`alpha`, a fill value, a Python number in `x + 1`).
class Scalar {
 public:
  enum class Tag : uint8_t { Bool, Int, Double };
  Scalar() : tag_(Tag::Int), i_(0) {}
  Scalar(bool v) : tag_(Tag::Bool), i_(v) {}
  Scalar(double v) : tag_(Tag::Double), d_(v) {}
  Scalar(float v) : tag_(Tag::Double), d_(v) {}
  template <class T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool>, int> = 0>
  Scalar(T v) : tag_(Tag::Int), i_(int64_t(v)) {}
  Scalar(Half v) : tag_(Tag::Double), d_(float(v)) {}
  Scalar(BFloat16 v) : tag_(Tag::Double), d_(float(v)) {}

  bool is_bool() const { return tag_ == Tag::Bool; }
  bool is_integral(bool include_bool) const {
    return tag_ == Tag::Int || (include_bool && tag_ == Tag::Bool);
  }
  bool is_floating_point() const { return tag_ == Tag::Double; }
  double to_double() const { return tag_ == Tag::Double ? d_ : double(i_); }
  int64_t to_long() const { return tag_ == Tag::Double ? int64_t(d_) : i_; }
  bool to_bool() const { return tag_ == Tag::Double ? d_ != 0 : i_ != 0; }
  // libtorch's names (`loss.item().toFloat()`).
  double toDouble() const { return to_double(); }
  float toFloat() const { return float(to_double()); }
  int64_t toLong() const { return to_long(); }
  int toInt() const { return int(to_long()); }
  bool toBool() const { return to_bool(); }
  /// The value converted to element type T.
  template <class T>
  T to() const {
    if constexpr (std::is_same_v<T, bool>) return to_bool();
    else if constexpr (std::is_integral_v<T>) return T(to_long());
    else return T(to_double());
  }
  /// The dtype a Python number of this kind gets as a tensor (float -> default dtype).
  ScalarType dtype() const {
    return tag_ == Tag::Bool ? kBool : tag_ == Tag::Int ? kLong : default_dtype();
  }
  Scalar operator-() const { return tag_ == Tag::Double ? Scalar(-d_) : Scalar(-i_); }

 private:
  Tag tag_;
  union {
    int64_t i_;
    double d_;
  };
};

/// Raises RuntimeError "value cannot be converted to type ... without overflow" where PyTorch's
/// checked conversion does (a fill, a masked_fill or setitem value): an integer dtype takes
/// finite values inside its range (unsigned ones also the negated range of an int, which wraps),
/// float32 any int and any float but a finite one past its max; bool, float16, bfloat16 and
/// float64 anything.
void check_scalar_fits(const Scalar& value, ScalarType dtype);

}  // namespace ember
