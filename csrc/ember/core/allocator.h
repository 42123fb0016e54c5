#pragma once
// The CPU allocator: 64-byte aligned blocks, cached for reuse (Note [Caching CPU allocator]).
#include <cstddef>
#include <cstdint>

namespace ember {

/// Allocation requests after which an unused cached block may be given back on a miss.
constexpr uint64_t kCpuCacheStaleAllocs = uint64_t(1) << 14;

/// A 64-byte aligned block of at least `nbytes`; raises RuntimeError "out of memory" on failure.
void* cpu_alloc(size_t nbytes);
/// Returns a block from cpu_alloc; `nbytes` must be the size it was asked for.
void cpu_free(void* ptr, size_t nbytes);

/// What the cache holds and how often it served a request.
struct CpuAllocatorStats {
  size_t cached_bytes = 0;
  uint64_t hits = 0;
  uint64_t misses = 0;
};
CpuAllocatorStats cpu_allocator_stats();
/// Gives every cached block back to the system.
void cpu_empty_cache();

}  // namespace ember
