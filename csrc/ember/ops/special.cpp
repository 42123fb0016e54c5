// Special functions: polygamma's entry point and derivative (kernels in cpu/special.cpp). The
// one-argument special functions (lgamma, digamma, i0, ...) are rows of the unary table
// (Note [Unary table] in schema/unary.h), defined in ops/unary.cpp.
#include "ember/ops/special.h"

#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/special.h"

namespace ember {

EMBER_DERIVATIVE(op::polygamma, "PolygammaBackward0", (n, self), grad* polygamma(n + 1, self));

Tensor polygamma(int64_t n, const Tensor& self) {
  EMBER_CHECK(n >= 0, "polygamma: expected a non-negative order n; got ", n);
  return op::polygamma.call(n, self);
}

}  // namespace ember
