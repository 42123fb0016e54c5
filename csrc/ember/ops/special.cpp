// Special functions: polygamma's entry point and derivative (kernels in cpu/special.cpp). The
// one-argument special functions (lgamma, digamma, i0, ...) are rows of the unary table
// (Note [Unary table] in schema/unary.h), defined in ops/unary.cpp.
#include "ember/ops/special.h"

#include "ember/ops/derivative.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"
#include "ember/schema/special.h"

namespace ember {

namespace {
// A gradient torch does not implement: computing it raises torch's NotImplementedError.
[[noreturn]] Tensor not_implemented_derivative(const char* what) {
  EMBER_ERROR(ErrorKind::NotImplemented, "the derivative for '", what, "' is not implemented.");
}
}  // namespace

EMBER_DERIVATIVE(op::polygamma, "PolygammaBackward0", (n, self), grad* polygamma(n + 1, self));
// d/dq zeta(s, q) = -s zeta(s + 1, q); torch has no derivative in s either.
EMBER_DERIVATIVE(op::special_zeta, "SpecialZetaBackward0", (self, other),
                 not_implemented_derivative("zeta"), grad * -self * special_zeta(self + 1, other));

// Their backend kernels: the meta step (float results: integers compute in the default dtype),
// then the out= kernel (Note [Meta step] in ops/meta.h).
namespace {
#define EMBER_STRUCTURED_SPECIAL(name, a, b, ...)                                 \
  template <DispatchKey K>                                                        \
  Tensor name##_structured(const Tensor& a, const Tensor& b) {                    \
    return meta::binary_op<K>(#name, meta::Result::Float, a, b,                   \
                              [](const Tensor& x, const Tensor& y, Tensor& out) { \
                                meta::kernel(op::name##_out, K)(x, y, out);       \
                              });                                                 \
  }                                                                               \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_structured<DispatchKey::CPU>);      \
  EMBER_REGISTER_KERNEL(op::name, Meta, name##_structured<DispatchKey::Meta>);
EMBER_SPECIAL_BINARY_OPS(EMBER_STRUCTURED_SPECIAL)
#undef EMBER_STRUCTURED_SPECIAL
}  // namespace

#define EMBER_DEFINE_SPECIAL_BINARY(name, a, b, ...) \
  Tensor name(const Tensor& a, const Tensor& b) { return op::name.call(a, b); }
EMBER_SPECIAL_BINARY_OPS(EMBER_DEFINE_SPECIAL_BINARY)
#undef EMBER_DEFINE_SPECIAL_BINARY

Tensor polygamma(int64_t n, const Tensor& self) {
  EMBER_CHECK(n >= 0, "polygamma: expected a non-negative order n; got ", n);
  return op::polygamma.call(n, self);
}

}  // namespace ember
