#pragma once
// Row primitives shared by the softmax and fused cross-entropy kernels: max and exp-sum over a
// contiguous row. See Note [Vector exp].
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace ember::cpu {

// Note [Vector exp]
// The exp-sum pass dominates softmax and cross-entropy. libm's expf does not vectorize, so float
// rows use a 4-lane exp (GCC vector extensions, SSE2 baseline): round-to-nearest range
// reduction x = n ln2 + r by the 1.5 * 2^23 trick, Cephes' degree-6 polynomial for e^r (about
// 1 ulp), and 2^n built in the exponent bits. Inputs below -87.3 give 0 and above 88.7 give inf;
// NaN propagates. double rows use std::exp.
using vf4 = float __attribute__((vector_size(16)));
using vi4 = int32_t __attribute__((vector_size(16)));

inline vf4 vexp(vf4 x) {
  const vf4 hi = vf4{} + 88.7228390f, lo = vf4{} + -87.3365448f, magic = vf4{} + 12582912.0f;
  vf4 xc = x > hi ? hi : x;
  xc = xc < lo ? lo : xc;
  vf4 t = xc * 1.44269504089f + magic;
  vf4 n = t - magic;
  vi4 ni = (vi4)t - (vi4)magic;
  vf4 r = xc - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  vf4 p = vf4{} + 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  vf4 y = p * r * r + r + 1.0f;
  y = y * (vf4)((ni + 127) << 23);
  y = x < lo ? vf4{} : y;
  return x > hi ? vf4{} + std::numeric_limits<float>::infinity() : y;
}

inline vf4 load4(const float* p) {
  vf4 v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store4(float* p, vf4 v) { std::memcpy(p, &v, sizeof v); }

/// Largest element of a row (NaN-oblivious: a NaN row still ends up NaN through exp).
inline float row_max(const float* x, int64_t n) {
  vf4 m = vf4{} - std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    vf4 v = load4(x + i);
    m = v > m ? v : m;
  }
  float r = std::max(std::max(m[0], m[1]), std::max(m[2], m[3]));
  for (; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}
inline double row_max(const double* x, int64_t n) {
  double r = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

/// Sum of exp(x[i] - shift) over a row; also stores each term in `out` unless it is null.
inline float exp_sum(const float* x, float* out, int64_t n, float shift) {
  vf4 acc{};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    vf4 e = vexp(load4(x + i) - shift);
    if (out) store4(out + i, e);
    acc += e;
  }
  if (i < n) {
    float tail[4] = {0, 0, 0, 0};
    std::memcpy(tail, x + i, size_t(n - i) * sizeof(float));
    vf4 e = vexp(load4(tail) - shift);
    for (int64_t k = 0; k < n - i; ++k) {
      if (out) out[i + k] = e[k];
      acc[k] += e[k];
    }
  }
  return (acc[0] + acc[1]) + (acc[2] + acc[3]);
}
inline double exp_sum(const double* x, double* out, int64_t n, double shift) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = std::exp(x[i] - shift);
    if (out) out[i] = e;
    s += e;
  }
  return s;
}

/// exp over a row: out[i] = exp(x[i] - shift).
inline void exp_row(const float* x, float* out, int64_t n, float shift) { exp_sum(x, out, n, shift); }
inline void exp_row(const double* x, double* out, int64_t n, double shift) {
  for (int64_t i = 0; i < n; ++i) out[i] = std::exp(x[i] - shift);
}

}  // namespace ember::cpu
