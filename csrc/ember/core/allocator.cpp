#include "ember/core/allocator.h"

#include <pthread.h>
#include <sched.h>
#include <sys/mman.h>

#include <atomic>
#include <bit>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/profiler.h"

namespace ember {

// Note [Caching CPU allocator]
// A training step frees and re-allocates the same activation and gradient sizes every step.
// glibc serves blocks above its mmap threshold (at most 32 MiB) with fresh mappings, so each
// step paid page faults for every large tensor (15-20% of a step measured before the cache), and
// aligned allocations below it skip glibc's per-thread fast cache. Freed blocks are therefore kept
// in bins of size classes (1/8 of a power of two apart, so rounding wastes at most 12.5% of
// virtual space and no resident memory) and handed out again. A miss first gives back cached
// blocks worth as much as it asks for, so that a change of working set (training, then
// evaluation at another batch size; sequences of varying length) reuses memory instead of adding
// to the peak: blocks that are stale (unused for kCpuCacheStaleAllocs requests), and any while the
// cache holds more than the program has in use. Not any block always: a miss then evicted blocks
// the same step needed later, whose misses evicted others in turn; an MLP step settled at 24
// misses out of 26 requests (240 page faults a step) instead of none. The cache is bounded, and a
// failed system allocation empties it and retries before raising. AddressSanitizer builds bypass
// the cache so that use-after-free stays detectable.

namespace {

constexpr size_t kAlignment = 64;  // a cache line and an AVX-512 register
constexpr size_t kCacheLimit = size_t(1) << 30;

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kCaching = false;
#else
constexpr bool kCaching = true;
#endif

// The size class a request is served from: multiples of 64 up to 512 bytes, then 8 classes per
// power of two.
size_t size_class(size_t nbytes) {
  if (nbytes <= 512)
    return std::max<size_t>(kAlignment, (nbytes + kAlignment - 1) & ~(kAlignment - 1));
  size_t step = std::bit_floor(nbytes) / 8;
  return (nbytes + step - 1) / step * step;
}

// The cache's critical sections are a hash lookup and a vector push or pop; an uncontended
// std::mutex around them cost about 6% of a 4-float add. A waiter that spins long yields, in
// case the holder was preempted.
class SpinLock {
 public:
  void lock() {
    for (int spins = 0; flag_.exchange(true, std::memory_order_acquire);)
      while (flag_.load(std::memory_order_relaxed))
        if (++spins % 1024 == 0) sched_yield();
  }
  void unlock() { flag_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> flag_{false};
};

// Note [Data pages hold only data]
// A forked DataLoader worker shares the parent's memory copy-on-write, and any write to a page
// gives it a private copy. Reading a dataset of per-sample tensors writes no data, but it does
// write their metadata (TensorImpl and StorageImpl reference counts); glibc placed those small
// objects between the data blocks, on the same pages, so a worker copied about one page per
// sample (19 % of a list of 12 KiB tensors in one epoch, as torch's workers do). Blocks of at least
// kPageBlock bytes therefore start on a page and fill whole pages, which then hold nothing else:
// the workers copy only the pages of metadata. The rounding costs less than a page per block of
// 4 KiB or more (nothing for sizes that are multiples of a page).
//
// Note [Small data blocks]
// Blocks under kPageBlock keep the dense layout (rounding a 3 KiB sample up to a page would cost
// 30 % of the dataset in every process), but no longer from glibc: there they sat between the
// TensorImpl and StorageImpl objects (and everything else glibc hands out), so a worker reading a
// dataset of 1x28x28 float32 samples copied 27 % of it, the data pages around each sample's
// metadata. They are carved instead from slabs of their own (kSlab bytes from mmap, one chain per
// size class, 64-byte aligned since every class is a multiple of 64), which hold data only; a
// block the cache gives back goes on its class's free list and is handed out again, never to
// glibc (slabs stay mapped, as glibc keeps the small chunks it was given). AddressSanitizer builds
// keep glibc, which must see every block.
constexpr size_t kPage = 4096;
constexpr size_t kPageBlock = 4096;
constexpr size_t kSlab = size_t(1) << 20;

class SmallBlocks {
 public:
  // Held across fork by CachingAllocator's handlers, after its own lock (the order its
  // eviction takes them in).
  void lock() { lock_.lock(); }
  void unlock() { lock_.unlock(); }
  static SmallBlocks& instance() {
    static SmallBlocks* s = new SmallBlocks();  // leaked: blocks outlive static destructors
    return *s;
  }
  void* alloc(size_t cls) {
    std::lock_guard<SpinLock> g(lock_);
    Class& c = classes_[cls];
    if (c.free) {
      Node* n = c.free;
      c.free = n->next;
      return n;
    }
    if (size_t(c.end - c.bump) < cls) {
      void* slab = mmap(nullptr, kSlab, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (slab == MAP_FAILED) return nullptr;
      c.bump = static_cast<char*>(slab);
      c.end = c.bump + kSlab;
    }
    void* p = c.bump;
    c.bump += cls;
    return p;
  }
  void free(void* p, size_t cls) {
    std::lock_guard<SpinLock> g(lock_);
    Class& c = classes_[cls];
    c.free = new (p) Node{c.free};
  }

 private:
  struct Node {
    Node* next;
  };
  struct Class {
    Node* free = nullptr;
    char* bump = nullptr;
    char* end = nullptr;
  };
  SpinLock lock_;
  std::unordered_map<size_t, Class> classes_;
};

void* system_alloc(size_t cls) {
  if (cls >= kPageBlock) return std::aligned_alloc(kPage, (cls + kPage - 1) & ~(kPage - 1));
  if (kCaching) return SmallBlocks::instance().alloc(cls);  // Note [Small data blocks]
  return std::aligned_alloc(kAlignment, cls);
}

void system_free(void* p, size_t cls) {
  if (kCaching && cls < kPageBlock) return SmallBlocks::instance().free(p, cls);
  std::free(p);
}

class CachingAllocator {
 public:
  CachingAllocator() {
    SmallBlocks::instance();
    pthread_atfork(
        [] {
          instance().lock_.lock();
          SmallBlocks::instance().lock();
        },
        [] {
          SmallBlocks::instance().unlock();
          instance().lock_.unlock();
        },
        [] {
          SmallBlocks::instance().unlock();
          instance().lock_.unlock();
        });
  }

  // Leaked on purpose: tensors held by static objects are freed after static destructors ran.
  static CachingAllocator& instance() {
    static CachingAllocator* a = new CachingAllocator();
    return *a;
  }

  void* alloc(size_t nbytes) {
    size_t cls = size_class(nbytes);
    EMBER_CHECK(cls >= nbytes, "CPU out of memory: tried to allocate ", nbytes, " bytes");
    if (kCaching) {
      std::lock_guard<SpinLock> g(lock_);
      ++requests_;
      auto it = bins_.find(cls);
      if (it != bins_.end() && !it->second.empty()) {
        void* p = it->second.back().ptr;
        it->second.pop_back();
        cached_ -= cls;
        live_ += cls;
        ++stats_.hits;
        return p;
      }
      ++stats_.misses;
      live_ += cls;
      evict_locked(cls);
    }
    void* p = system_alloc(cls);
    if (!p) {
      empty_cache();
      p = system_alloc(cls);
    }
    EMBER_CHECK(p != nullptr, "CPU out of memory: tried to allocate ", nbytes, " bytes (",
                double(nbytes) / double(1 << 30), " GiB)");
    return p;
  }

  void free(void* p, size_t nbytes) {
    size_t cls = size_class(nbytes);
    if (kCaching) {
      std::lock_guard<SpinLock> g(lock_);
      live_ -= cls;
      if (cached_ + cls <= kCacheLimit) {
        bins_[cls].push_back({p, requests_});
        cached_ += cls;
        return;
      }
    }
    system_free(p, cls);
  }

  // Frees cached blocks worth `nbytes`, oldest first within each bin, that are stale or while
  // the cache holds more than the program uses, before the system is asked for more (Note
  // [Caching CPU allocator]).
  void evict_locked(size_t nbytes) {
    for (auto it = bins_.begin(); it != bins_.end() && nbytes > 0;) {
      auto& blocks = it->second;  // oldest first
      size_t n = 0;
      for (; n < blocks.size() && nbytes > 0 &&
             (requests_ - blocks[n].freed_at >= kCpuCacheStaleAllocs || cached_ > live_);
           ++n) {
        system_free(blocks[n].ptr, it->first);
        cached_ -= it->first;
        nbytes -= std::min(nbytes, it->first);
      }
      blocks.erase(blocks.begin(), blocks.begin() + ptrdiff_t(n));
      it = blocks.empty() ? bins_.erase(it) : std::next(it);
    }
  }

  void empty_cache() {
    std::lock_guard<SpinLock> g(lock_);
    for (auto& [cls, blocks] : bins_)
      for (const Cached& b : blocks) system_free(b.ptr, cls);
    bins_.clear();
    cached_ = 0;
  }

  CpuAllocatorStats stats() {
    std::lock_guard<SpinLock> g(lock_);
    CpuAllocatorStats s = stats_;
    s.cached_bytes = cached_;
    return s;
  }

 private:
  struct Cached {
    void* ptr;
    uint64_t freed_at;  // requests_ when it was cached
  };
  SpinLock lock_;
  std::unordered_map<size_t, std::vector<Cached>> bins_;
  uint64_t requests_ = 0;
  size_t live_ = 0;  // bytes handed out and not yet returned
  size_t cached_ = 0;
  CpuAllocatorStats stats_;
};

}  // namespace

void* cpu_alloc(size_t nbytes) {
  void* p = CachingAllocator::instance().alloc(nbytes);
  // A profile with profile_memory attributes the request to the op running (Note [Profiler]).
  if (profiler::enabled()) [[unlikely]]
    profiler::record_memory(p, int64_t(nbytes));
  return p;
}
void cpu_free(void* ptr, size_t nbytes) {
  if (profiler::enabled()) [[unlikely]]
    profiler::record_memory(ptr, -int64_t(nbytes));
  CachingAllocator::instance().free(ptr, nbytes);
}
CpuAllocatorStats cpu_allocator_stats() { return CachingAllocator::instance().stats(); }
void cpu_empty_cache() { CachingAllocator::instance().empty_cache(); }

}  // namespace ember

namespace ember {

namespace {
std::atomic<const PrivateUse1Allocator*> g_privateuse1{nullptr};
}  // namespace

void register_privateuse1_allocator(const PrivateUse1Allocator& a) {
  EMBER_CHECK(a.alloc && a.free && a.copy_to_device && a.copy_to_host,
              "register_privateuse1_allocator: expected alloc, free, copy_to_device and "
              "copy_to_host to be set");
  g_privateuse1.store(new PrivateUse1Allocator(a));  // leaked: storage may outlive a replacement
}

const PrivateUse1Allocator* privateuse1_allocator() { return g_privateuse1.load(); }

void copy_bytes(void* dst, Device dst_device, const void* src, Device src_device, size_t nbytes) {
  if (!nbytes) return;
  bool dst_dev = dst_device.type == DeviceType::PrivateUse1;
  bool src_dev = src_device.type == DeviceType::PrivateUse1;
  if (!dst_dev && !src_dev) {
    std::memcpy(dst, src, nbytes);
    return;
  }
  const PrivateUse1Allocator* a = privateuse1_allocator();
  EMBER_CHECK(a, "copy: no allocator is registered for the '", privateuse1_backend_name(),
              "' backend");
  if (dst_dev && src_dev) {  // through the host: the backend registers no device-to-device copy
    std::vector<char> tmp(nbytes);
    a->copy_to_host(tmp.data(), src, nbytes);
    a->copy_to_device(dst, tmp.data(), nbytes);
  } else if (dst_dev) {
    a->copy_to_device(dst, src, nbytes);
  } else {
    a->copy_to_host(dst, src, nbytes);
  }
}

}  // namespace ember
