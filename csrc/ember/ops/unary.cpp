// Unary ops: the dispatch entry points and, beside them, each derivative.
#include <numbers>

#include "ember/autograd/node.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/inplace.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

// d(op)/d(self) times grad, in public ops (so double backward works). `self` is the input,
// `result` the output. Ops listed in EMBER_UNARY_*_OPS but not here are not differentiable.
#define EMBER_UNARY_DERIVATIVES(_)                                                     \
  _(exp, grad * result)                                                                \
  _(exp2, grad * result * std::numbers::ln2)                                           \
  _(expm1, grad * (result + 1))                                                        \
  _(log, grad / self)                                                                  \
  _(log2, grad / (self * std::numbers::ln2))                                           \
  _(log10, grad / (self * std::numbers::ln10))                                         \
  _(log1p, grad / (self + 1))                                                          \
  _(sqrt, grad / (result * 2))                                                         \
  _(rsqrt, grad * result * result * result * -0.5)                                     \
  _(sin, grad * cos(self))                                                             \
  _(cos, -(grad * sin(self)))                                                          \
  _(tan, grad * (result * result + 1))                                                 \
  _(asin, grad * rsqrt(1 - self * self))                                               \
  _(acos, -(grad * rsqrt(1 - self * self)))                                            \
  _(atan, grad / (self * self + 1))                                                    \
  _(sinh, grad * cosh(self))                                                           \
  _(cosh, grad * sinh(self))                                                           \
  _(tanh, grad * (1 - result * result))                                                \
  _(asinh, grad * rsqrt(self * self + 1))                                              \
  _(acosh, grad * rsqrt(self * self - 1))                                              \
  _(atanh, grad / (1 - self * self))                                                   \
  _(sigmoid, grad * result * (1 - result))                                             \
  _(erf, grad * exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi)))               \
  _(erfc, -(grad * exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi))))           \
  _(erfinv, grad * exp(result * result) * (std::sqrt(std::numbers::pi) / 2))           \
  _(reciprocal, -(grad * result * result))                                             \
  _(abs, grad * sign(self))                                                            \
  _(neg, -grad)                                                                        \
  _(sign, zeros_like(grad))                                                            \
  _(floor, zeros_like(grad))                                                           \
  _(ceil, zeros_like(grad))                                                            \
  _(round, zeros_like(grad))                                                           \
  _(trunc, zeros_like(grad))                                                           \
  _(frac, grad)                                                                        \
  _(relu, relu_backward(grad, result))

namespace {
using UnaryOp = TypedOperator<Tensor(const Tensor&)>;
using UnaryInplaceOp = TypedOperator<Tensor&(Tensor&)>;

// torch's threshold_backward at 0: grad where result > 0, else 0 (a NaN result passes grad).
// It is on every CNN's training path, so a backward that records no graph of its own runs one
// fused CPU kernel; create_graph, other backends and mixed dtypes take the differentiable
// composite.
Tensor relu_backward(const Tensor& grad, const Tensor& result) {
  static const TypedOperator<Tensor(const Tensor&, const Tensor&)> fused("relu_backward");
  bool graph = GradMode::is_enabled() && (grad.requires_grad() || result.requires_grad());
  if (!graph && backend_of(grad, result) == DispatchKey::CPU && grad.dtype() == result.dtype() &&
      is_floating_point(grad.dtype()) && grad.sizes().equals(result.sizes()))
    return fused.call(grad, result);
  return where(le(result, wrap_scalar(0)), wrap_scalar(0), grad);
}
}  // namespace

#define EMBER_DEFINE_UNARY(name, node)                                              \
  namespace {                                                                       \
  const UnaryOp& name##_op() {                                                      \
    static const UnaryOp op(#name);                                                 \
    return op;                                                                      \
  }                                                                                 \
  const UnaryInplaceOp& name##_inplace_op() {                                       \
    static const UnaryInplaceOp op(#name "_");                                      \
    return op;                                                                      \
  }                                                                                 \
  }                                                                                 \
  Tensor name(const Tensor& self) { return name##_op().call(self); }                \
  Tensor& name##_(Tensor& self) {                                                   \
    name##_inplace_op().call(self);                                                 \
    self.bump_version();                                                            \
    return self;                                                                    \
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

#define EMBER_UNARY_AUTOGRAD(name, formula)                                               \
  Tensor name##_autograd(const Tensor& self_in) {                                         \
    Tensor out = name##_op().redispatch(backend_of(self_in), self_in);                     \
    auto node = autograd::record(name##_node, {self_in}, {out},                           \
                                 [](FunctionNode& n, const variable_list& g) {            \
                                   const Tensor& grad = g[0];                             \
                                   Tensor self = n.saved(0), result = n.saved(1);         \
                                   (void)self;                                            \
                                   (void)result;                                          \
                                   return variable_list{formula};                         \
                                 });                                                      \
    if (node) { /* save only what the formula reads, so later in-place ops stay legal */  \
      node->save(autograd::formula_uses(#formula, "self") ? self_in : Tensor());                            \
      node->save(autograd::formula_uses(#formula, "result") ? out : Tensor(), true);                        \
    }                                                                                     \
    return out;                                                                           \
  }                                                                                       \
  Tensor& name##_inplace_autograd(Tensor& self) {                                         \
    return apply_inplace(self, [](const Tensor& s) { return name(s); });                  \
  }                                                                                       \
  EMBER_REGISTER_KERNEL(#name, Autograd, name##_autograd);                                \
  EMBER_REGISTER_KERNEL(#name "_", Autograd, name##_inplace_autograd);
EMBER_UNARY_DERIVATIVES(EMBER_UNARY_AUTOGRAD)
#undef EMBER_UNARY_AUTOGRAD
}  // namespace

#define EMBER_PREDICATE_OP(name)                                \
  Tensor name(const Tensor& self) {                             \
    static const TypedOperator<Tensor(const Tensor&)> op(#name); \
    return op.call(self);                                       \
  }
EMBER_PREDICATE_OP(isnan)
EMBER_PREDICATE_OP(isinf)
EMBER_PREDICATE_OP(isfinite)
EMBER_PREDICATE_OP(isposinf)
EMBER_PREDICATE_OP(isneginf)
EMBER_PREDICATE_OP(signbit)
EMBER_PREDICATE_OP(logical_not)
#undef EMBER_PREDICATE_OP

namespace {
using NanToNumOp = TypedOperator<Tensor(const Tensor&, std::optional<double>, std::optional<double>,
                                        std::optional<double>)>;
const NanToNumOp& nan_to_num_op() {
  static const NanToNumOp op("nan_to_num");
  return op;
}
Tensor nan_to_num_autograd(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                           std::optional<double> neginf) {
  Tensor out = nan_to_num_op().redispatch(backend_of(self), self, nan, posinf, neginf);
  auto node = autograd::record("NanToNumBackward0", {self}, {out},
                               [](FunctionNode& n, const variable_list& g) {
                                 Tensor self = n.saved(0);
                                 return variable_list{
                                     where(isfinite(self), g[0], zeros({}, TensorOptions(g[0].dtype())))};
                               });
  if (node) node->save(self);
  return out;
}
EMBER_REGISTER_KERNEL("nan_to_num", Autograd, nan_to_num_autograd);

using RoundDecimalsOp = TypedOperator<Tensor(const Tensor&, int64_t)>;
const RoundDecimalsOp& round_decimals_op() {
  static const RoundDecimalsOp op("round.decimals");
  return op;
}
Tensor round_decimals_autograd(const Tensor& self, int64_t decimals) {
  Tensor out = round_decimals_op().redispatch(backend_of(self), self, decimals);
  autograd::record("RoundBackward1", {self}, {out},
                   [](FunctionNode&, const variable_list& g) { return variable_list{zeros_like(g[0])}; });
  return out;
}
EMBER_REGISTER_KERNEL("round.decimals", Autograd, round_decimals_autograd);
}  // namespace

Tensor square(const Tensor& self) { return pow(self, wrap_scalar(2)); }

Tensor nan_to_num(const Tensor& self, std::optional<double> nan, std::optional<double> posinf,
                  std::optional<double> neginf) {
  return nan_to_num_op().call(self, nan, posinf, neginf);
}

Tensor round(const Tensor& self, int64_t decimals) {
  if (decimals == 0) return round(self);
  return round_decimals_op().call(self, decimals);
}

}  // namespace ember
