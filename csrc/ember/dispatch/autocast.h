#pragma once
// Autocast state: which device types run their listed ops in a lower precision, in which dtype,
// and the cache of weight casts. See Note [Autocast].
//
// Note [Autocast]
// Autocast is a dispatch key (DispatchKey::Autocast) that the dispatcher tries before Autograd
// while autocast is active on the thread: an op with an Autocast kernel casts its floating
// tensor arguments by its policy (ops/autocast.h: the lower-precision list, the float32 list,
// the promote list) and calls the op again with the key excluded, so the casts are ordinary ops
// that autograd records and a float32 parameter gets a float32 gradient. Ops without an
// Autocast kernel run unchanged. Composites that are not dispatcher ops (linear, matmul, the
// Python-level losses) apply the same policies at their entry. The state is thread-local, as
// torch's: enabled per device type, the dtype per device type, a nesting count of open regions,
// and whether the casts of leaf float32 tensors that require grad (the parameters) are cached;
// the cache is cleared when the outermost region exits.
#include <cstdint>

#include "ember/core/device.h"
#include "ember/core/dtype.h"

namespace ember {
class Tensor;

namespace autocast {

/// Whether autocast is enabled for a device type on this thread
/// (at::autocast::is_autocast_enabled).
bool is_autocast_enabled(DeviceType device_type);
/// Turns autocast on or off for a device type on this thread.
void set_autocast_enabled(DeviceType device_type, bool enabled);
/// The lower-precision dtype of a device type (bfloat16 on CPU unless set).
ScalarType get_autocast_dtype(DeviceType device_type);
/// Sets the lower-precision dtype of a device type (bfloat16 or float16).
void set_autocast_dtype(DeviceType device_type, ScalarType dtype);
/// Whether casts of parameters are cached in the open regions.
bool is_autocast_cache_enabled();
void set_autocast_cache_enabled(bool enabled);
/// Region nesting: a region increments on entry and decrements on exit; the exit that returns
/// 0 clears the cache.
int64_t increment_nesting();
int64_t decrement_nesting();
/// Drops every cached cast.
void clear_cache();

/// True when the dispatcher should try Autocast kernels: autocast enabled on CPU and the key not
/// excluded on this thread. The one check on the dispatcher's hot path.
bool is_active();

/// RAII: excludes the Autocast key (inside an autocast kernel, so the ops it calls run as cast).
class ExcludeGuard {
 public:
  ExcludeGuard();
  ~ExcludeGuard();
  ExcludeGuard(const ExcludeGuard&) = delete;
  ExcludeGuard& operator=(const ExcludeGuard&) = delete;

 private:
  bool prev_;
};
/// Whether the key is excluded now (Python's region helpers read and set it).
bool is_excluded();
void set_excluded(bool excluded);

/// `t` cast to `to` when it is a floating CPU tensor other than float64 of another dtype, else
/// `t`. With the cache enabled, the lower-precision cast of a leaf float32 tensor that requires
/// grad is made once per outermost region.
Tensor cached_cast(ScalarType to, const Tensor& t);

}  // namespace autocast
}  // namespace ember
