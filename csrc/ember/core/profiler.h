#pragma once
// The profiler's recording side: timed ranges in per-thread buffers. See Note [Profiler].
//
// Note [Profiler]
// Every dispatcher op is recorded by the dispatcher itself (TypedOperator::redispatch), so no
// op escapes a profile: those a backward pass runs, those of other threads, those an op calls
// directly through a backend key. When no profile is active the whole cost is one relaxed load
// of `detail::g_state` and a branch that is always predicted not taken; the recording path is
// out of line. A profile appends ranges (name, start and end in ns, nesting) to a buffer owned
// by the thread that runs them; each buffer has its own mutex, taken only by its thread and by
// the collector when the profile stops, so threads never contend while recording. Besides ops,
// ranges are user ranges (`record_function`), the autograd engine's nodes, and the chunks a pool
// worker runs for an op. An Autograd kernel redispatching to its backend opens no second range:
// an op range whose name is the one open at the top of the thread's stack is not reopened. Input
// shapes are recorded when the profile asks for them, and the CPU allocator reports allocations
// and frees, which become instant records under the range open on the allocating thread.
// `ember._C._profiler_stop()` returns the records; ember.autograd.profiler builds torch's events,
// tables and traces from them.
//
// Note [Profiler inputs]
// With record_shapes, an op records what torch's profiler does of each argument: a tensor's
// sizes, strides and dtype, a number's or a short number list's value, and nothing of the rest
// (None, strings, devices, lists of optional tensors, lists over kMaxValueList numbers). The
// dispatcher boxes the arguments as for the Python dispatch hook (Note [Python dispatch hook])
// and records the boxed values; the binding turns them into torch's "Input Dims", "Input type",
// "Input Strides" and "Concrete Inputs".
#include <atomic>
#include <cstdint>
#include <string_view>

#include "ember/core/array_ref.h"

namespace ember::profiler {

namespace detail {
// Bits of kOn, kShapes, kMemory; zero while no profile records.
extern std::atomic<uint8_t> g_state;
}  // namespace detail
constexpr uint8_t kOn = 1, kShapes = 2, kMemory = 4;
/// torch records the values of number lists up to this length.
constexpr size_t kMaxValueList = 30;

/// True while a profile records: one relaxed load.
inline bool enabled() { return detail::g_state.load(std::memory_order_relaxed) != 0; }
/// True while a profile records input shapes.
inline bool records_shapes() {
  return (detail::g_state.load(std::memory_order_relaxed) & kShapes) != 0;
}

/// What a range stands for.
enum class RangeKind : uint8_t { Op, User, Autograd, Worker };

/// Opens a range on the calling thread and returns its handle, or -1 when none was opened (no
/// profile, or an Op range named as the op open at the top of this thread's stack). An Op range's
/// name must live as long as the process (an op entry's name, a string literal); other names are
/// copied.
int64_t begin_range(RangeKind kind, std::string_view name);
/// Closes the range `handle` of the calling thread (and any range still open inside it).
void end_range(int64_t handle);
/// Records the next argument of the op range `handle` (Note [Profiler inputs]): a tensor's sizes,
/// strides and dtype; None or an argument torch records as no value; a list of `n` tensors whose
/// entries follow; a number (`kind`: its type, `bits`: its value, a double's bit pattern); a list
/// of `n` numbers of one kind.
enum class ValueKind : uint8_t { Int, Double, Bool, DType };
void add_input_tensor(int64_t handle, IntArrayRef sizes, IntArrayRef strides, int8_t dtype);
void add_input_other(int64_t handle);
void add_input_list(int64_t handle, int64_t n);
void add_input_value(int64_t handle, ValueKind kind, int64_t bits);
void add_input_values(int64_t handle, ValueKind kind, const int64_t* bits, int64_t n);
/// The CPU allocator's report: `bytes` > 0 allocated at `ptr`, < 0 freed.
void record_memory(const void* ptr, int64_t bytes);
/// The name of the op range open at the top of the calling thread's stack (empty if none).
std::string_view current_op();

/// A range open for the lifetime of the object.
class Range {
 public:
  Range() = default;
  Range(RangeKind kind, std::string_view name) {
    if (enabled()) [[unlikely]]
      handle_ = begin_range(kind, name);
  }
  ~Range() {
    if (handle_ >= 0) [[unlikely]]
      end_range(handle_);
  }
  Range(const Range&) = delete;
  Range& operator=(const Range&) = delete;
  /// Opens the range now (for a default-constructed one whose name is built only when enabled).
  void begin(RangeKind kind, std::string_view name) {
    if (handle_ < 0) handle_ = begin_range(kind, name);
  }
  int64_t handle() const { return handle_; }

 private:
  int64_t handle_ = -1;
};

}  // namespace ember::profiler
