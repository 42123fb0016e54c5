// Note [normal in blocks of 16]
// torch fills a contiguous tensor of n >= 16 elements with n uniform draws, turns each block of
// 16 into 16 normals by Box-Muller (u1 from the first 8, u2 from the last 8, cosines then
// sines), and, when 16 does not divide n, draws 16 uniforms more for the last 16 elements and
// redoes them. float on an AVX2 or AVX-512 tier takes torch's AVX2 block, whose log and sincos
// are Cephes polynomials (Julien Pommier's avx_mathfun) with the fused multiply-adds GCC forms
// there; elsewhere the block is scalar libm. The 16-bit types run the float blocks, drawing 16
// uniforms per block (none for the elements the last block redoes), and round.
#include "ember/cpu/random_normal.h"

#include <cmath>
#include <cstring>
#include <numbers>
#include <type_traits>
#include <vector>

#include "ember/cpu/isa.h"
#include "ember/cpu/random_draw.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EMBER_NORMAL_AVX2 1
#endif

namespace ember::cpu {

namespace {

template <class T>
void scalar_block(T* d, T mean, T std) {
  for (int j = 0; j < 8; ++j) {
    const T u1 = 1 - d[j], u2 = d[j + 8];
    const T radius = std::sqrt(-2 * std::log(u1));
    const T theta = T(2.0 * std::numbers::pi * double(u2));
    d[j] = std::fma(radius * std::cos(theta), std, mean);
    d[j + 8] = std::fma(radius * std::sin(theta), std, mean);
  }
}

#ifdef EMBER_NORMAL_AVX2
#define EMBER_AVX2 __attribute__((target("avx2,fma")))

EMBER_AVX2 __m256 splat(float v) { return _mm256_set1_ps(v); }

// ln(x) for x in (0, 1]: the exponent, a mantissa in [sqrt(1/2), sqrt(2)) and a degree-8
// polynomial (Cephes logf).
EMBER_AVX2 __m256 log_avx2(__m256 x) {
  x = _mm256_max_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(0x00800000)));
  __m256i bits = _mm256_srli_epi32(_mm256_castps_si256(x), 23);
  x = _mm256_and_ps(x, _mm256_castsi256_ps(_mm256_set1_epi32(~0x7f800000)));
  x = _mm256_or_ps(x, splat(0.5f));
  __m256 e = _mm256_add_ps(_mm256_cvtepi32_ps(_mm256_sub_epi32(bits, _mm256_set1_epi32(0x7f))),
                           splat(1.0f));
  const __m256 small = _mm256_cmp_ps(x, splat(0.707106781186547524f), _CMP_LT_OS);
  const __m256 tmp = _mm256_and_ps(x, small);
  x = _mm256_sub_ps(x, splat(1.0f));
  e = _mm256_sub_ps(e, _mm256_and_ps(splat(1.0f), small));
  x = _mm256_add_ps(x, tmp);
  const __m256 z = _mm256_mul_ps(x, x);
  static constexpr float kP[9] = {7.0376836292E-2f,  -1.1514610310E-1f, 1.1676998740E-1f,
                                  -1.2420140846E-1f, 1.4249322787E-1f,  -1.6668057665E-1f,
                                  2.0000714765E-1f,  -2.4999993993E-1f, 3.3333331174E-1f};
  __m256 y = splat(kP[0]);
  for (int i = 1; i < 9; ++i) y = _mm256_fmadd_ps(y, x, splat(kP[i]));
  y = _mm256_mul_ps(y, x);
  y = _mm256_fmadd_ps(y, z, _mm256_mul_ps(e, splat(-2.12194440e-4f)));
  y = _mm256_fnmadd_ps(z, splat(0.5f), y);
  x = _mm256_add_ps(x, y);
  return _mm256_fmadd_ps(e, splat(0.693359375f), x);
}

// sin and cos of x >= 0: reduction by pi/4 in three parts, then Cephes' two polynomials, picked
// and signed by the octant.
EMBER_AVX2 void sincos_avx2(__m256 x, __m256* s, __m256* c) {
  const __m256 sign_mask = _mm256_castsi256_ps(_mm256_set1_epi32(int(0x80000000u)));
  __m256 sign_sin = _mm256_and_ps(x, sign_mask);
  x = _mm256_andnot_ps(sign_mask, x);
  __m256i q = _mm256_cvttps_epi32(_mm256_mul_ps(x, splat(1.27323954473516f)));
  q = _mm256_and_si256(_mm256_add_epi32(q, _mm256_set1_epi32(1)), _mm256_set1_epi32(~1));
  const __m256 y = _mm256_cvtepi32_ps(q);
  const __m256 swap_sin =
      _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_and_si256(q, _mm256_set1_epi32(4)), 29));
  const __m256 poly = _mm256_castsi256_ps(
      _mm256_cmpeq_epi32(_mm256_and_si256(q, _mm256_set1_epi32(2)), _mm256_setzero_si256()));
  x = _mm256_fmadd_ps(y, splat(-0.78515625f), x);
  x = _mm256_fmadd_ps(y, splat(-2.4187564849853515625e-4f), x);
  x = _mm256_fmadd_ps(y, splat(-3.77489497744594108e-8f), x);
  const __m256 sign_cos = _mm256_castsi256_ps(_mm256_slli_epi32(
      _mm256_andnot_si256(_mm256_sub_epi32(q, _mm256_set1_epi32(2)), _mm256_set1_epi32(4)), 29));
  sign_sin = _mm256_xor_ps(sign_sin, swap_sin);
  const __m256 z = _mm256_mul_ps(x, x);
  __m256 yc = _mm256_fmadd_ps(splat(2.443315711809948E-005f), z, splat(-1.388731625493765E-003f));
  yc = _mm256_fmadd_ps(yc, z, splat(4.166664568298827E-002f));
  yc = _mm256_mul_ps(yc, z);
  yc = _mm256_fmsub_ps(yc, z, _mm256_mul_ps(z, splat(0.5f)));
  yc = _mm256_add_ps(yc, splat(1.0f));
  __m256 ys = _mm256_fmadd_ps(splat(-1.9515295891E-4f), z, splat(8.3321608736E-3f));
  ys = _mm256_fmadd_ps(ys, z, splat(-1.6666654611E-1f));
  ys = _mm256_mul_ps(ys, z);
  ys = _mm256_fmadd_ps(ys, x, x);
  *s = _mm256_xor_ps(_mm256_blendv_ps(yc, ys, poly), sign_sin);
  *c = _mm256_xor_ps(_mm256_blendv_ps(ys, yc, poly), sign_cos);
}

EMBER_AVX2 void avx2_block(float* d, float mean, float std) {
  const __m256 u1 = _mm256_sub_ps(splat(1.0f), _mm256_loadu_ps(d));
  const __m256 u2 = _mm256_loadu_ps(d + 8);
  const __m256 radius = _mm256_sqrt_ps(_mm256_mul_ps(splat(-2.0f), log_avx2(u1)));
  const __m256 theta = _mm256_mul_ps(splat(float(2.0 * std::numbers::pi)), u2);
  __m256 s, c;
  sincos_avx2(theta, &s, &c);
  _mm256_storeu_ps(d, _mm256_fmadd_ps(_mm256_mul_ps(radius, c), splat(std), splat(mean)));
  _mm256_storeu_ps(d + 8, _mm256_fmadd_ps(_mm256_mul_ps(radius, s), splat(std), splat(mean)));
}
#endif

template <class T>
T unit_of(Generator& g) {
  if constexpr (std::is_same_v<T, double>) return unit_double(g);
  else return unit_float(g);
}

// Box-Muller over d[0, n) whose first `drawn` elements hold uniforms: whole blocks, then the
// last 16 again from 16 new draws.
template <class T>
void blocks(T* d, int64_t n, int64_t drawn, T mean, T std, Generator& g) {
  auto block = [&](T* b) {
#ifdef EMBER_NORMAL_AVX2
    if constexpr (std::is_same_v<T, float>) {
      if (kBestIsa != Isa::baseline) return avx2_block(b, mean, std);
    }
#endif
    scalar_block(b, mean, std);
  };
  for (int64_t i = 0; i < drawn; ++i) d[i] = unit_of<T>(g);
  for (int64_t i = 0; i + 16 <= n; i += 16) {
    if (i >= drawn)
      for (int64_t k = i; k < i + 16; ++k) d[k] = unit_of<T>(g);
    block(d + i);
  }
  if (n % 16 != 0) {
    T* tail = d + n - 16;
    for (int k = 0; k < 16; ++k) tail[k] = unit_of<T>(g);
    block(tail);
  }
}

template <class T>
void narrow_fill(T* data, int64_t n, double mean, double std, Generator& g) {
  std::vector<float> buf(static_cast<size_t>(n));
  blocks(buf.data(), n, 0, float(mean), float(std), g);
  for (int64_t i = 0; i < n; ++i) data[i] = T(buf[size_t(i)]);
}

}  // namespace

void normal_fill(float* data, int64_t n, double mean, double std, Generator& g) {
  blocks(data, n, n, float(mean), float(std), g);
}
void normal_fill(double* data, int64_t n, double mean, double std, Generator& g) {
  blocks(data, n, n, mean, std, g);
}
void normal_fill(Half* data, int64_t n, double mean, double std, Generator& g) {
  narrow_fill(data, n, mean, std, g);
}
void normal_fill(BFloat16* data, int64_t n, double mean, double std, Generator& g) {
  narrow_fill(data, n, mean, std, g);
}

}  // namespace ember::cpu
