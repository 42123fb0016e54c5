// Special functions: dispatch entry points and derivatives (kernels in cpu/special.cpp).
#include "ember/ops/special.h"

#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/special.h"

namespace ember {

// (function, backward node name, d/dx times grad in public ops of `self` and `result`)
#define EMBER_SPECIAL_OPS(_)                                                           \
  _(lgamma, LgammaBackward0, grad* digamma(self))                                      \
  _(digamma, DigammaBackward0, grad* polygamma(1, self))                               \
  _(i0, I0Backward0, grad* special_i1(self))                                           \
  _(special_i0e, SpecialI0EBackward0, grad*(special_i1e(self) - sign(self) * result))  \
  _(special_i1, SpecialI1Backward0,                                                    \
    grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0.5), i0(self) - result / self)) \
  _(special_i1e, SpecialI1EBackward0,                                                  \
    grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0.5),                            \
                special_i0e(self) - result * (sign(self) + reciprocal(self))))

#define EMBER_SPECIAL_DEFINE(fn, node, formula)               \
  Tensor fn(const Tensor& self) { return op::fn.call(self); } \
  EMBER_DERIVATIVE(op::fn, #node, (self), formula);
EMBER_SPECIAL_OPS(EMBER_SPECIAL_DEFINE)
#undef EMBER_SPECIAL_DEFINE

EMBER_DERIVATIVE(op::polygamma, "PolygammaBackward0", (n, self), grad* polygamma(n + 1, self));

Tensor polygamma(int64_t n, const Tensor& self) {
  EMBER_CHECK(n >= 0, "polygamma: expected a non-negative order n; got ", n);
  return op::polygamma.call(n, self);
}

}  // namespace ember
