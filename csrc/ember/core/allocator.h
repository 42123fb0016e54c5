#pragma once
// The CPU allocator: 64-byte aligned blocks, cached for reuse (Note [Caching CPU allocator]).
#include <cstddef>
#include <cstdint>

#include "ember/core/device.h"

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

namespace ember {

// Note [PrivateUse1]
// A backend outside ember (an accelerator's plugin, or a test backend) owns the PrivateUse1
// device type: it registers how its memory is allocated, freed and copied to and from the host,
// and kernels for the PrivateUse1 dispatch key (EMBER_REGISTER_KERNEL(op::add, PrivateUse1, fn),
// or from Python through ember.library). Storage of a PrivateUse1 tensor comes from the
// registered allocator; an op without a PrivateUse1 kernel raises NotImplementedError naming the
// op, unless the backend opted in to the CPU fallback (dispatch/fallback.h), which copies the
// arguments to the host, runs the CPU kernel and copies the results (and written arguments) back.
// The device's name ("privateuseone" until renamed, core/device.h) is what strings and printing
// use.
struct PrivateUse1Allocator {
  void* (*alloc)(size_t nbytes) = nullptr;
  void (*free)(void* ptr, size_t nbytes) = nullptr;
  /// Copies `nbytes` from host memory to the device's.
  void (*copy_to_device)(void* dst, const void* src, size_t nbytes) = nullptr;
  /// Copies `nbytes` from the device's memory to the host.
  void (*copy_to_host)(void* dst, const void* src, size_t nbytes) = nullptr;
};
/// Registers the backend's memory functions (every member must be set); a later call replaces
/// them for storage allocated from then on.
void register_privateuse1_allocator(const PrivateUse1Allocator& a);
/// The registered functions, or null before a backend registered any.
const PrivateUse1Allocator* privateuse1_allocator();
/// Copies `nbytes` between two buffers on `dst_device` and `src_device` (CPU or PrivateUse1).
void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes);

}  // namespace ember
