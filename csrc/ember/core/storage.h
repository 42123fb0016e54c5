#pragma once
// A ref-counted byte buffer shared by all views of a tensor.
#include <atomic>
#include <cstddef>
#include <functional>

#include "ember/core/device.h"
#include "ember/core/intrusive_ptr.h"

namespace ember {

/// Frees a buffer the storage does not own by itself (numpy arrays, user memory).
using Deleter = std::function<void(void*)>;

/// Raw memory plus the version counter that autograd uses to detect in-place changes.
class StorageImpl : public RefCounted {
 public:
  /// Allocates `nbytes` (64-byte aligned); raises "out of memory" instead of aborting.
  StorageImpl(size_t nbytes, Device device);
  /// Wraps external memory; `deleter` runs when the last view is gone.
  StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  /// Bumped by every in-place write; saved tensors compare it at backward time.
  uint32_t version() const { return version_.load(std::memory_order_relaxed); }
  void bump_version() { version_.fetch_add(1, std::memory_order_relaxed); }
  /// Allocated under inference_mode: its tensors may not be saved for backward.
  bool is_inference() const { return is_inference_; }
  void set_inference(bool on) { is_inference_ = on; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_;
  std::atomic<uint32_t> version_{0};
  bool is_inference_ = false;
};

using Storage = IntrusivePtr<StorageImpl>;

}  // namespace ember
