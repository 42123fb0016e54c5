// Unary ops: the dispatch entry points and, beside them, each derivative.
#include <numbers>

#include "ember/ops/derivative.h"
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
