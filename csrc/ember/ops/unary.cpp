// Unary ops: the dispatch entry points and, beside them, each derivative.
#include <numbers>

#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/unary.h"

namespace ember {

// Defined in copy.cpp: bumps self's version after an in-place write, raising PyTorch's error when
// self is an inference tensor and InferenceMode is off (declared here to keep headers unchanged).
void bump_inplace_version(const Tensor& self);

// d(op)/d(self) times grad, in public ops (so double backward works). `self` is the input,
// `result` the output. Ops listed in EMBER_UNARY_*_OPS but not here are not differentiable.
#define EMBER_UNARY_DERIVATIVES(_)                                           \
  _(exp, grad* result)                                                       \
  _(exp2, grad* result* std::numbers::ln2)                                   \
  _(expm1, grad*(result + 1))                                                \
  _(log, grad / self)                                                        \
  _(log2, grad / (self * std::numbers::ln2))                                 \
  _(log10, grad / (self * std::numbers::ln10))                               \
  _(log1p, grad / (self + 1))                                                \
  _(sqrt, grad / (result * 2))                                               \
  _(rsqrt, grad* result* result* result * -0.5)                              \
  _(sin, grad* cos(self))                                                    \
  _(cos, -(grad * sin(self)))                                                \
  _(tan, grad*(result * result + 1))                                         \
  _(asin, grad* rsqrt(1 - self * self))                                      \
  _(acos, -(grad * rsqrt(1 - self * self)))                                  \
  _(atan, grad / (self * self + 1))                                          \
  _(sinh, grad* cosh(self))                                                  \
  _(cosh, grad* sinh(self))                                                  \
  _(tanh, grad*(1 - result * result))                                        \
  _(asinh, grad* rsqrt(self* self + 1))                                      \
  _(acosh, grad* rsqrt(self* self - 1))                                      \
  _(atanh, grad / (1 - self * self))                                         \
  _(sigmoid, grad* result*(1 - result))                                      \
  _(erf, grad* exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi)))      \
  _(erfc, -(grad * exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi)))) \
  _(erfinv, grad* exp(result* result) * (std::sqrt(std::numbers::pi) / 2))   \
  _(reciprocal, -(grad * result * result))                                   \
  _(sinc, grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0),              \
                      (cos(self * std::numbers::pi) - result) / self))       \
  _(abs, grad* sign(self))                                                   \
  _(neg, -grad)                                                              \
  _(sign, zeros_like(grad))                                                  \
  _(floor, zeros_like(grad))                                                 \
  _(ceil, zeros_like(grad))                                                  \
  _(round, zeros_like(grad))                                                 \
  _(trunc, zeros_like(grad))                                                 \
  _(frac, grad)                                                              \
  _(relu, relu_backward(grad, result))

namespace {
// torch's threshold_backward at 0: grad where result > 0, else 0 (a NaN result passes grad).
// It is on every CNN's training path, so a backward that records no graph of its own runs one
// fused CPU kernel; create_graph, other backends and mixed dtypes take the differentiable
// composite.
Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  bool graph = GradMode::is_enabled() && (grad.requires_grad() || result.requires_grad());
  if (!graph && backend_of(grad, result) == DispatchKey::CPU && grad.dtype() == result.dtype() &&
      is_floating_point(grad.dtype()) && grad.sizes().equals(result.sizes()))
    return op::relu_backward.call(grad, result);
  return where(le(result, wrap_scalar(0)), wrap_scalar(0), grad);
}
}  // namespace

#define EMBER_DEFINE_UNARY(name, node)                            \
  Tensor name(const Tensor& self) { return op::name.call(self); } \
  Tensor& name##_(Tensor& self) {                                 \
    op::name##_.call(self);                                       \
    bump_inplace_version(self);                                   \
    return self;                                                  \
  }
EMBER_UNARY_FLOAT_OPS(EMBER_DEFINE_UNARY)
EMBER_UNARY_SAME_OPS(EMBER_DEFINE_UNARY)
#undef EMBER_DEFINE_UNARY

namespace {
// Looks the node name up from the op lists, so it is written once.
#define EMBER_NODE_NAME(name, node) constexpr const char* name##_node = #node;
EMBER_UNARY_FLOAT_OPS(EMBER_NODE_NAME)
EMBER_UNARY_SAME_OPS(EMBER_NODE_NAME)
#undef EMBER_NODE_NAME
}  // namespace

#define EMBER_UNARY_AUTOGRAD(name, formula)                 \
  EMBER_DERIVATIVE(op::name, name##_node, (self), formula); \
  EMBER_INPLACE_DERIVATIVE(op::name##_, op::name);
EMBER_UNARY_DERIVATIVES(EMBER_UNARY_AUTOGRAD)
#undef EMBER_UNARY_AUTOGRAD

#define EMBER_PREDICATE_OP(name) \
  Tensor name(const Tensor& self) { return op::name.call(self); }
EMBER_PREDICATE_OP(isnan)
EMBER_PREDICATE_OP(isinf)
EMBER_PREDICATE_OP(isfinite)
EMBER_PREDICATE_OP(isposinf)
EMBER_PREDICATE_OP(isneginf)
EMBER_PREDICATE_OP(signbit)
EMBER_PREDICATE_OP(logical_not)
#undef EMBER_PREDICATE_OP

EMBER_DERIVATIVE(op::nan_to_num, "NanToNumBackward0", (self, nan, posinf, neginf),
                 where(isfinite(self), grad, zeros({}, TensorOptions(grad.dtype()))));
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
