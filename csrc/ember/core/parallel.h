#pragma once
// Intra-op parallelism: a persistent pool and parallel_for with a grain size.
#include <cstdint>
#include <functional>

namespace ember {

/// Threads used by kernels; defaults to the CPUs this process may use (affinity and cgroup quota).
int get_num_threads();
/// Sets the intra-op thread count (torch.set_num_threads).
void set_num_threads(int n);
/// True inside a parallel region (nested regions run serially).
bool in_parallel_region();

/// Runs f(begin, end) over [begin, end) in chunks of at least `grain` elements.
/// Chunk boundaries depend only on (begin, end, grain), never on the thread count, so a kernel
/// that combines per-chunk results in chunk order is deterministic.
void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f);

/// Elements below which kernels stay on one thread (waking the pool costs more).
constexpr int64_t kGrainSize = 32768;

}  // namespace ember
