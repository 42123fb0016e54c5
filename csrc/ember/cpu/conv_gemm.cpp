// The AVX-512 float GEMM of the convolution kernels (Note [Conv GEMM]).
#include "ember/cpu/conv_gemm.h"

#include <algorithm>

#include "ember/core/parallel.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_CONV_SGEMM 1
#endif

namespace ember::cpu {

#ifdef EMBER_CONV_SGEMM

namespace {

// k per block: a block of b (kBlockK x 32 floats, 32 KB) stays in L1 while every row tile reads it.
constexpr int64_t kBlockK = 256;
// Multiply-adds per parallel task (a task is a run of whole column panels).
constexpr int64_t kPanelWork = int64_t(1) << 20;

const bool kHasAvx512 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx512f");
}();

// c[0..R) x [0..32) (+)= A(0..R, 0..k) @ b[0..k) x [0..32); columns beyond the masks are untouched.
template <int R>
__attribute__((target("avx512f"))) void tile(int64_t k, const float* a, int64_t a_row,
                                             int64_t a_col, const float* b, int64_t ldb, float* c,
                                             int64_t ldc, __mmask16 m0, __mmask16 m1,
                                             bool accumulate) {
  __m512 acc0[R], acc1[R];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    acc0[r] = accumulate ? _mm512_maskz_loadu_ps(m0, c + r * ldc) : _mm512_setzero_ps();
    acc1[r] = accumulate ? _mm512_maskz_loadu_ps(m1, c + r * ldc + 16) : _mm512_setzero_ps();
  }
  for (int64_t p = 0; p < k; ++p) {
    const __m512 b0 = _mm512_maskz_loadu_ps(m0, b + p * ldb);
    const __m512 b1 = _mm512_maskz_loadu_ps(m1, b + p * ldb + 16);
    const float* ap = a + p * a_col;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r * a_row]);
      acc0[r] = _mm512_fmadd_ps(av, b0, acc0[r]);
      acc1[r] = _mm512_fmadd_ps(av, b1, acc1[r]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    _mm512_mask_storeu_ps(c + r * ldc, m0, acc0[r]);
    _mm512_mask_storeu_ps(c + r * ldc + 16, m1, acc1[r]);
  }
}

using Tile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, int64_t, float*,
                      int64_t, __mmask16, __mmask16, bool);
constexpr Tile kTiles[9] = {nullptr, tile<1>, tile<2>, tile<3>, tile<4>,
                            tile<5>, tile<6>, tile<7>, tile<8>};

__mmask16 lanes(int64_t n) { return n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1); }

}  // namespace

bool has_conv_sgemm() { return kHasAvx512; }

void conv_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float* c, int64_t ldc) {
  // Panels of 32 columns; in a parallel region (a chunk of a conv) this runs serially.
  const int64_t panels = (n + 31) / 32;
  const int64_t grain = std::max<int64_t>(1, kPanelWork / std::max<int64_t>(1, m * k * 32));
  parallel_for(0, panels, grain, [&](int64_t q0, int64_t q1) {
    for (int64_t j = q0 * 32; j < std::min(n, q1 * 32); j += 32) {
      const int64_t cols = std::min<int64_t>(32, n - j);
      const __mmask16 m0 = lanes(cols), m1 = lanes(std::max<int64_t>(0, cols - 16));
      if (k == 0) {  // an empty sum: zeros
        for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc + j, cols, 0.0f);
        continue;
      }
      for (int64_t p = 0; p < k; p += kBlockK) {
        const int64_t kb = std::min(kBlockK, k - p);
        for (int64_t i = 0; i < m; i += 8)
          kTiles[std::min<int64_t>(8, m - i)](kb, a + i * a_row + p * a_col, a_row, a_col,
                                              b + p * ldb + j, ldb, c + i * ldc + j, ldc, m0, m1,
                                              p > 0);
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
