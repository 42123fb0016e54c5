#pragma once
// torch's CPU distributions over the mt19937 stream (Note [torch's random stream]): which draws
// each sample takes and how they become a value, bit for bit. Call with the generator locked.
//
// Note [fused sampling arithmetic]
// torch compiles its sampling kernels once per CPU capability, and the AVX2 and AVX-512 builds
// contract `a * b + c` into one fused multiply-add where the baseline build rounds twice. The
// same seed thus gives other last bits on ATEN_CPU_CAPABILITY=default; `fused` (the tier
// ember runs at, cpu/isa.h) picks the same rounding as torch at that tier.
#include <cmath>
#include <cstdint>
#include <numbers>

#include "ember/core/generator.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

inline bool fused_sampling() { return kBestIsa != Isa::baseline; }

template <class A>
A affine(bool fused, A x, A scale, A shift) {
  return fused ? std::fma(x, scale, shift) : x * scale + shift;
}

/// U[0, 1) from the low 24 bits of one draw (float and the 16-bit types).
inline float unit_float(Generator& g) { return float(g.random() & 0xffffffu) * 0x1p-24f; }
/// U[0, 1) from the low 53 bits of random64().
inline double unit_double(Generator& g) {
  return double(g.random64() & ((uint64_t(1) << 53) - 1)) * 0x1p-53;
}

/// torch's normal_distribution<double>: a Box-Muller pair from two double draws, the sine half
/// kept in the generator for the next call.
inline double standard_normal(Generator& g) {
  auto& cached = g.next_double_normal();
  if (cached) {
    double v = *cached;
    cached.reset();
    return v;
  }
  const double u1 = unit_double(g), u2 = unit_double(g);
  const double r = std::sqrt(-2.0 * std::log1p(-u2)), theta = 2.0 * std::numbers::pi * u1;
  cached = r * std::sin(theta);
  return r * std::cos(theta);
}

// Note [MKL Bernoulli]
// On Intel CPUs torch's bernoulli_(p) with a scalar p (dropout's mask) takes one draw as the seed
// of MKL's MCG31m1 stream (x_0 = seed mod m, or 1 for 0; x_k+1 = 1132489760 x_k mod m with
// m = 2^31 - 1) and sets element i (row-major) to x_i / m < p, each chunk skipping ahead to its
// first element; other CPUs take per-element double draws. Checked against MKL 2024.2's
// viRngBernoulli (VSL_RNG_METHOD_BERNOULLI_ICDF).
bool bernoulli_uses_mkl_stream();
/// out[i] = sample first + i of the Bernoulli(p) MCG31m1 stream seeded with `seed`, i in [0, n).
void mcg31_bernoulli(int32_t* out, int64_t n, uint32_t seed, double p, int64_t first = 0);

}  // namespace ember::cpu
