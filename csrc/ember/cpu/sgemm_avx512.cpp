// The AVX-512 register tile and packers of sgemm (Note [SGEMM]).
#include <algorithm>
#include <array>

#include "ember/cpu/sgemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_SGEMM_AVX512 1
#endif

namespace ember::cpu::sgemm_detail {

#ifdef EMBER_SGEMM_AVX512

namespace {

__mmask16 lanes(int64_t n) {
  return n >= 16 ? __mmask16(0xFFFF) : n <= 0 ? __mmask16(0) : __mmask16((1u << n) - 1);
}

// c[0..R) x [0..16 V) = (load ? scale * c : 0) + A (R x kc) @ bp (kc x 16 V, packed), with
// A(r, p) = a[r * ar + p * ac]; `last` masks the columns of the last vector.
template <int R, int V>
__attribute__((target("avx512f"))) void tile(int64_t kc, const float* a, int64_t ar, int64_t ac,
                                             const float* bp, float* c, int64_t ldc, __mmask16 last,
                                             bool load, float scale, const float* next) {
  constexpr int64_t ldb = 16 * V;
  // The next tile of c, from memory when c is large, arrives while this one computes.
#pragma GCC unroll 8
  for (int r = 0; r < kMr; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < 4; ++v)
      _mm_prefetch(reinterpret_cast<const char*>(next + r * ldc + 16 * v), _MM_HINT_T0);
  __m512 acc[R][V];
  const __m512 vscale = _mm512_set1_ps(scale);
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      acc[r][v] =
          load
              ? _mm512_mul_ps(
                    _mm512_maskz_loadu_ps(v == V - 1 ? last : 0xFFFF, c + r * ldc + 16 * v), vscale)
              : _mm512_setzero_ps();
  for (int64_t p = 0; p < kc; ++p) {
    __m512 b[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) b[v] = _mm512_load_ps(bp + p * ldb + 16 * v);
    const float* ap = a + p * ac;
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(ap[r * ar]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(av, b[v], acc[r][v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v)
      _mm512_mask_storeu_ps(c + r * ldc + 16 * v, v == V - 1 ? last : 0xFFFF, acc[r][v]);
}

using Tile = void (*)(int64_t, const float*, int64_t, int64_t, const float*, float*, int64_t,
                      __mmask16, bool, float, const float*);
template <int R>
constexpr std::array<Tile, 4> kRowTiles = {tile<R, 1>, tile<R, 2>, tile<R, 3>, tile<R, 4>};
// kTiles[rows - 1][vectors - 1]
constexpr std::array<Tile, 4> kTiles[kMr] = {kRowTiles<1>, kRowTiles<2>, kRowTiles<3>,
                                             kRowTiles<4>, kRowTiles<5>, kRowTiles<6>};

// GCC 12's unpack intrinsics pass _mm512_undefined_ps() as their unused merge source, which its
// -O1 builds (the sanitizers') report as uninitialized.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

// The 64-bit halves of x and y interleaved, low or high pairs of each 128-bit lane.
__attribute__((target("avx512f"))) inline __m512 lo(__m512 x, __m512 y) {
  return _mm512_castpd_ps(_mm512_unpacklo_pd(_mm512_castps_pd(x), _mm512_castps_pd(y)));
}
__attribute__((target("avx512f"))) inline __m512 hi(__m512 x, __m512 y) {
  return _mm512_castpd_ps(_mm512_unpackhi_pd(_mm512_castps_pd(x), _mm512_castps_pd(y)));
}

// dst rows i < 16 (ldd apart) = column i of the 16 x 16 block src (rows lds apart).
__attribute__((target("avx512f"))) void transpose16(const float* src, int64_t lds, float* dst,
                                                    int64_t ldd) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * lds);
  // Within each 128-bit lane: pairs of rows interleaved, then 4 x 4 blocks transposed.
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // r[4 g + c], lane l: column 4 l + c of rows 4 g .. 4 g + 3.
  for (int g = 0; g < 4; ++g) {
    r[4 * g] = lo(t[4 * g], t[4 * g + 2]);
    r[4 * g + 1] = hi(t[4 * g], t[4 * g + 2]);
    r[4 * g + 2] = lo(t[4 * g + 1], t[4 * g + 3]);
    r[4 * g + 3] = hi(t[4 * g + 1], t[4 * g + 3]);
  }
  // Output row 4 l + c gathers lane l of r[c], r[4 + c], r[8 + c], r[12 + c].
  for (int c = 0; c < 4; ++c) {
    const __m512 x_lo = _mm512_shuffle_f32x4(r[c], r[4 + c], 0x44);
    const __m512 x_hi = _mm512_shuffle_f32x4(r[c], r[4 + c], 0xEE);
    const __m512 y_lo = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0x44);
    const __m512 y_hi = _mm512_shuffle_f32x4(r[8 + c], r[12 + c], 0xEE);
    _mm512_storeu_ps(dst + c * ldd, _mm512_shuffle_f32x4(x_lo, y_lo, 0x88));
    _mm512_storeu_ps(dst + (4 + c) * ldd, _mm512_shuffle_f32x4(x_lo, y_lo, 0xDD));
    _mm512_storeu_ps(dst + (8 + c) * ldd, _mm512_shuffle_f32x4(x_hi, y_hi, 0x88));
    _mm512_storeu_ps(dst + (12 + c) * ldd, _mm512_shuffle_f32x4(x_hi, y_hi, 0xDD));
  }
}

#pragma GCC diagnostic pop

// Packs B(p, j) = b[p * rs + j * cs], p < kc, j < w <= kNr, as kc rows of ldp = w rounded up to
// 16 floats, zero-padded, so that the tile reads whole vectors.
__attribute__((target("avx512f"))) void pack_b(int64_t kc, int64_t w, const float* b, int64_t rs,
                                               int64_t cs, float* dst) {
  const int64_t ldp = (w + 15) / 16 * 16;
  if (cs == 1) {  // row-major: masked row copies
    for (int64_t p = 0; p < kc; ++p)
      for (int64_t v = 0; v < ldp; v += 16)
        _mm512_store_ps(dst + p * ldp + v, _mm512_maskz_loadu_ps(lanes(w - v), b + p * rs + v));
    return;
  }
  int64_t j = 0;
  if (rs == 1)  // transposed: 16 x 16 blocks through registers, the ragged ends below
    for (; j + 16 <= w; j += 16) {
      int64_t p = 0;
      for (; p + 16 <= kc; p += 16) transpose16(b + p + j * cs, cs, dst + p * ldp + j, ldp);
      for (; p < kc; ++p)
        for (int64_t q = j; q < j + 16; ++q) dst[p * ldp + q] = b[p + q * cs];
    }
  pack_b_columns(kc, j, w, b, rs, cs, dst, ldp);
}

// Packs alpha * A(i, p) = alpha * a[i * rs + p * cs], i < mc, p < kc, as tiles of kMr rows, each
// kc steps of kMr floats (the tile reads a step's rows adjacently).
__attribute__((target("avx512f"))) void pack_a(int64_t mc, int64_t kc, float alpha, const float* a,
                                               int64_t rs, int64_t cs, float* dst) {
  const __m512 va = _mm512_set1_ps(alpha);
  for (int64_t i = 0; i < mc; i += kMr) {
    const int64_t rows = std::min(kMr, mc - i);
    float* d = dst + i * kc;
    if (rs == 1) {  // a transposed (the input gradient's weight): a step's rows are adjacent
      const __mmask16 m = lanes(rows);
      for (int64_t p = 0; p < kc; ++p)
        _mm512_mask_storeu_ps(d + p * kMr, lanes(kMr),
                              _mm512_mul_ps(_mm512_maskz_loadu_ps(m, a + i + p * cs), va));
    } else {
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t p = 0; p < kc; ++p) d[p * kMr + r] = alpha * a[(i + r) * rs + p * cs];
    }
  }
}

void panel(int64_t rows, int64_t w, int64_t kc, const float* a, int64_t ar, int64_t ac,
           const float* bp, float* c, int64_t ldc, bool load, float scale, const float* next) {
  const int64_t vecs = (w + 15) / 16;
  kTiles[rows - 1][vecs - 1](kc, a, ar, ac, bp, c, ldc, lanes(w - 16 * (vecs - 1)), load, scale,
                             next);
}

}  // namespace

const Kernels kAvx512Kernels = {panel, pack_b, pack_a};

#else

const Kernels kAvx512Kernels = {nullptr, nullptr, nullptr};

#endif

}  // namespace ember::cpu::sgemm_detail
