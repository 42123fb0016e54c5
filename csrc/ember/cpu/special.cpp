// CPU kernels of the special functions (ops/special.cpp): the gamma family and the modified
// Bessel functions. Each computes in double, which costs little next to the functions themselves.
#include "ember/schema/special.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/special_math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/unary.h"

namespace ember::cpu {

namespace {

// Floating output: integer and bool inputs compute in the default dtype, as torch's.
template <class F>
Tensor float_unary(const char* name, const Tensor& self, F f) {
  ScalarType dt = is_floating_point(self.dtype()) ? self.dtype() : default_dtype();
  Tensor in = self.dtype() == dt ? self : to_dtype(self, dt);
  Tensor out = empty_like_inputs(self.sizes(), dt, {&self});
  TensorIter it({&out, &in});
  dispatch<kFloatTypes>(dt, name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(it, [&](auto x) { return decltype(x)(f(double(x))); });
  });
  return out;
}

// The SPECIAL rows of the unary table (Note [Unary table] in schema/unary.h).
#define EMBER_KERNEL(name, kind, dtypes, node, math, ...) EMBER_KERNEL_##kind(name, math)
#define EMBER_KERNEL_SPECIAL(name, fn)                               \
  Tensor name##_kernel(const Tensor& self) {                         \
    return float_unary(#name, self, [](double x) { return fn(x); }); \
  }                                                                  \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);
#define EMBER_KERNEL_FLOAT(name, fn)
#define EMBER_KERNEL_SAME(name, fn)
#define EMBER_KERNEL_INT(name, fn)
#define EMBER_KERNEL_BOOL(name, fn)
#define EMBER_KERNEL_ACT(name, fn)
EMBER_UNARY_OPS(EMBER_KERNEL)
#undef EMBER_KERNEL
#undef EMBER_KERNEL_SPECIAL
#undef EMBER_KERNEL_FLOAT
#undef EMBER_KERNEL_SAME
#undef EMBER_KERNEL_INT
#undef EMBER_KERNEL_BOOL
#undef EMBER_KERNEL_ACT

Tensor polygamma_kernel(int64_t n, const Tensor& self) {
  return float_unary("polygamma", self, [n](double x) { return special::polygamma(n, x); });
}
EMBER_REGISTER_KERNEL(op::polygamma, CPU, polygamma_kernel);

}  // namespace

}  // namespace ember::cpu
