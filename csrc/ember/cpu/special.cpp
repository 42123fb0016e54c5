// CPU kernels of the special functions (ops/special.cpp): the gamma family and the modified
// Bessel functions. Each computes in double, which costs little next to the functions themselves.
#include "ember/schema/special.h"
#include <string>
#include <string_view>

#include "ember/core/shape.h"
#include "ember/core/type_promotion.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/special_math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/unary.h"

namespace ember::cpu {

// The dtypes of torch's special functions that have no 16-bit kernels (Bessel, polynomials); the
// unary table's rows name it.
constexpr uint32_t kSingleDoubleTypes = type_bit(kFloat) | type_bit(kDouble);

namespace {

// out = f(self) in double, self and out of the dtype the meta step (Note [Meta step] in
// ops/meta.h) chose: float or double (float16 and bfloat16 where Allowed has them).
template <uint32_t Allowed, class F>
Tensor& float_unary_out(const char* name, const Tensor& self, Tensor& out, F f) {
  EMBER_CHECK(self.dtype() == out.dtype(), name,
              ": expected an input of the output's dtype (the op's meta step casts it); got ",
              self.dtype(), " and ", out.dtype());
  TensorIter it({&out, &self});
  dispatch<Allowed>(out.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(it, [&](auto x) { return decltype(x)(f(double(x))); });
  });
  return out;
}

// torch's name of a special op's CPU kernel in its dtype errors: "bessel_j0_cpu".
std::string kernel_name(std::string_view op) {
  if (op.starts_with("special_")) op.remove_prefix(8);
  return std::string(op) + "_cpu";
}

// The SPECIAL and NOGRAD rows of the unary table (Note [Unary table] in schema/unary.h).
#define EMBER_KERNEL(name, kind, dtypes, node, math, ...) EMBER_KERNEL_##kind(name, dtypes, math)
#define EMBER_KERNEL_SPECIAL(name, dtypes, fn)                                                \
  Tensor& name##_out_kernel(const Tensor& self, Tensor& out) {                                \
    static const std::string label = kernel_name(#name);                                      \
    return float_unary_out<dtypes>(label.c_str(), self, out, [](double x) { return fn(x); }); \
  }                                                                                           \
  EMBER_REGISTER_KERNEL(op::name##_out, CPU, name##_out_kernel);
#define EMBER_KERNEL_NOGRAD(name, dtypes, fn) EMBER_KERNEL_SPECIAL(name, dtypes, fn)
#define EMBER_KERNEL_FLOAT(name, dtypes, fn)
#define EMBER_KERNEL_SAME(name, dtypes, fn)
#define EMBER_KERNEL_INT(name, dtypes, fn)
#define EMBER_KERNEL_BOOL(name, dtypes, fn)
#define EMBER_KERNEL_ACT(name, dtypes, fn)
EMBER_UNARY_OPS(EMBER_KERNEL)
#undef EMBER_KERNEL
#undef EMBER_KERNEL_SPECIAL
#undef EMBER_KERNEL_NOGRAD
#undef EMBER_KERNEL_FLOAT
#undef EMBER_KERNEL_SAME
#undef EMBER_KERNEL_INT
#undef EMBER_KERNEL_BOOL
#undef EMBER_KERNEL_ACT

// The two-argument special functions (schema/special.h): out = f(a, b), the operands and out in
// the result dtype (float or double) as the meta step (Note [Meta step] in ops/meta.h) gives them.
template <class F>
Tensor& float_binary_out(const std::string& name, const Tensor& a, const Tensor& b, Tensor& out,
                         F f) {
  const ScalarType dt = out.dtype();
  EMBER_CHECK(a.dtype() == dt && b.dtype() == dt, name,
              ": expected operands of the output's dtype (the op's meta step casts them); got ",
              a.dtype(), " and ", b.dtype());
  TensorIter it({&out, &a, &b});
  dispatch<kSingleDoubleTypes>(dt, name.c_str(), [&](auto tag) {
    using T = decltype(tag);
    binary_loop<T, T, T>(it, [&](auto x, auto y) { return decltype(x)(f(double(x), double(y))); });
  });
  return out;
}
#define EMBER_SPECIAL_BINARY_KERNEL(name, a, b, fn, ...)                                    \
  Tensor& name##_out_kernel(const Tensor& a, const Tensor& b, Tensor& out) {                \
    static const std::string label = kernel_name(#name);                                    \
    return float_binary_out(label, a, b, out, [](double u, double v) { return fn(u, v); }); \
  }                                                                                         \
  EMBER_REGISTER_KERNEL(op::name##_out, CPU, name##_out_kernel);
EMBER_SPECIAL_BINARY_OPS(EMBER_SPECIAL_BINARY_KERNEL)
#undef EMBER_SPECIAL_BINARY_KERNEL

// polygamma (its order first) is not behind the meta step yet: it prepares its own operands.
Tensor polygamma_kernel(int64_t n, const Tensor& self) {
  ScalarType dt = is_floating_point(self.dtype()) ? self.dtype() : default_dtype();
  Tensor out = empty_like_inputs(self.sizes(), dt, {&self});
  return float_unary_out<kFloatTypes>("polygamma", self.dtype() == dt ? self : to_dtype(self, dt),
                                      out, [n](double x) { return special::polygamma(n, x); });
}
EMBER_REGISTER_KERNEL(op::polygamma, CPU, polygamma_kernel);

}  // namespace

}  // namespace ember::cpu
