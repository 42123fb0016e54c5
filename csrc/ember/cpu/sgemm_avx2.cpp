// The AVX2 register tile and packers of sgemm (Note [SGEMM]): the same blocking, threads and
// order of summation as the AVX-512 tier, so both give the same bits.
#include <algorithm>
#include <array>

#include "ember/cpu/sgemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_SGEMM_AVX2 1
#endif

namespace ember::cpu::sgemm_detail {

#ifdef EMBER_SGEMM_AVX2

namespace {

// 16 registers: a tile of kMr rows x 16 columns holds 12 accumulators, 2 vectors of b and a
// broadcast of a.
constexpr int64_t kCols = 16;

// c[0..R) x [0..16) = (load ? scale * c : 0) + A (R x kc) @ bp (kc x 16, rows ldb apart).
template <int R>
__attribute__((target("avx2,fma"))) void tile(int64_t kc, const float* a, int64_t ar, int64_t ac,
                                              const float* bp, int64_t ldb, float* c, int64_t ldc,
                                              bool load, float scale) {
  __m256 acc[R][2];
  const __m256 vscale = _mm256_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v)
      acc[r][v] =
          load ? _mm256_mul_ps(_mm256_loadu_ps(c + r * ldc + 8 * v), vscale) : _mm256_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    const __m256 b0 = _mm256_load_ps(bp + p * ldb), b1 = _mm256_load_ps(bp + p * ldb + 8);
    const float* ap = a + p * ac;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(ap + r * ar);
      acc[r][0] = _mm256_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm256_fmadd_ps(av, b1, acc[r][1]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 2
    for (int v = 0; v < 2; ++v) _mm256_storeu_ps(c + r * ldc + 8 * v, acc[r][v]);
}

using Tile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                      int64_t, bool, float);
constexpr std::array<Tile, kMr> kTiles = {tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};

__attribute__((target("avx2,fma"))) void panel(int64_t rows, int64_t w, int64_t kc, const float* a,
                                               int64_t ar, int64_t ac, const float* bp, float* c,
                                               int64_t ldc, bool load, float scale,
                                               const float* next) {
  // The next tile of c, from memory when c is large, arrives while this one computes.
  for (int r = 0; r < kMr; ++r)
    for (int v = 0; v < kNr; v += 16)
      _mm_prefetch(reinterpret_cast<const char*>(next + r * ldc + v), _MM_HINT_T0);
  const int64_t ldb = (w + 15) / 16 * 16;
  const Tile t = kTiles[rows - 1];
  for (int64_t s = 0; s < w; s += kCols) {
    const int64_t cols = std::min(kCols, w - s);
    if (cols == kCols) {
      t(kc, a, ar, ac, bp + s, ldb, c + s, ldc, load, scale);
      continue;
    }
    // A ragged last block goes through a full-width copy of its part of c: the same
    // multiply-adds, in the same order, as a full block.
    alignas(32) float part[kMr * kCols] = {};
    if (load)
      for (int64_t r = 0; r < rows; ++r) std::copy_n(c + r * ldc + s, cols, part + r * kCols);
    t(kc, a, ar, ac, bp + s, ldb, part, kCols, load, scale);
    for (int64_t r = 0; r < rows; ++r) std::copy_n(part + r * kCols, cols, c + r * ldc + s);
  }
}

// dst rows i < 8 (ldd apart) = column i of the 8 x 8 block src (rows lds apart).
__attribute__((target("avx2,fma"))) void transpose8(const float* src, int64_t lds, float* dst,
                                                    int64_t ldd) {
  __m256 r[8], t[8];
  for (int i = 0; i < 8; ++i) r[i] = _mm256_loadu_ps(src + i * lds);
  for (int i = 0; i < 4; ++i) {
    t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // Within each 128-bit lane, r[4 g + c] holds column 4 l + c of rows 4 g .. 4 g + 3.
  for (int g = 0; g < 2; ++g) {
    r[4 * g] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0x44);
    r[4 * g + 1] = _mm256_shuffle_ps(t[4 * g], t[4 * g + 2], 0xEE);
    r[4 * g + 2] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0x44);
    r[4 * g + 3] = _mm256_shuffle_ps(t[4 * g + 1], t[4 * g + 3], 0xEE);
  }
  for (int c = 0; c < 4; ++c) {
    _mm256_storeu_ps(dst + c * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x20));
    _mm256_storeu_ps(dst + (4 + c) * ldd, _mm256_permute2f128_ps(r[c], r[4 + c], 0x31));
  }
}

__attribute__((target("avx2,fma"))) void pack_b(int64_t kc, int64_t w, const float* b, int64_t rs,
                                                int64_t cs, float* dst) {
  const int64_t ldp = (w + 15) / 16 * 16;
  if (cs == 1) {  // row-major: row copies
    for (int64_t p = 0; p < kc; ++p) {
      std::copy_n(b + p * rs, w, dst + p * ldp);
      std::fill(dst + p * ldp + w, dst + (p + 1) * ldp, 0.0f);
    }
    return;
  }
  int64_t j = 0;
  if (rs == 1)  // transposed: 8 x 8 blocks through registers, the ragged ends below
    for (; j + 8 <= w; j += 8) {
      int64_t p = 0;
      for (; p + 8 <= kc; p += 8) transpose8(b + p + j * cs, cs, dst + p * ldp + j, ldp);
      for (; p < kc; ++p)
        for (int64_t q = j; q < j + 8; ++q) dst[p * ldp + q] = b[p + q * cs];
    }
  pack_b_columns(kc, j, w, b, rs, cs, dst, ldp);
}

__attribute__((target("avx2,fma"))) void pack_a(int64_t mc, int64_t kc, float alpha, const float* a,
                                                int64_t rs, int64_t cs, float* dst) {
  for (int64_t i = 0; i < mc; i += kMr) {
    const int64_t rows = std::min(kMr, mc - i);
    float* d = dst + i * kc;
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t r = 0; r < rows; ++r) d[p * kMr + r] = alpha * a[(i + r) * rs + p * cs];
  }
}

}  // namespace

const Kernels kAvx2Kernels = {panel, pack_b, pack_a};

#else

const Kernels kAvx2Kernels = {nullptr, nullptr, nullptr};

#endif

}  // namespace ember::cpu::sgemm_detail
