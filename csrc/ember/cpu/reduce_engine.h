#pragma once
// The one reduction engine. See Note [Reductions].
//
// Note [Reductions]
// The input is permuted to [kept dims..., reduced dims...] and seen as an (M, K) problem: M
// outputs, each reducing K elements. Two layouts run without copying: rows (each output's K
// elements contiguous) and columns (the K elements strided, the M outputs contiguous); any other
// layout is first copied contiguous. Work is split into chunks whose boundaries depend only on
// M and K, and partial results combine in chunk order, so the result is bitwise identical for
// any thread count.
//
// A contiguous run of an op that declares kLaned (its step ignores k, so the order of steps is
// its choice) is reduced in kLanes interleaved accumulators, element k into lane k % kLanes,
// which are then combined in lane order: the lane count is fixed, not the vector width, so the
// result is the same on every ISA, and the independent adds vectorize (Note [ISA clones]).
//
// A sum whose accumulator is wider than its elements (floats summed in double) declares a
// narrower block_t: each lane (or, for columns, each output) first adds kBlockSteps elements in
// block_t, then adds that block's total into acc_t. Converting every element to double halved
// the vector width and made a one-thread float sum 1.45x slower than PyTorch's; with blocks of 16
// the float rounding covers 16 additions (as fast as 64, and 4x less error), and everything beyond
// them is summed in double.
#include <algorithm>
#include <type_traits>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/core/tensor.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

struct ReducePlan {
  Tensor input;  // whose data the kernel reads
  int64_t M = 1, K = 1;
  int64_t row_stride = 0;  // elements between consecutive outputs' data
  int64_t k_stride = 1;    // elements between consecutive reduced elements
};

/// Plans the reduction of `self` over the dims set in `mask`.
ReducePlan plan_reduction(const Tensor& self, uint64_t mask);

/// Elements per chunk of a long reduction (fixed so results don't depend on threads).
constexpr int64_t kReduceChunk = 16384;

/// Accumulators per contiguous run of a kLaned op (see the Note).
constexpr int kLanes = 16;
template <class Op>
constexpr bool laned = requires {
  requires Op::kLaned;
};

/// Elements a block_t accumulator adds before its total joins acc_t (see the Note).
constexpr int64_t kBlockSteps = 16;
template <class Op>
constexpr bool blocked = requires {
  typename Op::block_t;
  requires !std::is_same_v<typename Op::block_t, typename Op::acc_t>;
};

/// Reduces each of the M outputs. Op: acc_t, init(), step(acc&, value, k), combine(acc, acc).
/// store(m, acc) writes output m.
template <class T, class Op, class Store>
void run_reduction(const ReducePlan& p, const Op& op, Store store) {
  using Acc = typename Op::acc_t;
  const T* x = reinterpret_cast<const T*>(p.input.data_ptr());
  const int64_t M = p.M, K = p.K, rs = p.row_stride, ks = p.k_stride;
  auto reduce_range = [&](int64_t m, int64_t k0, int64_t k1) {
    Acc acc = op.init();
    const T* row = x + m * rs;
    if (ks != 1) {
      for (int64_t k = k0; k < k1; ++k) op.step(acc, row[k * ks], k);
      return acc;
    }
    if constexpr (laned<Op>) {
      Acc lane[kLanes];
      for (int l = 0; l < kLanes; ++l) lane[l] = op.init();
      int64_t k = k0;
      static_assert(kLanes == 16, "the unroll pragmas below spell kLanes out");
      if constexpr (blocked<Op>) {
        using B = typename Op::block_t;
        while (k + kLanes <= k1) {
          const int64_t steps = std::min<int64_t>(kBlockSteps, (k1 - k) / kLanes);
          B block[kLanes];
          for (int l = 0; l < kLanes; ++l) block[l] = B(0);
          for (int64_t s = 0; s < steps; ++s, k += kLanes) {
#pragma GCC unroll 16
            for (int l = 0; l < kLanes; ++l) block[l] += B(row[k + l]);
          }
          for (int l = 0; l < kLanes; ++l) lane[l] = op.combine(lane[l], Acc(block[l]));
        }
      } else {
        for (; k + kLanes <= k1; k += kLanes) {
          // Fully unrolled, the lanes live in registers: as a loop they round-trip memory.
#pragma GCC unroll 16
          for (int l = 0; l < kLanes; ++l) op.step(lane[l], row[k + l], k + l);
        }
      }
      for (int l = 0; l < kLanes; ++l) acc = op.combine(acc, lane[l]);
      k0 = k;
    }
    for (int64_t k = k0; k < k1; ++k) op.step(acc, row[k], k);
    return acc;
  };
  if (M == 0) return;
  if (M == 1 && K > 2 * kReduceChunk) {
    // One long reduction: fixed chunks in parallel, combined in order.
    int64_t nchunks = (K + kReduceChunk - 1) / kReduceChunk;
    std::vector<Acc> partial(size_t(nchunks), op.init());
    parallel_for(0, nchunks, 1, [&](int64_t b, int64_t e) {
      with_best_isa([&] {
        for (int64_t c = b; c < e; ++c)
          partial[size_t(c)] =
              reduce_range(0, c * kReduceChunk, std::min(K, (c + 1) * kReduceChunk));
      });
    });
    Acc acc = partial[0];
    for (int64_t c = 1; c < nchunks; ++c) acc = op.combine(acc, partial[size_t(c)]);
    store(0, acc);
    return;
  }
  if (ks != 1 && rs == 1) {
    // Columns: sweep k outside so each output's reads are a contiguous run across m, a page
    // long (1024 floats) so the hardware prefetcher follows it.
    constexpr int64_t kBlock = 1024;
    int64_t nblocks = (M + kBlock - 1) / kBlock;
    int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K * kBlock, 1));
    parallel_for(0, nblocks, grain, [&](int64_t b, int64_t e) {
      with_best_isa([&] {
        Acc acc[kBlock];
        for (int64_t blk = b; blk < e; ++blk) {
          int64_t m0 = blk * kBlock, m1 = std::min(M, m0 + kBlock);
          for (int64_t m = m0; m < m1; ++m) acc[m - m0] = op.init();
          if constexpr (blocked<Op>) {
            using B = typename Op::block_t;
            B block[kBlock];
            for (int64_t k0 = 0; k0 < K; k0 += kBlockSteps) {
              for (int64_t m = m0; m < m1; ++m) block[m - m0] = B(0);
              for (int64_t k = k0; k < std::min(K, k0 + kBlockSteps); ++k) {
                const T* src = x + k * ks;
                for (int64_t m = m0; m < m1; ++m) block[m - m0] += B(src[m]);
              }
              for (int64_t m = m0; m < m1; ++m)
                acc[m - m0] = op.combine(acc[m - m0], Acc(block[m - m0]));
            }
          } else {
            for (int64_t k = 0; k < K; ++k) {
              const T* src = x + k * ks;
              for (int64_t m = m0; m < m1; ++m) op.step(acc[m - m0], src[m], k);
            }
          }
          for (int64_t m = m0; m < m1; ++m) store(m, acc[m - m0]);
        }
      });
    });
    return;
  }
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(K, 1));
  parallel_for(0, M, grain, [&](int64_t b, int64_t e) {
    with_best_isa([&] {
      for (int64_t m = b; m < e; ++m) store(m, reduce_range(m, 0, K));
    });
  });
}

}  // namespace ember::cpu
