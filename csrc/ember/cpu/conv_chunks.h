#pragma once
// The convolution kernels' runner over chunks of samples (Note [Conv threading] in cpu/conv.cpp).
#include <algorithm>
#include <cstdint>

#include "ember/core/parallel.h"
#include "ember/cpu/blas_threads.h"
#include "ember/cpu/isa.h"

namespace ember::cpu {

/// Runs f(begin, end) over chunks of `grain` samples: on ember's pool, GEMMs single-threaded,
/// when there are at least as many chunks as threads; otherwise one chunk after another, each
/// GEMM on the threads.
template <class F>
void for_each_chunk(int64_t n, int64_t grain, F&& f) {
  const int64_t chunks = (n + grain - 1) / grain;
  const int threads = get_num_threads();
  auto body = [&](int64_t b, int64_t e) { with_best_isa([&] { f(b, e); }); };
  if (threads > 1 && chunks >= threads && !in_parallel_region()) {
    SerialBlas serial;
    parallel_for(0, n, grain, body);
  } else {
    use_blas_threads();
    for (int64_t b = 0; b < n; b += grain) body(b, std::min(n, b + grain));
  }
}

}  // namespace ember::cpu
