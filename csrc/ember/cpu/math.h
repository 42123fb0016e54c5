#pragma once
// Scalar math the C library lacks, in the forms the kernels need.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace ember::cpu {

/// e^x in float without libm, so a loop calling it vectorizes (see Note [Vector exp] in
/// cpu/softmax_rows.h for the method; about 1 ulp). 2^n is applied in two halves, so results in
/// float's subnormal range come out right and overflow gives inf; NaN passes the clamps.
inline float fast_exp(float x) {
  x = x > 89.0f ? 89.0f : x;
  x = x < -110.0f ? -110.0f : x;
  const float shifted = x * 1.44269504088896341f + 12582912.0f;  // round(x / ln2), 1.5 * 2^23
  const float n = shifted - 12582912.0f;
  const int32_t ni = std::bit_cast<int32_t>(shifted) - 0x4B400000;
  const float r = (x - n * 0.693359375f) + n * 2.12194440e-4f;  // Cody-Waite: n * hi is exact
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  const int32_t n1 = ni >> 1, n2 = ni - n1;  // each within float's normal exponents
  return p * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
}
inline double fast_exp(double x) { return std::exp(x); }

/// 1 / (1 + e^-x), through e^-|x| so nothing overflows.
template <class T>
inline T fast_sigmoid(T x) {
  const T e = fast_exp(-std::abs(x));
  const T s = T(1) / (T(1) + e);
  return x >= T(0) ? s : e * s;
}

/// tanh in float without libm (Cephes' tanhf: an odd polynomial below 0.625, the exp form
/// above, about 2 ulp); overflow of the exp gives the limit +-1, NaN stays NaN.
inline float fast_tanh(float x) {
  const float a = std::abs(x), z = a * a;
  float p = -5.70498872745e-3f;
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const float r = a < 0.625f ? p * z * a + a : 1.0f - 2.0f / (fast_exp(2.0f * a) + 1.0f);
  return std::copysign(r, x);  // odd, tanh(-0.0) included
}
inline double fast_tanh(double x) { return std::tanh(x); }

/// log(x) in float without libm, so a loop calling it vectorizes: Cephes' logf (x = m 2^e with
/// m in [sqrt(1/2), sqrt(2)), a degree-9 polynomial in m - 1, about 1 ulp). Subnormals are scaled
/// into the normal range first; 0 gives -inf, negatives and NaN give NaN, inf gives inf.
inline float fast_log(float x) {
  const bool tiny = x < 1.17549435e-38f;  // subnormal (or zero / negative, fixed below)
  const int32_t bits = std::bit_cast<int32_t>(tiny ? x * 8388608.0f : x);  // * 2^23
  int32_t e = ((bits >> 23) & 0xff) - 126 - (tiny ? 23 : 0);
  const float m = std::bit_cast<float>((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const bool low = m < 0.707106781186547524f;
  e = low ? e - 1 : e;
  const float f = low ? m + m - 1.0f : m - 1.0f;
  const float z = f * f;
  float p = 7.0376836292e-2f;
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const float fe = float(e);
  float y = p * f * z + fe * -2.12194440e-4f - 0.5f * z;  // ln2 split as in fast_exp
  float r = (f + y) + fe * 0.693359375f;
  r = x == std::numeric_limits<float>::infinity() ? x : r;
  r = x == 0.0f ? -std::numeric_limits<float>::infinity() : r;
  return x < 0.0f || x != x ? std::numeric_limits<float>::quiet_NaN() : r;
}
inline double fast_log(double x) { return std::log(x); }

/// log(1 + x) in float without libm: log(u) * x / (u - 1) with u = 1 + x, which cancels the
/// rounding of u (Goldberg's trick, a few ulp); x where u rounds to 1.
inline float fast_log1p(float x) {
  const float u = 1.0f + x, d = u - 1.0f;
  const float r = d == 0.0f ? x : fast_log(u) * (x / d);
  return u == std::numeric_limits<float>::infinity() ? u : r;
}
inline double fast_log1p(double x) { return std::log1p(x); }

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
