#pragma once
// Scalar math the C library lacks, in the forms the kernels need; the vectorizable float
// exp/log/tanh/sigmoid/erf are in cpu/vmath.h.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
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
    using U = std::make_unsigned_t<T>;
    return T(U(x) * U(y));
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
    T r = b == T(-1) ? T(0) : T(a % b);
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
    if (b == T(-1)) return T(-a);  // avoids the INT_MIN / -1 trap
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

}  // namespace ember::cpu
