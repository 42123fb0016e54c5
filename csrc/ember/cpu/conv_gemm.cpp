// The AVX-512 float GEMM of the convolution kernels (Note [Conv GEMM]).
#include "ember/cpu/conv_gemm.h"

#include <algorithm>
#include <memory>

#include "ember/core/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_CONV_SGEMM 1
#endif

namespace ember::cpu {

#ifdef EMBER_CONV_SGEMM

namespace {

// Register tile: kRows rows x 64 columns (4 zmm) = 24 accumulators, so each k step issues 24
// FMAs for 4 vector loads and 6 broadcasts.
constexpr int64_t kRows = 6;
constexpr int64_t kCols = 64;
// k per block: a packed block of b (kBlockK x 64 floats, 32 KB) stays in L1 for every row tile.
constexpr int64_t kBlockK = 128;
// Multiply-adds per parallel task (a task is a run of whole column panels).
constexpr int64_t kPanelWork = int64_t(1) << 20;

const bool kHasAvx512 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}();

// c[0..R) x [0..64) (+)= A (R x k) @ b (k x 64, rows ldb apart), A(r, p) = a[r * ar + p * ac];
// masks limit the columns.
template <int R>
__attribute__((target("avx512f"))) void tile(int64_t k, const float* a, int64_t ar, int64_t ac,
                                             const float* bp, int64_t ldb, float* c, int64_t ldc,
                                             const __mmask16* mask, bool accumulate) {
  __m512 acc[R][4];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      acc[r][v] = accumulate ? _mm512_maskz_loadu_ps(mask[v], c + r * ldc + 16 * v)
                             : _mm512_setzero_ps();
  for (int64_t p = 0; p < k; ++p) {
    const float* b = bp + p * ldb;
    const __m512 b0 = _mm512_loadu_ps(b), b1 = _mm512_loadu_ps(b + 16);
    const __m512 b2 = _mm512_loadu_ps(b + 32), b3 = _mm512_loadu_ps(b + 48);
    const float* ap = a + p * ac;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r * ar]);
      acc[r][0] = _mm512_fmadd_ps(av, b0, acc[r][0]);
      acc[r][1] = _mm512_fmadd_ps(av, b1, acc[r][1]);
      acc[r][2] = _mm512_fmadd_ps(av, b2, acc[r][2]);
      acc[r][3] = _mm512_fmadd_ps(av, b3, acc[r][3]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v) _mm512_mask_storeu_ps(c + r * ldc + 16 * v, mask[v], acc[r][v]);
}

using Tile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                      int64_t, const __mmask16*, bool);
constexpr Tile kTiles[kRows + 1] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>, tile<5>, tile<6>};

__mmask16 lanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

}  // namespace

bool has_conv_sgemm() { return kHasAvx512; }

void conv_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float* c, int64_t ldc) {
  const int64_t panels = (n + kCols - 1) / kCols;
  if (k == 0) {  // an empty sum: zeros
    for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    return;
  }
  // A transposed (columns contiguous) is packed once, tile by tile, as (k, kRows), so a step's
  // broadcasts are adjacent instead of a row of A apart; a row-major A is read in place.
  const int64_t tiles = (m + kRows - 1) / kRows;
  std::unique_ptr<float[]> apack;
  if (a_col != 1) {
    apack.reset(new float[size_t(tiles * k * kRows)]());
    for (int64_t t = 0; t < tiles; ++t)
      for (int64_t p = 0; p < k; ++p)
        for (int64_t r = 0; r < std::min(kRows, m - t * kRows); ++r)
          apack[size_t((t * k + p) * kRows + r)] = a[(t * kRows + r) * a_row + p * a_col];
  }
  auto a_tile = [&](int64_t t, int64_t p) {
    return apack ? apack.get() + (t * k + p) * kRows : a + t * kRows * a_row + p;
  };
  const int64_t ar = apack ? 1 : a_row, ac = apack ? kRows : 1;
  // Panels of 64 columns; in a parallel region (a chunk of a conv) this runs serially.
  const int64_t grain = std::max<int64_t>(1, kPanelWork / std::max<int64_t>(1, m * k * kCols));
  parallel_for(0, panels, grain, [&](int64_t q0, int64_t q1) {
    alignas(64) float bpack[kBlockK * kCols];
    for (int64_t j = q0 * kCols; j < std::min(n, q1 * kCols); j += kCols) {
      const int64_t cols = std::min<int64_t>(kCols, n - j);
      const __mmask16 mask[4] = {lanes(cols), lanes(cols - 16), lanes(cols - 32), lanes(cols - 48)};
      // A full panel of a b whose rows are a panel wide is read in place; others are packed.
      const bool in_place = cols == kCols && ldb == kCols;
      for (int64_t p = 0; p < k; p += kBlockK) {
        const int64_t kb = std::min(kBlockK, k - p);
        if (!in_place)
          for (int64_t q = 0; q < kb; ++q) {
            float* dst = bpack + q * kCols;
            std::copy_n(b + (p + q) * ldb + j, cols, dst);
            std::fill(dst + cols, dst + kCols, 0.0f);
          }
        const float* bp = in_place ? b + p * ldb + j : bpack;
        for (int64_t t = 0; t < tiles; ++t)
          kTiles[std::min(kRows, m - t * kRows)](kb, a_tile(t, p), ar, ac, bp, kCols,
                                                 c + t * kRows * ldc + j, ldc, mask, p > 0);
      }
    }
  });
}

#else

bool has_conv_sgemm() { return false; }

void conv_sgemm(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const float*, int64_t,
                float*, int64_t) {}

#endif

}  // namespace ember::cpu
