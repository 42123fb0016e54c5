#pragma once
// ember's own float32 GEMM for AVX2 and AVX-512 CPUs. See Note [SGEMM].
#include <cstdint>
#include <functional>

namespace ember::cpu {

// Note [SGEMM]
// OpenBLAS reached ~69% of the FMA peak on our AVX-512 machine (it may even run its AVX2 kernels
// on CPUs it does not know) and paid a thread hand-off on every small product, and its sums
// depend on its thread count. sgemm multiplies with AVX-512 register tiles of 6 rows x 64 columns
// (24 accumulators: 4 vector loads of b and 6 broadcasts of a per 24 FMAs), or on AVX2 CPUs
// with tiles of 6 x 16 (12 accumulators), four across each panel (sgemm_avx2.cpp). Blocking: the
// columns are cut into panels of 64 and k into blocks of kc; a block of b (kc x up to nc
// columns) is packed once per task into panels, and every row tile of a block of mc rows of a runs
// over each panel, both blocks held in L2 (Note [SGEMM blocking] in sgemm.cpp sizes them from it).
// a is read in place when alpha is 1 and its rows are contiguous, or its columns are and c is one
// panel wide; otherwise it is packed per mc rows with alpha folded in. Each tile prefetches the
// next tile of c, which comes from memory when c is large. Threads split the rows and columns of c
// into rectangles, never k: every output is summed over k in ascending order with one FMA chain
// that starts at beta * c (0 when beta is 0, so c is never read then), so results do not depend on
// the thread count, the tiling or the tier: AVX2 and AVX-512 give the same bits. Products below
// kSgemmSerialWork multiply-adds (about 9 us on one core) stay on the calling thread, where the
// pool's hand-off (a few us while its workers spin, Note [Pool wake-up]) would cost more than it
// saves. Matrix-vector products stay with OpenBLAS's gemv (memory-bound, no packing), as does
// float64. Measured on one Sapphire Rapids thread (best of repeated runs on a shared machine; FMA
// peak 246 GFLOP/s): 256^3 at ~216 GFLOP/s, 1024^3 at ~199, 2048^3 at ~193 (torch: 217, 213, 213;
// OpenBLAS: 193, 192, 176). On one AMD EPYC (Zen) AVX2 thread, CPU time: 256^3 at ~94 GFLOP/s,
// even with torch and OpenBLAS (python benchmarks/conv_gemm.py --only gemm --threads 1 --cpu-time).

/// Multiply-adds below which sgemm runs on the calling thread (Note [SGEMM]).
constexpr int64_t kSgemmSerialWork = int64_t(1) << 21;

/// True when this CPU runs sgemm (AVX2 + FMA or AVX-512).
bool has_sgemm();

/// c (m x n, row stride ldc, unit column stride) = beta * c + alpha * A @ B, where
/// A(i, p) = a[i * a_rs + p * a_cs] and B(p, j) = b[p * b_rs + j * b_cs] (any strides: row-major,
/// transposed, sliced or broadcast). beta == 0 never reads c. Needs has_sgemm().
void sgemm(int64_t m, int64_t n, int64_t k, float alpha, const float* a, int64_t a_rs, int64_t a_cs,
           const float* b, int64_t b_rs, int64_t b_cs, float beta, float* c, int64_t ldc);

/// Writes B(p, j) for p in [p0, p0 + kc) and j in [j0, j0 + w), w <= 64, as sgemm packs it: kc
/// rows of w rounded up to 16 floats, the tail zero, row p - p0 at dst + (p - p0) * that width.
/// Called concurrently from sgemm's threads.
using PackB = std::function<void(int64_t p0, int64_t kc, int64_t j0, int64_t w, float* dst)>;

/// c = A @ B (beta 0) with B computed panel by panel by `pack_b` instead of read from memory:
/// a convolution's column matrix is never stored whole (Note [Conv panels]).
void sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_rs, int64_t a_cs,
           const PackB& pack_b, float* c, int64_t ldc);

}  // namespace ember::cpu
