// CPU kernels of the unary ops (one functor each) and the predicates.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include <numbers>
#include <optional>

#include "ember/core/type_promotion.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/unary.h"

namespace ember::cpu {

namespace {

// out = f(self), the out= kernel of a row of the unary table (Note [Unary table] in
// schema/unary.h): self of the dtype the loop computes in, out of it (or bool for the
// predicates), as the meta step (Note [Meta step] in ops/meta.h) hands them over.
template <uint32_t Allowed, bool kBoolOut, class F>
Tensor& unary_out(const char* name, const Tensor& self, Tensor& out, F f) {
  EMBER_CHECK(out.dtype() == (kBoolOut ? kBool : self.dtype()), name,
              ": expected an output of the result dtype (the op's meta step prepares it); got ",
              out.dtype(), " output for ", self.dtype(), " input");
  TensorIter it({&out, &self});
  dispatch<Allowed>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<std::conditional_t<kBoolOut, bool, T>, T>(it, f);
  });
  return out;
}

#define EMBER_KERNEL(name, kind, dtypes, node, math, ...) EMBER_KERNEL_##kind(name, dtypes, math)
#define EMBER_KERNEL_OUT(name, dtypes, bool_out, math)                                 \
  Tensor& name##_out_kernel(const Tensor& self, Tensor& out) {                         \
    return unary_out<dtypes, bool_out>(#name, self, out, [](auto x) { return math; }); \
  }                                                                                    \
  EMBER_REGISTER_KERNEL(op::name##_out, CPU, name##_out_kernel);
#define EMBER_KERNEL_FLOAT(name, dtypes, math) EMBER_KERNEL_OUT(name, dtypes, false, math)
#define EMBER_KERNEL_SAME(name, dtypes, math) EMBER_KERNEL_OUT(name, dtypes, false, math)
#define EMBER_KERNEL_INT(name, dtypes, math) EMBER_KERNEL_OUT(name, dtypes, false, math)
#define EMBER_KERNEL_BOOL(name, dtypes, math) EMBER_KERNEL_OUT(name, kAllTypes, true, math)
#define EMBER_KERNEL_SPECIAL(name, dtypes, math)  // cpu/special.cpp
#define EMBER_KERNEL_NOGRAD(name, dtypes, math)   // cpu/special.cpp
#define EMBER_KERNEL_ACT(name, dtypes, math)      // cpu/activation.cpp
EMBER_UNARY_OPS(EMBER_KERNEL)
#undef EMBER_KERNEL
#undef EMBER_KERNEL_OUT
#undef EMBER_KERNEL_FLOAT
#undef EMBER_KERNEL_SAME
#undef EMBER_KERNEL_INT
#undef EMBER_KERNEL_BOOL
#undef EMBER_KERNEL_SPECIAL
#undef EMBER_KERNEL_NOGRAD
#undef EMBER_KERNEL_ACT

// relu's backward (ops/unary.cpp): grad where result > 0, else 0; NaN passes grad, as torch.
Tensor relu_backward_kernel(const Tensor& grad, const Tensor& result) {
  // torch's threshold_backward lists the result before the gradient (Note [Output layout])
  Tensor out = empty_like_inputs(result.sizes(), result.dtype(), {&result, &grad});
  TensorIter it({&out, &grad, &result});
  dispatch<kFloatTypes>(result.dtype(), "relu_backward", [&](auto tag) {
    using T = decltype(tag);
    binary_loop<T, T, T>(it, [](auto g, auto r) { return r <= 0 ? decltype(g)(0) : g; });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::relu_backward, CPU, relu_backward_kernel);

Tensor nan_to_num_kernel(const Tensor& self, std::optional<double> nan,
                         std::optional<double> posinf, std::optional<double> neginf) {
  Tensor out = empty(self.sizes(), self.dtype());
  if (!is_floating_point(self.dtype())) return copy_(out, self);
  TensorIter it({&out, &self});
  dispatch<kFloatTypes>(self.dtype(), "nan_to_num", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    A n = A(nan.value_or(0.0));
    A hi = posinf ? A(*posinf) : A(acc_t<T>(std::numeric_limits<T>::max()));
    A lo = neginf ? A(*neginf) : A(acc_t<T>(std::numeric_limits<T>::lowest()));
    unary_loop<T, T>(it, [=](A x) {
      return std::isnan(x) ? n : std::isinf(x) ? (x > 0 ? hi : lo) : x;
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::nan_to_num, CPU, nan_to_num_kernel);

Tensor round_decimals_kernel(const Tensor& self, int64_t decimals) {
  Tensor out = empty(self.sizes(), self.dtype());
  TensorIter it({&out, &self});
  dispatch<kFloatTypes>(self.dtype(), "round", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    bool neg = decimals < 0;
    A ten = A(std::pow(10.0, double(neg ? -decimals : decimals)));
    unary_loop<T, T>(it, [=](A x) {
      return neg ? std::nearbyint(x / ten) * ten : std::nearbyint(x * ten) / ten;
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::round_decimals, CPU, round_decimals_kernel);

}  // namespace

}  // namespace ember::cpu
