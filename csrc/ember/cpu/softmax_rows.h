#pragma once
// Row primitives shared by the softmax and fused cross-entropy kernels, over contiguous rows.
// float rows run vectorized code chosen once per process (Note [Vector exp]); double rows are
// plain loops with std::exp.
#include <cmath>
#include <cstdint>
#include <limits>

namespace ember::cpu {

// Note [Vector exp]
// The exp-sum pass dominates softmax and cross-entropy, and libm's expf does not vectorize. The
// float primitives use cpu/vmath.h's fast_exp<false> on GCC vector types (Note [Vector math]:
// about 1 ulp, the same values as ember.exp except that results below float's normal range,
// x < -87.34, are 0; inf above 88.7, NaN stays NaN). They are compiled three times
// (cpu/softmax_rows.cpp): SSE2 (the build's baseline), AVX2+FMA and AVX-512, the widest the CPU has
// used (kBestIsa, cpu/isa.h).

/// The float row primitives of one instruction set.
struct RowKernels {
  float (*max)(const float* x, int64_t n);
  /// out[i] = a * exp(x[i] - shift) - b (out may be null); returns sum exp(x[i] - shift).
  float (*exp_affine)(const float* x, float* out, int64_t n, float shift, float a, float b);
  /// y[i] = x[i] * s + b.
  void (*affine)(const float* x, float* y, int64_t n, float s, float b);
  /// sum(a[i] * b[i]), or sum(a[i]) when b is null.
  float (*dot)(const float* a, const float* b, int64_t n);
  /// out = y * (g - acc).
  void (*softmax_grad)(const float* g, const float* y, float* out, int64_t n, float acc);
  /// out = g - exp(y) * acc.
  void (*log_softmax_grad)(const float* g, const float* y, float* out, int64_t n, float acc);
};

/// The best RowKernels for this CPU.
const RowKernels& row_kernels();

inline float row_max(const float* x, int64_t n) { return row_kernels().max(x, n); }
inline double row_max(const double* x, int64_t n) {
  double r = -std::numeric_limits<double>::infinity();
  for (int64_t i = 0; i < n; ++i) r = x[i] > r ? x[i] : r;
  return r;
}

/// out[i] = a * exp(x[i] - shift) - b unless out is null; returns sum exp(x[i] - shift).
inline float exp_affine(const float* x, float* out, int64_t n, float shift, float a = 1,
                        float b = 0) {
  return row_kernels().exp_affine(x, out, n, shift, a, b);
}
inline double exp_affine(const double* x, double* out, int64_t n, double shift, double a = 1,
                         double b = 0) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) {
    double e = std::exp(x[i] - shift);
    if (out) out[i] = a * e - b;
    s += e;
  }
  return s;
}

/// y[i] = x[i] * s + b.
inline void affine_row(const float* x, float* y, int64_t n, float s, float b) {
  row_kernels().affine(x, y, n, s, b);
}
inline void affine_row(const double* x, double* y, int64_t n, double s, double b) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s + b;
}

/// sum(a[i] * b[i]), or sum(a[i]) when b is null.
inline float dot_row(const float* a, const float* b, int64_t n) {
  return row_kernels().dot(a, b, n);
}
inline double dot_row(const double* a, const double* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += b ? a[i] * b[i] : a[i];
  return s;
}

/// softmax backward over a row: out = y * (g - acc).
inline void softmax_grad_row(const float* g, const float* y, float* out, int64_t n, float acc) {
  row_kernels().softmax_grad(g, y, out, n, acc);
}
inline void softmax_grad_row(const double* g, const double* y, double* out, int64_t n, double acc) {
  for (int64_t i = 0; i < n; ++i) out[i] = y[i] * (g[i] - acc);
}

/// log_softmax backward over a row: out = g - exp(y) * acc.
inline void log_softmax_grad_row(const float* g, const float* y, float* out, int64_t n, float acc) {
  row_kernels().log_softmax_grad(g, y, out, n, acc);
}
inline void log_softmax_grad_row(const double* g, const double* y, double* out, int64_t n,
                                 double acc) {
  for (int64_t i = 0; i < n; ++i) out[i] = g[i] - std::exp(y[i]) * acc;
}

}  // namespace ember::cpu
