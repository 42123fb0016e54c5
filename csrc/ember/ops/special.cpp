// Special functions: dispatch entry points and derivatives (kernels in cpu/special.cpp).
#include "ember/ops/special.h"

#include "ember/autograd/node.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {
using UnaryOp = TypedOperator<Tensor(const Tensor&)>;
using PolygammaOp = TypedOperator<Tensor(int64_t, const Tensor&)>;

// (function, op name, backward node name, d/dx times grad in public ops of `self` and `result`)
#define EMBER_SPECIAL_OPS(_)                                                                    \
  _(lgamma, "lgamma", LgammaBackward0, grad * digamma(self))                                   \
  _(digamma, "digamma", DigammaBackward0, grad * polygamma(1, self))                           \
  _(i0, "i0", I0Backward0, grad * special_i1(self))                                            \
  _(special_i0e, "special_i0e", SpecialI0EBackward0,                                           \
    grad * (special_i1e(self) - sign(self) * result))                                          \
  _(special_i1, "special_i1", SpecialI1Backward0,                                              \
    grad * where(eq(self, wrap_scalar(0)), wrap_scalar(0.5), i0(self) - result / self))        \
  _(special_i1e, "special_i1e", SpecialI1EBackward0,                                           \
    grad * where(eq(self, wrap_scalar(0)), wrap_scalar(0.5),                                   \
                 special_i0e(self) - result * (sign(self) + reciprocal(self))))

#define EMBER_SPECIAL_DEFINE(fn, op_name, node, formula)                                        \
  const UnaryOp& fn##_op() {                                                                    \
    static const UnaryOp op(op_name);                                                           \
    return op;                                                                                  \
  }                                                                                             \
  Tensor fn##_autograd(const Tensor& self_in) {                                                 \
    Tensor out = fn##_op().redispatch(backend_of(self_in), self_in);                            \
    auto n = autograd::record(#node, {self_in}, {out}, [](FunctionNode& n, const variable_list& g) { \
      const Tensor& grad = g[0];                                                                \
      Tensor self = n.saved(0), result = n.saved(1);                                            \
      (void)result;                                                                             \
      return variable_list{formula};                                                            \
    });                                                                                         \
    if (n) {                                                                                    \
      n->save(self_in);                                                                         \
      n->save(out, true);                                                                       \
    }                                                                                           \
    return out;                                                                                 \
  }                                                                                             \
  EMBER_REGISTER_KERNEL(op_name, Autograd, fn##_autograd);
EMBER_SPECIAL_OPS(EMBER_SPECIAL_DEFINE)
#undef EMBER_SPECIAL_DEFINE

const PolygammaOp& polygamma_op() {
  static const PolygammaOp op("polygamma");
  return op;
}
Tensor polygamma_autograd(int64_t k, const Tensor& self) {
  Tensor out = polygamma_op().redispatch(backend_of(self), k, self);
  auto node = autograd::record("PolygammaBackward0", {self}, {out},
                               [k](FunctionNode& n, const variable_list& g) {
                                 return variable_list{g[0] * polygamma(k + 1, n.saved(0))};
                               });
  if (node) node->save(self);
  return out;
}
EMBER_REGISTER_KERNEL("polygamma", Autograd, polygamma_autograd);
}  // namespace

#define EMBER_SPECIAL_ENTRY(fn, op_name, node, formula) \
  Tensor fn(const Tensor& self) { return fn##_op().call(self); }
EMBER_SPECIAL_OPS(EMBER_SPECIAL_ENTRY)
#undef EMBER_SPECIAL_ENTRY

Tensor polygamma(int64_t n, const Tensor& self) {
  EMBER_CHECK(n >= 0, "[polygamma] expected a non-negative order n; got ", n);
  return polygamma_op().call(n, self);
}

}  // namespace ember
