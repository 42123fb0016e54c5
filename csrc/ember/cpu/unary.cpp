// CPU kernels of the unary ops (one functor each) and the predicates.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include <numbers>
#include <optional>
#include <string_view>

#include "ember/core/type_promotion.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/unary.h"

namespace ember::cpu {

namespace {

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

// Same-dtype ops: Allowed is the dtype set; f sees the widened value.
template <uint32_t Allowed, class F>
void same_into(const char* name, const Tensor& out, const Tensor& self, F f) {
  TensorIter it({&out, &self});
  dispatch<Allowed>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(it, [&](auto x) { return f(x); });
  });
}

// torch's relu is clamp_min(self, 0) (Note [Profiler rows]): its range covers the output's
// allocation too, which a memory profile then attributes to clamp_min, as torch's.
void clamp_rows(std::optional<profiler::OpRange>& rows, const char* name, const Tensor& self,
                bool inplace) {
  if (profiler::enabled() && std::string_view(name) == "relu") [[unlikely]]
    rows.emplace(inplace ? "clamp_min_" : "clamp_min", self, 0);
}

// torch's own text for the one same-dtype op that refuses a dtype by name.
void check_same_input(std::string_view name, const Tensor& self) {
  EMBER_CHECK(self.dtype() != kBool || name != "neg",
              "Negation, the `-` operator, on a bool tensor is not "
              "supported. If you are trying to invert a mask, use the `~` or `logical_not()` "
              "operator instead.");
}

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

// The kernels of the unary table (Note [Unary table] in schema/unary.h), by kind.
#define EMBER_KERNEL(name, kind, dtypes, node, math, ...) EMBER_KERNEL_##kind(name, dtypes, math)
#define EMBER_KERNEL_FLOAT(name, dtypes, math)                                 \
  Tensor name##_kernel(const Tensor& self) {                                   \
    Tensor out = empty_like_inputs(self.sizes(), float_result(self), {&self}); \
    float_into(#name, out, self, [](auto x) { return math; });                 \
    return out;                                                                \
  }                                                                            \
  Tensor& name##_inplace_kernel(Tensor& self) {                                \
    check_inplace_dtype(self, float_result(self), #name "_");                  \
    float_into(#name, self, self, [](auto x) { return math; });                \
    return self;                                                               \
  }                                                                            \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);                         \
  EMBER_REGISTER_KERNEL(op::name##_, CPU, name##_inplace_kernel);
#define EMBER_KERNEL_SAME(name, dtypes, math)                            \
  Tensor name##_kernel(const Tensor& self) {                             \
    check_same_input(#name, self);                                       \
    std::optional<profiler::OpRange> rows;                               \
    clamp_rows(rows, #name, self, false);                                \
    Tensor out = empty_like_inputs(self.sizes(), self.dtype(), {&self}); \
    same_into<dtypes>(#name, out, self, [](auto x) { return math; });    \
    return out;                                                          \
  }                                                                      \
  Tensor& name##_inplace_kernel(Tensor& self) {                          \
    check_same_input(#name, self);                                       \
    std::optional<profiler::OpRange> rows;                               \
    clamp_rows(rows, #name, self, true);                                 \
    same_into<dtypes>(#name, self, self, [](auto x) { return math; });   \
    return self;                                                         \
  }                                                                      \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);                   \
  EMBER_REGISTER_KERNEL(op::name##_, CPU, name##_inplace_kernel);
#define EMBER_KERNEL_INT(name, dtypes, math) EMBER_KERNEL_SAME(name, dtypes, math)
#define EMBER_KERNEL_BOOL(name, dtypes, math)                   \
  Tensor name##_kernel(const Tensor& self) {                    \
    return predicate(#name, self, [](auto x) { return math; }); \
  }                                                             \
  EMBER_REGISTER_KERNEL(op::name, CPU, name##_kernel);
#define EMBER_KERNEL_SPECIAL(name, dtypes, math)  // cpu/special.cpp
#define EMBER_KERNEL_NOGRAD(name, dtypes, math)   // cpu/special.cpp
#define EMBER_KERNEL_ACT(name, dtypes, math)      // cpu/activation.cpp
EMBER_UNARY_OPS(EMBER_KERNEL)
#undef EMBER_KERNEL
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
