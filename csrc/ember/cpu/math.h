#pragma once
// Scalar math the C library lacks, in the forms the kernels need; the vectorizable float
// exp/log/tanh/sigmoid/erf are in cpu/vmath.h.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>
#include <type_traits>

#include "ember/cpu/vmath.h"

namespace ember::cpu {

/// x + y and x * y that wrap modulo 2^bits for integers, as PyTorch's integer kernels do: the
/// arithmetic runs in the unsigned type, where wrapping is defined (signed overflow is not).
template <class T>
inline T wrapping_add(T x, T y) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    using U = std::make_unsigned_t<T>;
    return T(U(x) + U(y));
  } else {
    return x + y;
  }
}
template <class T>
inline T wrapping_mul(T x, T y) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // 8/16-bit operands promote to int, whose product can overflow: multiply as unsigned int
    using U = std::common_type_t<std::make_unsigned_t<T>, unsigned>;
    return T(U(std::make_unsigned_t<T>(x)) * U(std::make_unsigned_t<T>(y)));
  } else {
    return x * y;
  }
}

/// Inverse error function: a rational first guess refined by Newton steps on erf.
template <class T>
T erfinv(T y) {
  if (std::isnan(y) || y < T(-1) || y > T(1)) return std::numeric_limits<T>::quiet_NaN();
  if (y == T(1)) return std::numeric_limits<T>::infinity();
  if (y == T(-1)) return -std::numeric_limits<T>::infinity();
  double w = -std::log((1.0 - double(y)) * (1.0 + double(y)));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * double(y);
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * double(y);
  }
  // Newton on erf(x) - y: the derivative is 2/sqrt(pi) exp(-x^2).
  for (int i = 0; i < 2; ++i) {
    double err = std::erf(x) - double(y);
    x -= err / (1.1283791670955126 * std::exp(-x * x));
  }
  return T(x);
}

/// Round half to even, as torch.round.
template <class T>
T round_half_even(T x) {
  return std::nearbyint(x);
}

/// Python-style modulo: the result takes the sign of the divisor.
template <class T>
T python_mod(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // -1 only of a signed T (avoids the INT_MIN % -1 trap); uint8's T(-1) is 255
    T r = std::is_signed_v<T> && b == T(-1) ? T(0) : T(a % b);
    return (r != 0 && ((r < 0) != (b < 0))) ? T(r + b) : r;
  } else {
    T r = std::fmod(a, b);
    if (r != 0 && ((r < 0) != (b < 0))) r += b;
    return r;
  }
}

/// Floor division with Python's rounding (toward negative infinity).
template <class T>
T floor_div(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (std::is_signed_v<T> && b == T(-1)) return T(-a);  // avoids the INT_MIN / -1 trap
    T q = T(a / b);
    return (a % b != 0 && ((a < 0) != (b < 0))) ? T(q - 1) : q;
  } else {
    if (b == 0) return a / b;
    T mod = std::fmod(a, b);
    T div = (a - mod) / b;
    if (mod != 0 && ((b < 0) != (mod < 0))) div -= T(1);
    T fl;
    if (div != 0) {
      fl = std::floor(div);
      if (div - fl > T(0.5)) fl += T(1);
    } else {
      fl = std::copysign(T(0), a / b);
    }
    return fl;
  }
}

// The math of the unary table's rows (Note [Unary table] in schema/unary.h) that is more than
// a library call: each takes the widened element value of any dtype the row's loop runs in.
#define EMBER_ELEM   \
  template <class T> \
  inline __attribute__((always_inline))
EMBER_ELEM T sinc_of(T x) {
  return x == 0 ? T(1) : std::sin(std::numbers::pi_v<T> * x) / (std::numbers::pi_v<T> * x);
}
EMBER_ELEM T abs_of(T x) {
  if constexpr (std::is_unsigned_v<T>) return x;
  else if constexpr (std::is_floating_point_v<T>) return std::abs(x);  // abs(-0.0) is +0.0
  else return x < 0 ? T(-x) : x;
}
EMBER_ELEM T sign_of(T x) {
  if constexpr (std::is_same_v<T, bool>) return x;
  else return T((T(0) < x) - (x < T(0)));
}
EMBER_ELEM T floor_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::floor(x);
  else return x;
}
EMBER_ELEM T ceil_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::ceil(x);
  else return x;
}
EMBER_ELEM T round_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::nearbyint(x);
  else return x;
}
EMBER_ELEM T trunc_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::trunc(x);
  else return x;
}
EMBER_ELEM T relu_of(T x) {
  return x <= T(0) ? T(0) : x;  // NaN stays NaN
}
EMBER_ELEM T not_of(T x) {
  if constexpr (std::is_same_v<T, bool>) return !x;
  else return T(~x);
}
EMBER_ELEM bool isnan_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isnan(x);
  else return false;
}
EMBER_ELEM bool isinf_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isinf(x);
  else return false;
}
EMBER_ELEM bool isfinite_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(x);
  else return true;
}
EMBER_ELEM bool isposinf_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isinf(x) && x > 0;
  else return false;
}
EMBER_ELEM bool isneginf_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return std::isinf(x) && x < 0;
  else return false;
}
// Out of line on purpose: GCC 12 crashes (ICE) vectorizing std::signbit loops.
[[gnu::noinline]] inline bool sign_bit(double x) { return std::signbit(x); }
EMBER_ELEM bool signbit_of(T x) {
  if constexpr (std::is_floating_point_v<T>) return sign_bit(double(x));
  else if constexpr (std::is_signed_v<T>) return x < 0;
  else return false;
}
#undef EMBER_ELEM

}  // namespace ember::cpu
