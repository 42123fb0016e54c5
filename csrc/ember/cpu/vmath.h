#pragma once
// The vector-math library of the CPU kernels: exp, log, log1p, tanh, sigmoid and erf in float,
// written once for a scalar float (loops calling it auto-vectorize) and for GCC vector types
// (cpu/softmax_rows_impl.inc). double keeps libm. See Note [Vector math].
//
// Note [Vector math]
// libm's expf/logf/tanhf/erff are scalar calls that block vectorization, so the float kernels
// (unary ops, fused activations, softmax rows, RNN cells) all use the branch-free functions
// here, with one set of clamps, so e.g. ember.sigmoid(x) and the sigmoid inside silu(x) give the
// same value at every x. Each function is a template over V, a float or a GCC vector of floats
// (`float __attribute__((vector_size(N)))`): comparisons, `?:` selects and bit casts work on
// both. Methods, all branch-free and about 1-2 ulp (tests/python/test_vector_math.py):
// - exp: x = n ln2 + r with n = round(x / ln2) by the 1.5 * 2^23 trick, ln2 split Cody-Waite
//   style, Cephes' degree-6 polynomial for e^r, 2^n built in the exponent bits in two halves so
//   float's subnormal results come out right; overflow gives inf, NaN stays NaN. The softmax
//   rows use fast_exp<false>, which flushes below -87.34 to 0 (as they always did) and is one
//   multiply cheaper.
// - log: Cephes' logf (x = m 2^e, m in [sqrt(1/2), sqrt(2)), degree-9 polynomial in m - 1);
//   subnormals are scaled first; 0 gives -inf, negatives and NaN give NaN.
// - log1p: log(u) * x / (u - 1) with u = 1 + x (Goldberg), which cancels the rounding of u.
// - tanh: Cephes' tanhf (odd polynomial below 0.625, 1 - 2 / (e^2|x| + 1) above).
// - sigmoid: through e^-|x|, so nothing overflows.
// - erf: x + x P(x^2) below 0.875 (relative error, so tiny x keeps full precision), above
//   1 - e^-x^2 Q(t) with t = 1 / (1 + |x| / 2) (Q fits erfcx), and 1 from 4 on.
// benchmarks/vector_math.py measures these against SLEEF's u10 functions and torch
// (docs/ARCHITECTURE.md records the result).
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

// Always inlined: a caller compiled for AVX2 or AVX-512 (Note [ISA clones], the softmax rows)
// gets its own copy at its width.
#define EMBER_VMATH inline __attribute__((always_inline))

namespace ember::cpu {

namespace vmath {

template <class V>
constexpr bool kScalar = std::is_arithmetic_v<V>;
/// The int32 type (or vector) of V's shape.
template <class V>
using int_t = std::conditional_t<kScalar<V>, int32_t, decltype(V{} < V{})>;

template <class V>
EMBER_VMATH V splat(float c) {
  if constexpr (kScalar<V>) return V(c);
  else return V{} + c;
}
template <class V>
EMBER_VMATH V to_float(int_t<V> i) {
  if constexpr (kScalar<V>) return V(i);
  else return __builtin_convertvector(i, V);
}
template <class V>
EMBER_VMATH V abs(V x) {
  if constexpr (kScalar<V>) return std::abs(x);
  else return std::bit_cast<V>(std::bit_cast<int_t<V>>(x) & 0x7fffffff);
}
/// |r| with the sign of s.
template <class V>
EMBER_VMATH V copysign(V r, V s) {
  if constexpr (kScalar<V>) {
    return std::copysign(r, s);
  } else {
    using I = int_t<V>;
    const I sign = std::bit_cast<I>(s) & int32_t(0x80000000u);
    return std::bit_cast<V>((std::bit_cast<I>(r) & 0x7fffffff) | sign);
  }
}

}  // namespace vmath

namespace vmath {
/// e^x = p 2^n for x within [-104, 89]: returns p and sets n (round(x / ln2) by the 1.5 * 2^23
/// trick, ln2 split Cody-Waite style so n * hi is exact, Cephes' polynomial for e^r).
template <class V>
EMBER_VMATH V exp_reduced(V x, int_t<V>& n) {
  const V shifted = x * 1.44269504088896341f + 12582912.0f;
  const V nf = shifted - 12582912.0f;
  n = std::bit_cast<int_t<V>>(shifted) - 0x4B400000;
  const V r = (x - nf * 0.693359375f) + nf * 2.12194440e-4f;
  V p = splat<V>(1.9875691500e-4f);
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return p * r * r + r + 1.0f;
}
}  // namespace vmath

/// e^x. kSubnormal = false gives 0 below -87.34 instead of float's subnormal results, one
/// multiply and a few integer ops cheaper: for sums such as softmax's, where those vanish.
template <bool kSubnormal = true, class V>
EMBER_VMATH V fast_exp(V x) {
  using namespace vmath;
  using I = int_t<V>;
  if constexpr (!kSubnormal) {
    const V hi = splat<V>(88.7228390f), lo = splat<V>(-87.3365448f);
    V xc = x > hi ? hi : x;
    xc = xc < lo ? lo : xc;
    I n;
    const V p = exp_reduced(xc, n);
    const V y = p * std::bit_cast<V>((n + 127) << 23);
    const V r = x < lo ? splat<V>(0.0f) : y;
    return x > hi ? splat<V>(__builtin_inff()) : r;
  } else {
    // Below -104 e^x rounds to 0: those lanes compute e^0 instead, so no multiply underflows
    // (an underflow costs a microcode assist on many x86 cores, e.g. every masked logit).
    const auto zero = x < splat<V>(-104.0f);
    x = x > splat<V>(89.0f) ? splat<V>(89.0f) : x;  // e^89 overflows to inf below
    x = zero ? splat<V>(0.0f) : x;
    I n;
    const V p = exp_reduced(x, n);
    const I n1 = n >> 1, n2 = n - n1;  // 2^n in two halves, each a normal float
    const V y = p * std::bit_cast<V>((n1 + 127) << 23) * std::bit_cast<V>((n2 + 127) << 23);
    return zero ? splat<V>(0.0f) : y;
  }
}
inline double fast_exp(double x) { return std::exp(x); }

/// 1 / (1 + e^-x), through e^-|x| so nothing overflows.
template <class V>
EMBER_VMATH V fast_sigmoid(V x) {
  const V e = fast_exp(-vmath::abs(x));
  const V s = vmath::splat<V>(1.0f) / (vmath::splat<V>(1.0f) + e);
  return x >= vmath::splat<V>(0.0f) ? s : e * s;
}

/// tanh(x); overflow of the exp gives the limit +-1, NaN stays NaN.
template <class V>
EMBER_VMATH V fast_tanh(V x) {
  using namespace vmath;
  const V a = abs(x), z = a * a;
  V p = splat<V>(-5.70498872745e-3f);
  p = p * z + 2.06390887954e-2f;
  p = p * z - 5.37397155531e-2f;
  p = p * z + 1.33314422036e-1f;
  p = p * z - 3.33332819422e-1f;
  const V big = 1.0f - 2.0f / (fast_exp(2.0f * a) + 1.0f);
  const V r = a < splat<V>(0.625f) ? p * z * a + a : big;
  return copysign(r, x);  // odd, tanh(-0.0) included
}
inline double fast_tanh(double x) { return std::tanh(x); }

/// log(x).
template <class V>
EMBER_VMATH V fast_log(V x) {
  using namespace vmath;
  using I = int_t<V>;
  const auto tiny = x < splat<V>(1.17549435e-38f);  // subnormal (or zero / negative, fixed below)
  const I bits = std::bit_cast<I>(tiny ? x * 8388608.0f : x);  // * 2^23
  I e = ((bits >> 23) & 0xff) - 126;
  e = tiny ? e - 23 : e;
  const V m = std::bit_cast<V>((bits & 0x007fffff) | 0x3f000000);  // in [0.5, 1)
  const auto low = m < splat<V>(0.707106781186547524f);
  e = low ? e - 1 : e;
  const V f = low ? m + m - 1.0f : m - 1.0f;
  const V z = f * f;
  V p = splat<V>(7.0376836292e-2f);
  p = p * f - 1.1514610310e-1f;
  p = p * f + 1.1676998740e-1f;
  p = p * f - 1.2420140846e-1f;
  p = p * f + 1.4249322787e-1f;
  p = p * f - 1.6668057665e-1f;
  p = p * f + 2.0000714765e-1f;
  p = p * f - 2.4999993993e-1f;
  p = p * f + 3.3333331174e-1f;
  const V fe = to_float<V>(e);
  const V y = p * f * z + fe * -2.12194440e-4f - 0.5f * z;  // ln2 split as in fast_exp
  V r = (f + y) + fe * 0.693359375f;
  const V inf = splat<V>(__builtin_inff());
  r = x == inf ? inf : r;
  r = x == splat<V>(0.0f) ? -inf : r;
  return x < splat<V>(0.0f) || x != x ? splat<V>(__builtin_nanf("")) : r;
}
inline double fast_log(double x) { return std::log(x); }

/// log(1 + x); x where 1 + x rounds to 1.
template <class V>
EMBER_VMATH V fast_log1p(V x) {
  const V u = 1.0f + x, d = u - 1.0f;
  const V r = d == vmath::splat<V>(0.0f) ? x : fast_log(u) * (x / d);
  return u == vmath::splat<V>(__builtin_inff()) ? u : r;
}
inline double fast_log1p(double x) { return std::log1p(x); }

/// erf(x).
template <class V>
EMBER_VMATH V fast_erf(V x) {
  using namespace vmath;
  const V a = abs(x), z = a * a;
  // |x| < 0.875: x + x P(x^2), the exact x term first (relative error, tiny x included).
  V p = splat<V>(-6.2224146677e-04f);
  p = p * z + 5.0358707085e-03f;
  p = p * z - 2.6793954894e-02f;
  p = p * z + 1.1282524467e-01f;
  p = p * z - 3.7612557411e-01f;
  p = p * z + 1.2837915123e-01f;
  const V small = a + a * p;
  // Above: 1 - e^-x^2 erfcx(x), erfcx fitted as a polynomial in t = 1 / (1 + x / 2).
  const V t = 1.0f / (1.0f + 0.5f * a);
  V q = splat<V>(-4.7876428813e-02f);
  q = q * t - 7.3384560645e-02f;
  q = q * t + 4.2253476381e-01f;
  q = q * t + 8.9799471200e-02f;
  q = q * t + 3.3474728465e-01f;
  q = q * t + 2.7291738987e-01f;
  q = q * t + 6.5814302070e-04f;
  const V big = 1.0f - fast_exp(-z) * q;
  // NaN takes the `big` branch and stays NaN.
  const V r = a < splat<V>(0.875f) ? small : (a >= splat<V>(4.0f) ? splat<V>(1.0f) : big);
  return copysign(r, x);
}
inline double fast_erf(double x) { return std::erf(x); }

}  // namespace ember::cpu

#undef EMBER_VMATH
