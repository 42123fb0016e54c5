// CPU kernels of the special functions (ops/special.cpp): the gamma family and the modified
// Bessel functions. Each computes in double, which costs little next to the functions themselves.
#include "ember/schema/special.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/special_math.h"
#include "ember/dispatch/dispatcher.h"

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

#define EMBER_SPECIAL_KERNEL(name, fn)                               \
  Tensor name##_kernel(const Tensor& self) {                         \
    return float_unary(#name, self, [](double x) { return fn(x); }); \
  }                                                                  \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);
EMBER_SPECIAL_KERNEL(lgamma, std::lgamma)
EMBER_SPECIAL_KERNEL(digamma, special::digamma)
EMBER_SPECIAL_KERNEL(i0, special::i0)
EMBER_SPECIAL_KERNEL(special_i0e, special::i0e)
EMBER_SPECIAL_KERNEL(special_i1, special::i1)
EMBER_SPECIAL_KERNEL(special_i1e, special::i1e)
#undef EMBER_SPECIAL_KERNEL

Tensor polygamma_kernel(int64_t n, const Tensor& self) {
  return float_unary("polygamma", self, [n](double x) { return special::polygamma(n, x); });
}
EMBER_REGISTER_KERNEL(op::polygamma, CPU, polygamma_kernel);

}  // namespace

}  // namespace ember::cpu
