// ember's float32 GEMM: blocking and threads (Note [SGEMM]); the tiles are per ISA.
#include "ember/cpu/sgemm.h"

#include <algorithm>
#include <array>
#include <memory>
#include <new>

#include "ember/core/parallel.h"
#include "ember/cpu/cache_info.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/sgemm_kernels.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define EMBER_SGEMM 1
#endif

namespace ember::cpu {

#ifdef EMBER_SGEMM

namespace {

using sgemm_detail::kMr;
using sgemm_detail::kNr;
// Note [SGEMM blocking]
// A block of a (mc x kc) is packed once and read again for every panel of b; a block of b (kc x
// nc) is packed once and read again for every block of a. Both are sized from the core's L2
// (cpuid, l2_cache_bytes) rather than fixed on one CPU: b's block takes at most half of L2 and
// a's a quarter, leaving the rest to c's tiles and the lines streaming through. kc stays 256,
// the best on every CPU measured: 128 or 192 re-read c's tiles more often (2048^3 at 97-103
// GFLOP/s against 104-106 on one Zen 4 thread), 384 overflowed a Sapphire Rapids L2 at 1024^3
// (91 against 197 GFLOP/s). mc and nc are capped at the values measured best on that Sapphire
// Rapids (2 MB L2: 192 and 1024, a 1 MB block of b), so it keeps its blocks; a Zen 4 (1 MB)
// gets nc = 512 (a 1024-column block of b plus a's no longer fit L2 there: 1024^3 and 2048^3
// ran 1-2 % faster, within noise) and a Zen 2/3 (512 KB) mc = 126 and nc = 256. The blocks do
// not change the bits: every output's FMA chain continues through c from block to block.
struct Blocks {
  int64_t kc, mc, nc;
};

Blocks blocks_for(int64_t l2_bytes) {
  constexpr int64_t kc = 256, row = kc * int64_t(sizeof(float));
  return {kc, std::clamp<int64_t>(l2_bytes / 4 / row / kMr * kMr, 4 * kMr, 192),
          std::clamp<int64_t>(l2_bytes / 2 / row / kNr * kNr, 2 * kNr, 1024)};
}

const Blocks& blocks() {
  static const Blocks b = blocks_for(l2_cache_bytes());
  return b;
}

// The tier's tile and packers; none below AVX2 (ATEN_CPU_CAPABILITY may cap the tier, Note
// [CPU capability]).
const sgemm_detail::Kernels* const kKernels = kBestIsa == Isa::avx512
                                                  ? &sgemm_detail::kAvx512Kernels
                                              : kBestIsa == Isa::avx2 ? &sgemm_detail::kAvx2Kernels
                                                                      : nullptr;

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

// The k blocks' length: at most kc, the blocks of one product equal, and a k up to a quarter
// above kc kept whole. A convolution's 3x3 x 32 channels (k = 288) had run as 256 and a block
// of 32 that loaded and stored every tile of c again for an eighth of the multiply-adds. Every
// output's FMA chain continues through c from block to block, so the bits do not change.
int64_t k_block(int64_t k) {
  const int64_t kc = blocks().kc;
  if (k <= kc + kc / 4) return k;
  const int64_t parts = (k + kc - 1) / kc;
  return (k + parts - 1) / parts;
}

// Computes rows [i0, i1) x columns [j0, j1) of c.
void run_rect(const Problem& g, int64_t i0, int64_t i1, int64_t j0, int64_t j1) {
  // a is read in place when its rows are contiguous, and when its columns are and c has one
  // panel: a is then read once either way, and packing it (a transposed: 4096 x 32 x 256 spent
  // half its time there) only adds a copy.
  const bool a_in_place = g.alpha == 1.0f && (g.a_cs == 1 || (g.a_rs == 1 && j1 - j0 <= kNr));
  const int64_t kstep = k_block(g.k), block_rows = blocks().mc, block_cols = blocks().nc;
  float* bbuf = scratch(0, kstep * std::min(block_cols, (j1 - j0 + kNr - 1) / kNr * kNr));
  float* abuf = a_in_place ? nullptr : scratch(1, block_rows * kstep);
  for (int64_t jc = j0; jc < j1; jc += block_cols) {
    const int64_t nc = std::min(block_cols, j1 - jc);
    for (int64_t pc = 0; pc < g.k; pc += kstep) {
      const int64_t kc = std::min(kstep, g.k - pc);
      // Panel q of the block starts at bbuf + q * kc: each full panel is kc x kNr.
      for (int64_t q = 0; q < nc; q += kNr) {
        const int64_t w = std::min(kNr, nc - q);
        if (g.pack) (*g.pack)(pc, kc, jc + q, w, bbuf + q * kc);
        else
          kKernels->pack_b(kc, w, g.b + pc * g.b_rs + (jc + q) * g.b_cs, g.b_rs, g.b_cs,
                           bbuf + q * kc);
      }
      // The first k block starts the sum at beta * c (at 0 when beta is 0); later ones at c.
      const bool load = pc > 0 || g.beta != 0.0f;
      const float scale = pc > 0 ? 1.0f : g.beta;
      for (int64_t ic = i0; ic < i1; ic += block_rows) {
        const int64_t mc = std::min(block_rows, i1 - ic);
        const float* ablk = g.a + ic * g.a_rs + pc * g.a_cs;
        if (!a_in_place) kKernels->pack_a(mc, kc, g.alpha, ablk, g.a_rs, g.a_cs, abuf);
        const int64_t ar = a_in_place ? g.a_rs : 1, ac = a_in_place ? g.a_cs : kMr;
        for (int64_t q = 0; q < nc; q += kNr) {
          const int64_t w = std::min(kNr, nc - q);
          float* cq = g.c + ic * g.ldc + jc + q;
          for (int64_t i = 0; i < mc; i += kMr) {
            const float* at = a_in_place ? ablk + i * g.a_rs : abuf + i * kc;
            const float* next = i + kMr < mc ? cq + (i + kMr) * g.ldc : cq + kNr;
            kKernels->panel(std::min(kMr, mc - i), w, kc, at, ar, ac, bbuf + q * kc, cq + i * g.ldc,
                            g.ldc, load, scale, next);
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
  // Columns split first (a task packs only its columns of b), but into parts of at least nc
  // columns while there are enough for every thread: a task reads all of its rows of a, from L3,
  // for every part, and parts of 2 panels made 1024^3 at 2 threads run at 353 GFLOP/s against
  // 392. Rows then split while there are fewer than two tasks per thread, and not below 16 tiles,
  // since each row part packs b again; but down to 4 tiles when the columns leave a thread idle
  // (64 x 64 x 4096 ran on one thread).
  const int64_t threads =
      m * n * k < kSgemmSerialWork || in_parallel_region() ? 1 : get_num_threads();
  const int64_t panels = (n + kNr - 1) / kNr, tiles = (m + kMr - 1) / kMr;
  const int64_t block_panels = blocks().nc / kNr;
  const int64_t col_parts = threads == 1 ? 1
                                         : std::max(std::min(panels, threads),
                                                    std::min(panels / block_panels, 4 * threads));
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

bool has_sgemm() { return kKernels != nullptr; }

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
