// CPU kernels of the unary ops (one functor each) and the predicates.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include <numbers>

#include "ember/core/type_promotion.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/unary.h"

namespace ember::cpu {

namespace {

// (name, expression of x, which is the widened input value)
#define EMBER_UNARY_FLOAT_KERNELS(_)                               \
  _(exp, fast_exp(x))                                              \
  _(exp2, std::exp2(x))                                            \
  _(expm1, std::expm1(x))                                          \
  _(log, fast_log(x))                                              \
  _(log2, std::log2(x))                                            \
  _(log10, std::log10(x))                                          \
  _(log1p, fast_log1p(x))                                          \
  _(sqrt, std::sqrt(x))                                            \
  _(rsqrt, 1 / std::sqrt(x))                                       \
  _(sin, std::sin(x))                                              \
  _(cos, std::cos(x))                                              \
  _(tan, std::tan(x))                                              \
  _(asin, std::asin(x))                                            \
  _(acos, std::acos(x))                                            \
  _(atan, std::atan(x))                                            \
  _(sinh, std::sinh(x))                                            \
  _(cosh, std::cosh(x))                                            \
  _(tanh, fast_tanh(x))                                            \
  _(asinh, std::asinh(x))                                          \
  _(acosh, std::acosh(x))                                          \
  _(atanh, std::atanh(x))                                          \
  _(sigmoid, fast_sigmoid(x))                                      \
  _(erf, fast_erf(x))                                              \
  _(erfc, std::erfc(x))                                            \
  _(erfinv, erfinv(x))                                             \
  _(reciprocal, 1 / x)                                             \
  _(sinc, x == 0 ? decltype(x)(1)                                  \
                 : std::sin(std::numbers::pi_v<decltype(x)> * x) / \
                       (std::numbers::pi_v<decltype(x)> * x))

// Floating output: integer and bool inputs compute in the default dtype.
template <class F>
void float_into(const char* name, const Tensor& out, const Tensor& self, F f) {
  Tensor in = self.dtype() == out.dtype() ? self : to_dtype(self, out.dtype());
  TensorIter it({&out, &in});
  dispatch<kFloatTypes>(out.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(it, f);
  });
}

ScalarType float_result(const Tensor& self) {
  return is_floating_point(self.dtype()) ? self.dtype() : default_dtype();
}

#define EMBER_FLOAT_KERNEL(name, expr)                                         \
  Tensor name##_kernel(const Tensor& self) {                                   \
    Tensor out = empty_like_inputs(self.sizes(), float_result(self), {&self}); \
    float_into(#name, out, self, [](auto x) { return expr; });                 \
    return out;                                                                \
  }                                                                            \
  Tensor& name##_inplace_kernel(Tensor& self) {                                \
    check_inplace_dtype(self, float_result(self), #name "_");                  \
    float_into(#name, self, self, [](auto x) { return expr; });                \
    return self;                                                               \
  }                                                                            \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);                         \
  EMBER_REGISTER_KERNEL(op::name##_, CPU, name##_inplace_kernel);
EMBER_UNARY_FLOAT_KERNELS(EMBER_FLOAT_KERNEL)
#undef EMBER_FLOAT_KERNEL

// Same-dtype ops: Allowed is the dtype set; f sees the widened value.
template <uint32_t Allowed, class F>
void same_into(const char* name, const Tensor& out, const Tensor& self, F f) {
  TensorIter it({&out, &self});
  dispatch<Allowed>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(it, [&](auto x) { return f(x); });
  });
}

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T>;

// Out of line on purpose: GCC 12 crashes (ICE) vectorizing std::signbit loops.
[[gnu::noinline]] bool sign_bit(double x) { return std::signbit(x); }

#define EMBER_SAME_KERNEL(name, allowed, ...)                            \
  Tensor name##_kernel(const Tensor& self) {                             \
    Tensor out = empty_like_inputs(self.sizes(), self.dtype(), {&self}); \
    same_into<allowed>(#name, out, self, __VA_ARGS__);                   \
    return out;                                                          \
  }                                                                      \
  Tensor& name##_inplace_kernel(Tensor& self) {                          \
    same_into<allowed>(#name, self, self, __VA_ARGS__);                  \
    return self;                                                         \
  }                                                                      \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);                   \
  EMBER_REGISTER_KERNEL(op::name##_, CPU, name##_inplace_kernel);

EMBER_SAME_KERNEL(abs, kNumericTypes, [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_unsigned_v<T>) return x;
  else if constexpr (is_float_v<T>) return std::abs(x);  // abs(-0.0) is +0.0
  else return x < 0 ? T(-x) : x;
})
EMBER_SAME_KERNEL(sign, kAllTypes, [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_same_v<T, bool>) return x;
  else return T((T(0) < x) - (x < T(0)));
})
EMBER_SAME_KERNEL(floor, kNumericTypes, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::floor(x);
  else return x;
})
EMBER_SAME_KERNEL(ceil, kNumericTypes, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::ceil(x);
  else return x;
})
EMBER_SAME_KERNEL(round, kNumericTypes, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::nearbyint(x);
  else return x;
})
EMBER_SAME_KERNEL(trunc, kNumericTypes, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::trunc(x);
  else return x;
})
EMBER_SAME_KERNEL(frac, kFloatTypes, [](auto x) { return x - std::trunc(x); })
EMBER_SAME_KERNEL(relu, kNumericTypes, [](auto x) {
  using T = decltype(x);
  return x <= T(0) ? T(0) : x;  // NaN stays NaN
})
EMBER_SAME_KERNEL(bitwise_not, kIntBoolTypes, [](auto x) {
  using T = decltype(x);
  if constexpr (std::is_same_v<T, bool>) return !x;
  else return T(~x);
})
#undef EMBER_SAME_KERNEL

Tensor neg_kernel(const Tensor& self) {
  EMBER_CHECK(self.dtype() != kBool,
              "Negation, the `-` operator, on a bool tensor is not "
              "supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
              "operator instead.");
  Tensor out = empty_like_inputs(self.sizes(), self.dtype(), {&self});
  same_into<kNumericTypes>("neg", out, self, [](auto x) { return -x; });
  return out;
}
Tensor& neg_inplace_kernel(Tensor& self) {
  EMBER_CHECK(self.dtype() != kBool,
              "Negation, the `-` operator, on a bool tensor is not "
              "supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
              "operator instead.");
  same_into<kNumericTypes>("neg", self, self, [](auto x) { return -x; });
  return self;
}
EMBER_REGISTER_KERNEL(op::neg, CPU, neg_kernel);
EMBER_REGISTER_KERNEL(op::neg_, CPU, neg_inplace_kernel);

// Predicates: any input dtype, bool output.
template <class F>
Tensor predicate(const char* name, const Tensor& self, F f) {
  Tensor out = empty_like_inputs(self.sizes(), kBool, {&self});
  TensorIter it({&out, &self});
  dispatch<kAllTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<bool, T>(it, f);
  });
  return out;
}

#define EMBER_PREDICATE(name, ...)                                                         \
  Tensor name##_kernel(const Tensor& self) { return predicate(#name, self, __VA_ARGS__); } \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);

EMBER_PREDICATE(isnan, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::isnan(x);
  else return false;
})
EMBER_PREDICATE(isinf, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::isinf(x);
  else return false;
})
EMBER_PREDICATE(isfinite, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::isfinite(x);
  else return true;
})
EMBER_PREDICATE(isposinf, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::isinf(x) && x > 0;
  else return false;
})
EMBER_PREDICATE(isneginf, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return std::isinf(x) && x < 0;
  else return false;
})
EMBER_PREDICATE(signbit, [](auto x) {
  if constexpr (is_float_v<decltype(x)>) return sign_bit(double(x));
  else if constexpr (std::is_signed_v<decltype(x)>) return x < 0;
  else return false;
})
EMBER_PREDICATE(logical_not, [](auto x) { return !bool(x); })
#undef EMBER_PREDICATE

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
