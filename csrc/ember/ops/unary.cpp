// Unary ops: the dispatch entry points and, beside them, each derivative.
#include <numbers>
#include <optional>
#include <string_view>

#include "ember/dispatch/profile_range.h"
#include "ember/ops/derivative.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"
#include "ember/ops/special.h"
#include "ember/ops/unary_table.h"
#include "ember/schema/unary.h"

namespace ember {

// Defined in copy.cpp: bumps self's version after an in-place write, raising PyTorch's error when
// self is an inference tensor and InferenceMode is off (declared here to keep headers unchanged).
void bump_inplace_version(const Tensor& self);

namespace {
// torch's threshold_backward at 0: grad where result > 0, else 0 (a NaN result passes grad).
// It is on every CNN's training path, so it is one fused CPU kernel; the op is differentiable
// itself (below), so a create_graph backward records ThresholdBackwardBackward0 as torch does
// and a second backward gives result (hence x) a zero gradient rather than none. Other
// backends and mixed dtypes or shapes take the composite.
Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  if (backend_of(grad, result) == DispatchKey::CPU && grad.dtype() == result.dtype() &&
      is_floating_point(grad.dtype()) && grad.sizes().equals(result.sizes()))
    return op::relu_backward.call(grad, result);
  return where(le(result, wrap_scalar(0)), wrap_scalar(0), grad);
}
}  // namespace

// The backend kernels (CPU and Meta) of the unary table's ops: the meta step, then the out=
// kernel (Note [Meta step] in ops/meta.h).
namespace {
using meta::Result;
constexpr DispatchKey kCPU = DispatchKey::CPU, kMeta = DispatchKey::Meta;

// torch's relu is clamp_min(self, 0) (Note [Profiler rows]): its range covers the output's
// allocation too, which a memory profile then attributes to clamp_min, as torch's.
void clamp_rows(std::optional<profiler::OpRange>& rows, const char* name, const Tensor& self,
                bool inplace) {
  if (profiler::enabled() && std::string_view(name) == "relu") [[unlikely]]
    rows.emplace(inplace ? "clamp_min_" : "clamp_min", self, 0);
}

// torch's refusals that come before its dtype dispatch (RuntimeError, not the dispatch's
// NotImplementedError): relu of bool (its CPU kernel's; meta tensors pass), isposinf/isneginf of
// complex.
void check_input(const char* name, const Tensor& self) {
  const ScalarType dt = self.dtype();
  if (dt != kBool && !is_complex(dt)) [[likely]]
    return;
  const std::string_view n(name);
  EMBER_CHECK(dt != kBool || n != "relu" || self.device().type == DeviceType::Meta,
              "Boolean inputs not supported for relu");
  EMBER_CHECK(!is_complex(dt) || (n != "isposinf" && n != "isneginf"), n,
              " does not support complex inputs.");
}

// out=: torch's rule for out's dtype by kind: SAME and INT keep the input's dtype exactly, the
// predicates with out= (signbit, isposinf, isneginf) write only bool, the rest cast.
meta::OutDtype out_rule(const char* name, Result kind, bool exact) {
  if (exact) return meta::OutDtype::Exact;
  if (kind == Result::Bool && std::string_view(name) != "logical_not") return meta::OutDtype::Bool;
  return meta::OutDtype::Cast;
}
template <class Decl>
Tensor& unary_out(const char* name, Result kind, bool exact, const Decl& decl, const Tensor& self,
                  Tensor& out) {
  check_input(name, self);
  return meta::out_op(
      name, out_rule(name, kind, exact), {&self}, out,
      [&] { return meta::unary(name, self, kind); },
      [&](DispatchKey k, const meta::Elementwise& m, Tensor& dst) {
        meta::kernel(decl, k)(meta::cast(self, m.compute, k), dst);
      });
}

#define EMBER_STRUCTURED(name, kind, ...) EMBER_STRUCTURED_##kind(name)
#define EMBER_STRUCTURED_OP(name, result)                                                    \
  template <DispatchKey K>                                                                   \
  Tensor name##_structured(const Tensor& self) {                                             \
    std::optional<profiler::OpRange> rows;                                                   \
    clamp_rows(rows, #name, self, false);                                                    \
    check_input(#name, self);                                                                \
    return meta::unary_op<K>(#name, Result::result, self, [](const Tensor& x, Tensor& out) { \
      meta::kernel(op::name##_out, K)(x, out);                                               \
    });                                                                                      \
  }                                                                                          \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_structured<kCPU>);                             \
  EMBER_REGISTER_KERNEL(op::name, Meta, name##_structured<kMeta>);
#define EMBER_STRUCTURED_WITH_INPLACE(name, result)                                               \
  EMBER_STRUCTURED_OP(name, result)                                                               \
  template <DispatchKey K>                                                                        \
  Tensor& name##_structured_(Tensor& self) {                                                      \
    std::optional<profiler::OpRange> rows;                                                        \
    clamp_rows(rows, #name, self, true);                                                          \
    check_input(#name, self);                                                                     \
    return meta::unary_op_<K>(#name "_", Result::result, self, [](const Tensor& x, Tensor& out) { \
      meta::kernel(op::name##_out, K)(x, out);                                                    \
    });                                                                                           \
  }                                                                                               \
  EMBER_REGISTER_KERNEL(op::name##_, CPU, name##_structured_<kCPU>);                              \
  EMBER_REGISTER_KERNEL(op::name##_, Meta, name##_structured_<kMeta>);
#define EMBER_STRUCTURED_FLOAT(name) EMBER_STRUCTURED_WITH_INPLACE(name, Float)
#define EMBER_STRUCTURED_SAME(name) EMBER_STRUCTURED_WITH_INPLACE(name, Same)
#define EMBER_STRUCTURED_INT(name) EMBER_STRUCTURED_WITH_INPLACE(name, Same)
#define EMBER_STRUCTURED_BOOL(name) EMBER_STRUCTURED_OP(name, Bool)
#define EMBER_STRUCTURED_SPECIAL(name) EMBER_STRUCTURED_OP(name, Float)
#define EMBER_STRUCTURED_NOGRAD(name) EMBER_STRUCTURED_OP(name, Float)
#define EMBER_STRUCTURED_ACT(name)  // ops/activation.cpp
EMBER_UNARY_OPS(EMBER_STRUCTURED)
#undef EMBER_STRUCTURED
#undef EMBER_STRUCTURED_OP
#undef EMBER_STRUCTURED_WITH_INPLACE
#undef EMBER_STRUCTURED_FLOAT
#undef EMBER_STRUCTURED_SAME
#undef EMBER_STRUCTURED_INT
#undef EMBER_STRUCTURED_BOOL
#undef EMBER_STRUCTURED_SPECIAL
#undef EMBER_STRUCTURED_NOGRAD
#undef EMBER_STRUCTURED_ACT
}  // namespace

#define EMBER_OUT_ROW(name, kind, ...) EMBER_OUT_ROW_##kind(name)
#define EMBER_OUT_ROW_OF(name, result, exact)                                  \
  Tensor& name##_out(const Tensor& self, Tensor& out) {                        \
    return unary_out(#name, Result::result, exact, op::name##_out, self, out); \
  }
#define EMBER_OUT_ROW_FLOAT(name) EMBER_OUT_ROW_OF(name, Float, false)
#define EMBER_OUT_ROW_SAME(name) EMBER_OUT_ROW_OF(name, Same, true)
#define EMBER_OUT_ROW_INT(name) EMBER_OUT_ROW_OF(name, Same, true)
#define EMBER_OUT_ROW_BOOL(name) EMBER_OUT_ROW_OF(name, Bool, false)
#define EMBER_OUT_ROW_SPECIAL(name) EMBER_OUT_ROW_OF(name, Float, false)
#define EMBER_OUT_ROW_NOGRAD(name) EMBER_OUT_ROW_OF(name, Float, false)
#define EMBER_OUT_ROW_ACT(name)
EMBER_UNARY_OPS(EMBER_OUT_ROW)
#undef EMBER_OUT_ROW
#undef EMBER_OUT_ROW_OF
#undef EMBER_OUT_ROW_FLOAT
#undef EMBER_OUT_ROW_SAME
#undef EMBER_OUT_ROW_INT
#undef EMBER_OUT_ROW_BOOL
#undef EMBER_OUT_ROW_SPECIAL
#undef EMBER_OUT_ROW_NOGRAD
#undef EMBER_OUT_ROW_ACT

// The public functions and derivatives of the unary table (Note [Unary table] in
// schema/unary.h), by kind.
#define EMBER_DEFINE_ROW(name, kind, dtypes, node, math, derivative, ...) \
  EMBER_DEFINE_ROW_##kind(name, node, derivative)
#define EMBER_DEFINE_ROW_FLOAT(name, node, derivative)            \
  Tensor name(const Tensor& self) { return op::name.call(self); } \
  Tensor& name##_(Tensor& self) {                                 \
    op::name##_.call(self);                                       \
    bump_inplace_version(self);                                   \
    return self;                                                  \
  }                                                               \
  EMBER_DERIVATIVE(op::name, #node, (self), derivative);          \
  EMBER_INPLACE_DERIVATIVE(op::name##_, op::name);
#define EMBER_DEFINE_ROW_SAME(name, node, derivative) EMBER_DEFINE_ROW_FLOAT(name, node, derivative)
#define EMBER_DEFINE_ROW_INT(name, node, derivative)              \
  Tensor name(const Tensor& self) { return op::name.call(self); } \
  Tensor& name##_(Tensor& self) {                                 \
    op::name##_.call(self);                                       \
    bump_inplace_version(self);                                   \
    return self;                                                  \
  }
#define EMBER_DEFINE_ROW_BOOL(name, node, derivative) \
  Tensor name(const Tensor& self) { return op::name.call(self); }
#define EMBER_DEFINE_ROW_SPECIAL(name, node, derivative)          \
  Tensor name(const Tensor& self) { return op::name.call(self); } \
  EMBER_DERIVATIVE(op::name, #node, (self), derivative);
#define EMBER_DEFINE_ROW_NOGRAD(name, node, derivative) \
  EMBER_DEFINE_ROW_BOOL(name, node, derivative)
#define EMBER_DEFINE_ROW_ACT(name, node, derivative)  // ops/activation.cpp
EMBER_UNARY_OPS(EMBER_DEFINE_ROW)
#undef EMBER_DEFINE_ROW
#undef EMBER_DEFINE_ROW_FLOAT
#undef EMBER_DEFINE_ROW_SAME
#undef EMBER_DEFINE_ROW_INT
#undef EMBER_DEFINE_ROW_BOOL
#undef EMBER_DEFINE_ROW_SPECIAL
#undef EMBER_DEFINE_ROW_NOGRAD
#undef EMBER_DEFINE_ROW_ACT

EMBER_DERIVATIVE(op::nan_to_num, "NanToNumBackward0", (self, nan, posinf, neginf),
                 where(isfinite(self), grad, zeros({}, TensorOptions(grad.dtype()))));
// relu's backward is linear in the gradient and flat in the result (torch's threshold_backward).
EMBER_DERIVATIVE(op::relu_backward, "ThresholdBackwardBackward0", (grad_output, self),
                 relu_backward(grad, self), zeros_like(grad));
EMBER_DERIVATIVE(op::round_decimals, "RoundBackward1", (self, decimals), zeros_like(grad));

Tensor square(const Tensor& self) { return pow(self, wrap_scalar(2)); }

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  return op::nan_to_num.call(self, nan, posinf, neginf);
}

Tensor round(const Tensor& self, int64_t decimals) {
  if (decimals == 0) return round(self);
  return op::round_decimals.call(self, decimals);
}

}  // namespace ember
