#pragma once
// Op ranges opened by code rather than by the dispatcher (Note [Profiler rows]).
//
// Note [Profiler rows]
// torch's profiler shows the ATen ops an op calls inside itself (`aten::linear` > `aten::t` >
// `aten::transpose` > `aten::as_strided`, `aten::addmm` > `aten::expand`, ...), and programs that
// read `key_averages()` expect those rows. Where ember does the same step inside a kernel or a
// composite without a dispatcher call (a view's geometry, the bias broadcast of addmm, an output
// allocation, a dtype conversion of a Python number), it opens an OpRange of torch's name around
// that step, so a profile shows torch's rows, nesting and input shapes. Steps that cost nothing in
// ember (torch's `resolve_conj` of a real tensor) are ranges around nothing. Like every range,
// an OpRange costs one predicted branch while no profile records.
#include "ember/dispatch/dispatcher.h"

namespace ember::profiler {

/// An Op range named `name` (a string literal) that records its arguments' shapes when the
/// profile asks for them.
class OpRange : public Range {
 public:
  template <class... Args>
  explicit OpRange(const char* name, const Args&... args) {
    if (enabled()) [[unlikely]] {
      begin(RangeKind::Op, name);
      if (handle() >= 0 && records_shapes()) ::ember::detail::profile_inputs(handle(), args...);
    }
  }
};

/// The ranges of torch's dtype conversion inside `aten::to`: `aten::_to_copy` around the whole,
/// `aten::empty_strided` around `alloc()` (which returns the new tensor) and `aten::copy_` around
/// `fill(out)` (unless `fill` calls the dispatcher's copy_, which records itself), with torch's
/// argument lists. Only called while a profile records.
template <class Alloc, class Fill>
Tensor to_copy_rows(const Tensor& self, ScalarType dtype, Alloc&& alloc, Fill&& fill,
                    bool record_copy) {
  const std::nullopt_t none = std::nullopt;
  OpRange tc("_to_copy", self, dtype, none, none, none, false, none);
  Tensor out;
  {
    OpRange es("empty_strided", none, none, dtype, none, none, none);
    out = alloc();
  }
  if (!record_copy) {
    fill(out);
    return out;
  }
  OpRange cp("copy_", out, self, false);
  fill(out);
  return out;
}

/// A range around nothing: a step torch records as an op that costs nothing here.
template <class... Args>
inline void mark_op(const char* name, const Args&... args) {
  if (enabled()) [[unlikely]]
    OpRange r(name, args...);
}

}  // namespace ember::profiler
