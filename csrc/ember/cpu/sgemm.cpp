// The AVX-512 float32 GEMM (Note [SGEMM]).
#include "ember/cpu/sgemm.h"

#include <algorithm>
#include <array>
#include <memory>
#include <new>

#include "ember/core/parallel.h"
#include "ember/cpu/isa.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_SGEMM 1
#endif

namespace ember::cpu {

#ifdef EMBER_SGEMM

namespace {

// Register tile: kMr rows x kNr columns (4 zmm per row).
constexpr int64_t kMr = 6, kNr = 64;
// Blocks: a packed block of b (kKc x kNc, 1 MB) and a block of a (kMc x kKc, 192 KB) share the
// 2 MB L2 of a Sapphire Rapids core. On one thread, 1024^3 ran at 91 GFLOP/s with kKc = 384
// (overflowing L2) against 197; 2048^3 at 119 with kKc = 128 (c re-read twice as often) against
// 172 (noisy shared machine).
constexpr int64_t kKc = 256, kMc = 192, kNc = 1024;

// The AVX-512 tier, unless ATEN_CPU_CAPABILITY caps it (Note [CPU capability]).
const bool kHasAvx512 = kBestIsa == Isa::avx512;

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
  for (int64_t p = 0; p < kc; ++p) {
    for (int64_t q = j; q < w; ++q) dst[p * ldp + q] = b[p * rs + q * cs];
    std::fill(dst + p * ldp + w, dst + (p + 1) * ldp, 0.0f);
  }
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

struct Problem {
  int64_t m, n, k;
  float alpha;
  const float* a;
  int64_t a_rs, a_cs;
  const float* b;
  int64_t b_rs, b_cs;
  float beta;
  float* c;
  int64_t ldc;
  const PackB* pack = nullptr;  // computes b's panels when set
};

// A 64-byte aligned per-thread buffer of at least n floats, kept between calls.
float* scratch(int slot, int64_t n) {
  struct Free {
    void operator()(float* p) const { ::operator delete[](p, std::align_val_t(64)); }
  };
  thread_local std::unique_ptr<float[], Free> buf[2];
  thread_local int64_t size[2] = {0, 0};
  if (size[slot] < n) {
    buf[slot].reset(static_cast<float*>(::operator new[](size_t(n) * 4, std::align_val_t(64))));
    size[slot] = n;
  }
  return buf[slot].get();
}

// Computes rows [i0, i1) x columns [j0, j1) of c.
void run_rect(const Problem& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  // a is read in place when its rows are contiguous, and when its columns are and c has one
  // panel: a is then read once either way, and packing it (a transposed: 4096 x 32 x 256 spent
  // half its time there) only adds a copy.
  const bool a_in_place = g.alpha == 1.0f && (g.a_cs == 1 || (g.a_rs == 1 && j1 - j0 <= kNr));
  float* bbuf = scratch(0, kKc * std::min(kNc, (j1 - j0 + kNr - 1) / kNr * kNr));
  float* abuf = a_in_place ? nullptr : scratch(1, kMc * kKc);
  for (int64_t jc = j0; jc < j1; jc += kNc) {
    const int64_t nc = std::min(kNc, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += kKc) {
      const int64_t kc = std::min(kKc, g.k - pc);
      // Panel q of the block starts at bbuf + q * kc: each full panel is kc x kNr.
      for (int64_t q = 0; q < nc; q += kNr) {
        const int64_t w = std::min(kNr, nc - q);
        if (g.pack) (*g.pack)(pc, kc, jc + q, w, bbuf + q * kc);
        else pack_b(kc, w, g.b + pc * g.b_rs + (jc + q) * g.b_cs, g.b_rs, g.b_cs, bbuf + q * kc);
      }
      // The first k block starts the sum at beta * c (at 0 when beta is 0); later ones at c.
      const bool load = pc > 0 || g.beta != 0.0f;
      const float scale = pc > 0 ? 1.0f : g.beta;
      for (int64_t ic = i0; ic < i1; ic += kMc) {
        const int64_t mc = std::min(kMc, i1 - ic);
        const float* ablk = g.a + ic * g.a_rs + pc * g.a_cs;
        if (!a_in_place) pack_a(mc, kc, g.alpha, ablk, g.a_rs, g.a_cs, abuf);
        const int64_t ar = a_in_place ? g.a_rs : 1, ac = a_in_place ? g.a_cs : kMr;
        for (int64_t q = 0; q < nc; q += kNr) {
          const int64_t w = std::min(kNr, nc - q), vecs = (w + 15) / 16;
          const __mmask16 last = lanes(w - 16 * (vecs - 1));
          float* cq = g.c + ic * g.ldc + jc + q;
          for (int64_t i = 0; i < mc; i += kMr) {
            const float* at = a_in_place ? ablk + i * g.a_rs : abuf + i * kc;
            const float* next = i + kMr < mc ? cq + (i + kMr) * g.ldc : cq + kNr;
            kTiles[std::min(kMr, mc - i) - 1][vecs - 1](
                kc, at, ar, ac, bbuf + q * kc, cq + i * g.ldc, g.ldc, last, load, scale, next);
          }
        }
      }
    }
  }
}

// [begin, end) of part `i` of `parts` over `units` units of `size` elements, capped at `total`.
std::pair<int64_t, int64_t> part(int64_t i, int64_t parts, int64_t units, int64_t size,
                                 int64_t total) {
  return {std::min(total, units * i / parts * size),
          std::min(total, units * (i + 1) / parts * size)};
}

void run(const Problem& g) {
  const int64_t m = g.m, n = g.n, k = g.k;
  if (m <= 0 || n <= 0) return;
  if (k <= 0 || g.alpha == 0.0f) {  // no product: c = beta * c, and 0 without reading c
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        float& cij = g.c[i * g.ldc + j];
        cij = g.beta == 0.0f ? 0.0f : g.beta * cij;
      }
    return;
  }
  // Rectangles of whole panels and row tiles, several per thread, taken by the threads as they
  // come free: a thread the OS delays (a shared machine) holds back less than a fixed share.
  // Columns split first (a task packs only its columns of b), but into parts of at least kNc
  // columns while there are enough for every thread: a task reads all of its rows of a, from L3,
  // for every part, and parts of 2 panels made 1024^3 at 2 threads run at 353 GFLOP/s against
  // 392. Rows then split while there are fewer than two tasks per thread, and not below 16 tiles,
  // since each row part packs b again; but down to 4 tiles when the columns leave a thread idle
  // (64 x 64 x 4096 ran on one thread).
  const int64_t threads =
      m * n * k < kSgemmSerialWork || in_parallel_region() ? 1 : get_num_threads();
  const int64_t panels = (n + kNr - 1) / kNr, tiles = (m + kMr - 1) / kMr;
  const int64_t col_parts = threads == 1 ? 1
                                         : std::max(std::min(panels, threads),
                                                    std::min(panels / (kNc / kNr), 4 * threads));
  const int64_t min_tiles = col_parts >= threads ? 16 : 4;
  const int64_t row_parts = col_parts >= 2 * threads
                                ? 1
                                : std::clamp<int64_t>((2 * threads + col_parts - 1) / col_parts, 1,
                                                      std::max<int64_t>(1, tiles / min_tiles));
  parallel_for(0, row_parts * col_parts, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      auto [i0, i1] = part(t / col_parts, row_parts, tiles, kMr, m);
      auto [j0, j1] = part(t % col_parts, col_parts, panels, kNr, n);
      if (i0 < i1 && j0 < j1) run_rect(g, i0, i1, j0, j1);
    }
  });
}

}  // namespace

bool has_sgemm() { return kHasAvx512; }

void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_rs, int64_t a_cs,
           const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc) {
  // A few rows of a times b transposed (a Linear layer at a small batch: x @ W^T) would pack all
  // of b, a long copy for few FMAs per element (32 x 4096 x 1024 ran at 0.83x torch's speed).
  // c^T = b^T a^T reads b in place as its "a" instead and packs only a; each output is the same
  // FMA chain over k (beta 0), so the result is bitwise that of the direct product.
  if (beta == 0.0f && alpha == 1.0f && m <= kNr && n >= 4 * kNr && k > 0 && b_rs == 1 &&
      b_cs != 1) {
    std::unique_ptr<float[]> t(new float[size_t(n * m)]);
    run({n, m, k, 1.0f, b, b_cs, 1, a, a_cs, a_rs, 0.0f, t.get(), m});
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = t[size_t(j * m + i)];
    return;
  }
  run({m, n, k, alpha, a, a_rs, a_cs, b, b_rs, b_cs, beta, c, ldc});
}

void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
           const PackB& pack_b, float* c, int64_t ldc) {
  run({m, n, k, 1.0f, a, a_rs, a_cs, nullptr, 0, 0, 0.0f, c, ldc, &pack_b});
}

#else

bool has_sgemm() { return false; }

void sgemm(int64_t, int64_t, int64_t, float, const float*, int64_t, int64_t, const float*, int64_t,
           int64_t, float, float*, int64_t) {}
void sgemm(int64_t, int64_t, int64_t, const float*, int64_t, int64_t, const PackB&, float*,
           int64_t) {}

#endif

}  // namespace ember::cpu
