#pragma once
// Elementwise unary ops: the one table, and the operator declarations made from it (Note [Op
// schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

// Note [Unary table]
// Every elementwise unary op is one row of EMBER_UNARY_OPS:
//   _(name, kind, dtypes, node, math, derivative, doc)
// - kind, the dtype rule and the forms the op has:
//     FLOAT   computes in floating point (integer and bool inputs in the default dtype); op and
//             in-place op `name_`; a derivative.
//     SAME    keeps the input dtype; op and in-place op; a derivative.
//     INT     keeps the input dtype (integers and bool); op and in-place op; no derivative.
//     BOOL    a bool result for any input dtype; no in-place form, no derivative.
//     SPECIAL computes in double, returns floating point as FLOAT; no in-place form; a
//             derivative (the special functions, torch.special's `special_*` ops).
//     NOGRAD  as SPECIAL, without a derivative: the result never requires grad, as torch
//             records no graph for these (torch.special's Bessel and Airy functions).
//     ACT     a fused activation: `name.ember(self, p0, p1, p2)`, whose three doubles carry its
//             parameters as ops/activation.cpp passes them, and `name_backward.ember(grad, self,
//             p0, p1, p2)` (Note [Activation kernels] in ops/activation.cpp).
// - dtypes: the dtypes the loop runs in (`core/dispatch_dtype.h`); others raise.
// - node: the name of the backward node, torch's.
// - math: the value of one element, an expression of `x` (the input widened to float or double,
//   or a GCC vector of them) over cpu/math.h and cpu/vmath.h (Note [Vector math]); for SPECIAL
//   a function of a double (cpu/special_math.h) for SPECIAL and NOGRAD; for ACT the name of the
//   forward kernel (cpu/activation.cpp).
// - derivative: grad times d(op)/d(self), in public ops of `grad`, `self` and `result` (so double
//   backward works); for ACT the name of the fused backward kernel; `-` where the kind has none.
// - doc: the docstring's sentence (python/src/ops_unary.cpp; unused for ACT).
// A column is read only by the files that need it: this header declares the ops from `name`
// and `kind`, cpu/unary.cpp (cpu/special.cpp, cpu/activation.cpp) makes the kernels from
// `dtypes` and `math`, ops/unary.cpp the public functions and derivatives from `node` and
// `derivative`, python/src/ops_unary.cpp the bindings from `doc`. The tokens of the other columns
// are never compiled there. A reader picks rows by kind: `#define EMBER_X(name, kind, ...)
// EMBER_X_##kind(name, __VA_ARGS__)` and one EMBER_X_<KIND> per kind (empty for the kinds it
// skips). core/tensor.h does not include this table (Note [Tensor methods]), so
// adding a row rebuilds only the few files that read it.
#define EMBER_UNARY_OPS(_)                                                                        \
  _(exp, FLOAT, kFloatTypes, ExpBackward0, fast_exp(x), grad* result,                             \
    "Raises e to the power of each element.")                                                     \
  _(exp2, FLOAT, kFloatTypes, Exp2Backward0, std::exp2(x), grad* result* std::numbers::ln2,       \
    "Raises 2 to the power of each element.")                                                     \
  _(expm1, FLOAT, kFloatTypes, Expm1Backward0, std::expm1(x), grad*(result + 1),                  \
    "Computes exp(x) - 1 for each element, accurately for x near zero.")                          \
  _(log, FLOAT, kFloatTypes, LogBackward0, fast_log(x), grad / self,                              \
    "Natural logarithm of each element.")                                                         \
  _(log2, FLOAT, kFloatTypes, Log2Backward0, std::log2(x), grad / (self * std::numbers::ln2),     \
    "Base-2 logarithm of each element.")                                                          \
  _(log10, FLOAT, kFloatTypes, Log10Backward0, std::log10(x), grad / (self * std::numbers::ln10), \
    "Base-10 logarithm of each element.")                                                         \
  _(log1p, FLOAT, kFloatTypes, Log1PBackward0, fast_log1p(x), grad / (self + 1),                  \
    "Computes log(1 + x) for each element, accurately for x near zero.")                          \
  _(sqrt, FLOAT, kFloatTypes, SqrtBackward0, std::sqrt(x), grad / (result * 2),                   \
    "Square root of each element.")                                                               \
  _(rsqrt, FLOAT, kFloatTypes, RsqrtBackward0, 1 / std::sqrt(x),                                  \
    grad * result * result * result * -0.5, "One over the square root of each element.")          \
  _(sin, FLOAT, kFloatTypes, SinBackward0, std::sin(x), grad* cos(self),                          \
    "Sine of each element, in radians.")                                                          \
  _(cos, FLOAT, kFloatTypes, CosBackward0, std::cos(x), -(grad * sin(self)),                      \
    "Cosine of each element, in radians.")                                                        \
  _(tan, FLOAT, kFloatTypes, TanBackward0, std::tan(x), grad*(result * result + 1),               \
    "Tangent of each element, in radians.")                                                       \
  _(asin, FLOAT, kFloatTypes, AsinBackward0, std::asin(x), grad* rsqrt(1 - self * self),          \
    "Arcsine of each element, in radians.")                                                       \
  _(acos, FLOAT, kFloatTypes, AcosBackward0, std::acos(x), -(grad * rsqrt(1 - self * self)),      \
    "Arccosine of each element, in radians.")                                                     \
  _(atan, FLOAT, kFloatTypes, AtanBackward0, std::atan(x), grad / (self * self + 1),              \
    "Arctangent of each element, in radians.")                                                    \
  _(sinh, FLOAT, kFloatTypes, SinhBackward0, std::sinh(x), grad* cosh(self),                      \
    "Hyperbolic sine of each element.")                                                           \
  _(cosh, FLOAT, kFloatTypes, CoshBackward0, std::cosh(x), grad* sinh(self),                      \
    "Hyperbolic cosine of each element.")                                                         \
  _(tanh, FLOAT, kFloatTypes, TanhBackward0, fast_tanh(x), grad*(1 - result * result),            \
    "Hyperbolic tangent of each element.")                                                        \
  _(asinh, FLOAT, kFloatTypes, AsinhBackward0, std::asinh(x), grad* rsqrt(self* self + 1),        \
    "Inverse hyperbolic sine of each element.")                                                   \
  _(acosh, FLOAT, kFloatTypes, AcoshBackward0, std::acosh(x), grad* rsqrt(self* self - 1),        \
    "Inverse hyperbolic cosine of each element.")                                                 \
  _(atanh, FLOAT, kFloatTypes, AtanhBackward0, std::atanh(x), grad / (1 - self * self),           \
    "Inverse hyperbolic tangent of each element.")                                                \
  _(sigmoid, FLOAT, kFloatTypes, SigmoidBackward0, fast_sigmoid(x), grad* result*(1 - result),    \
    "The logistic function 1 / (1 + exp(-x)) of each element.")                                   \
  _(erf, FLOAT, kFloatTypes, ErfBackward0, fast_erf(x),                                           \
    grad* exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi)),                                \
    "The Gauss error function of each element.")                                                  \
  _(erfc, FLOAT, kFloatTypes, ErfcBackward0, std::erfc(x),                                        \
    -(grad * exp(-(self * self)) * (2 / std::sqrt(std::numbers::pi))),                            \
    "The complementary error function, 1 - erf(x), of each element.")                             \
  _(erfinv, FLOAT, kFloatTypes, ErfinvBackward0, erfinv(x),                                       \
    grad* exp(result* result) * (std::sqrt(std::numbers::pi) / 2),                                \
    "The inverse of erf for each element (defined on [-1, 1]).")                                  \
  _(reciprocal, FLOAT, kFloatTypes, ReciprocalBackward0, 1 / x, -(grad * result * result),        \
    "One over each element; integer inputs give a floating result.")                              \
  _(sinc, FLOAT, kFloatTypes, SincBackward0, sinc_of(x),                                          \
    grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0),                                         \
                (cos(self * std::numbers::pi) - result) / self),                                  \
    "The normalized sinc function sin(pi x) / (pi x) of each element, 1 at 0.")                   \
  _(abs, SAME, kNumericTypes, AbsBackward0, abs_of(x), grad* sign(self),                          \
    "Absolute value of each element.")                                                            \
  _(neg, SAME, kNumericTypes, NegBackward0, -x, -grad, "Each element with its sign flipped.")     \
  _(sign, SAME, kAllTypes, SignBackward0, sign_of(x), zeros_like(grad),                           \
    "-1, 0 or 1 for each element, following its sign.")                                           \
  _(floor, SAME, kNumericTypes, FloorBackward0, floor_of(x), zeros_like(grad),                    \
    "Rounds each element down to an integer value.")                                              \
  _(ceil, SAME, kNumericTypes, CeilBackward0, ceil_of(x), zeros_like(grad),                       \
    "Rounds each element up to an integer value.")                                                \
  _(round, SAME, kNumericTypes, RoundBackward0, round_of(x), zeros_like(grad),                    \
    "Rounds each element to `decimals` places, halves to even.")                                  \
  _(trunc, SAME, kNumericTypes, TruncBackward0, trunc_of(x), zeros_like(grad),                    \
    "Rounds each element toward zero.")                                                           \
  _(frac, SAME, kFloatTypes, FracBackward0, x - std::trunc(x), grad,                              \
    "The fractional part of each element, x - trunc(x).")                                         \
  _(relu, SAME, kNumericTypes, ReluBackward0, relu_of(x), relu_backward(grad, result),            \
    "Each element, with negative ones replaced by zero.")                                         \
  _(bitwise_not, INT, kIntBoolTypes, -, not_of(x), -,                                             \
    "Bitwise NOT of each element (logical NOT for bool tensors).")                                \
  _(isnan, BOOL, kAllTypes, -, isnan_of(x), -, "True where an element is NaN.")                   \
  _(isinf, BOOL, kAllTypes, -, isinf_of(x), -,                                                    \
    "True where an element is positive or negative infinity.")                                    \
  _(isfinite, BOOL, kAllTypes, -, isfinite_of(x), -,                                              \
    "True where an element is neither infinite nor NaN.")                                         \
  _(isposinf, BOOL, kAllTypes, -, isposinf_of(x), -,                                              \
    "True where an element is positive infinity.")                                                \
  _(isneginf, BOOL, kAllTypes, -, isneginf_of(x), -,                                              \
    "True where an element is negative infinity.")                                                \
  _(signbit, BOOL, kAllTypes, -, signbit_of(x), -,                                                \
    "True where an element's sign bit is set (negative numbers and -0.0).")                       \
  _(logical_not, BOOL, kAllTypes, -, !bool(x), -,                                                 \
    "True where an element is zero (a bool tensor).")                                             \
  _(lgamma, SPECIAL, kFloatTypes, LgammaBackward0, std::lgamma, grad* digamma(self),              \
    "The natural log of the absolute value of Gamma(x), elementwise.")                            \
  _(digamma, SPECIAL, kFloatTypes, DigammaBackward0, special::digamma, grad* polygamma(1, self),  \
    "The derivative of lgamma, elementwise.")                                                     \
  _(i0, SPECIAL, kFloatTypes, I0Backward0, special::i0, grad* special_i1(self),                   \
    "The modified Bessel function of the first kind and order 0.")                                \
  _(special_i0e, SPECIAL, kFloatTypes, SpecialI0EBackward0, special::i0e,                         \
    grad*(special_i1e(self) - sign(self) * result),                                               \
    "exp(-|x|) * i0(x), without overflow (ember.special.i0e).")                                   \
  _(special_i1, SPECIAL, kFloatTypes, SpecialI1Backward0, special::i1,                            \
    grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0.5), i0(self) - result / self),            \
    "The modified Bessel function of the first kind and order 1 (ember.special.i1).")             \
  _(special_i1e, SPECIAL, kFloatTypes, SpecialI1EBackward0, special::i1e,                         \
    grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0.5),                                       \
                special_i0e(self) - result * (sign(self) + reciprocal(self))),                    \
    "exp(-|x|) * i1(x), without overflow (ember.special.i1e).")                                   \
  _(special_spherical_bessel_j0, SPECIAL, kSingleDoubleTypes, SpecialSphericalBesselJ0Backward0,  \
    special::spherical_bessel_j0,                                                                 \
    grad* where(eq(self, wrap_scalar(0)), wrap_scalar(0), (cos(self) - result) / self),           \
    "The spherical Bessel function of the first kind and order 0, sin(x) / x (1 at 0).")          \
  _(special_bessel_j0, NOGRAD, kSingleDoubleTypes, -, special::bessel_j0, -,                      \
    "The Bessel function of the first kind and order 0.")                                         \
  _(special_bessel_j1, NOGRAD, kSingleDoubleTypes, -, special::bessel_j1, -,                      \
    "The Bessel function of the first kind and order 1.")                                         \
  _(special_bessel_y0, NOGRAD, kSingleDoubleTypes, -, special::bessel_y0, -,                      \
    "The Bessel function of the second kind and order 0.")                                        \
  _(special_bessel_y1, NOGRAD, kSingleDoubleTypes, -, special::bessel_y1, -,                      \
    "The Bessel function of the second kind and order 1.")                                        \
  _(special_modified_bessel_i0, NOGRAD, kSingleDoubleTypes, -, special::i0, -,                    \
    "The modified Bessel function of the first kind and order 0.")                                \
  _(special_modified_bessel_i1, NOGRAD, kSingleDoubleTypes, -, special::i1, -,                    \
    "The modified Bessel function of the first kind and order 1.")                                \
  _(special_modified_bessel_k0, NOGRAD, kSingleDoubleTypes, -, special::modified_bessel_k0, -,    \
    "The modified Bessel function of the second kind and order 0.")                               \
  _(special_modified_bessel_k1, NOGRAD, kSingleDoubleTypes, -, special::modified_bessel_k1, -,    \
    "The modified Bessel function of the second kind and order 1.")                               \
  _(special_scaled_modified_bessel_k0, NOGRAD, kSingleDoubleTypes, -,                             \
    special::scaled_modified_bessel_k0, -, "exp(x) * modified_bessel_k0(x), without underflow.")  \
  _(special_scaled_modified_bessel_k1, NOGRAD, kSingleDoubleTypes, -,                             \
    special::scaled_modified_bessel_k1, -, "exp(x) * modified_bessel_k1(x), without underflow.")  \
  _(special_airy_ai, NOGRAD, kSingleDoubleTypes, -, special::airy_ai, -,                          \
    "The Airy function Ai(x).")                                                                   \
  _(gelu, ACT, kFloatTypes, GeluBackward0, gelu_kernel, gelu_backward_kernel, "")                 \
  _(silu, ACT, kFloatTypes, SiluBackward0, silu_kernel, silu_backward_kernel, "")                 \
  _(mish, ACT, kFloatTypes, MishBackward0, mish_kernel, mish_backward_kernel, "")                 \
  _(leaky_relu, ACT, kFloatTypes, LeakyReluBackward0, leaky_relu_kernel,                          \
    leaky_relu_backward_kernel, "")                                                               \
  _(elu, ACT, kFloatTypes, EluBackward0, elu_kernel, elu_backward_kernel, "")                     \
  _(softplus, ACT, kFloatTypes, SoftplusBackward0, softplus_kernel, softplus_backward_kernel, "") \
  _(hardtanh, ACT, kFloatTypes, HardtanhBackward0, hardtanh_kernel, hardtanh_backward_kernel, "") \
  _(hardsigmoid, ACT, kFloatTypes, HardsigmoidBackward0, hardsigmoid_kernel,                      \
    hardsigmoid_backward_kernel, "")                                                              \
  _(hardswish, ACT, kFloatTypes, HardswishBackward0, hardswish_kernel, hardswish_backward_kernel, \
    "")                                                                                           \
  _(threshold, ACT, kFloatTypes, ThresholdBackward0, threshold_kernel, threshold_backward_kernel, \
    "")                                                                                           \
  _(softshrink, ACT, kFloatTypes, SoftshrinkBackward0, softshrink_kernel, shrink_backward_kernel, \
    "")                                                                                           \
  _(hardshrink, ACT, kFloatTypes, HardshrinkBackward0, hardshrink_kernel, shrink_backward_kernel, \
    "")                                                                                           \
  _(logsigmoid, ACT, kFloatTypes, LogSigmoidBackward0, logsigmoid_kernel,                         \
    logsigmoid_backward_kernel, "")

namespace ember::op {

#define EMBER_DECLARE_UNARY(name, kind, ...) EMBER_DECLARE_UNARY_##kind(name)
// Each kind but ACT has torch's out= form, the kernel the backends register (Note [Meta step] in
// ops/meta.h); the op and its in-place form are the meta step in front of it.
#define EMBER_DECLARE_UNARY_WITH_INPLACE(name) \
  EMBER_DECLARE_UNARY_BOOL(name)               \
  EMBER_DECLARE_OP(name##_, #name "_(Tensor(a!) self) -> Tensor(a!)", Tensor&(Tensor&));
#define EMBER_DECLARE_UNARY_FLOAT(name) EMBER_DECLARE_UNARY_WITH_INPLACE(name)
#define EMBER_DECLARE_UNARY_SAME(name) EMBER_DECLARE_UNARY_WITH_INPLACE(name)
#define EMBER_DECLARE_UNARY_INT(name) EMBER_DECLARE_UNARY_WITH_INPLACE(name)
#define EMBER_DECLARE_UNARY_BOOL(name)                                                     \
  EMBER_DECLARE_OP(name, #name "(Tensor self) -> Tensor", Tensor(const Tensor&));          \
  EMBER_DECLARE_OP(name##_out, #name ".out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)", \
                   Tensor&(const Tensor&, Tensor&));
#define EMBER_DECLARE_UNARY_SPECIAL(name) EMBER_DECLARE_UNARY_BOOL(name)
#define EMBER_DECLARE_UNARY_NOGRAD(name) EMBER_DECLARE_UNARY_BOOL(name)
#define EMBER_DECLARE_UNARY_ACT(name)                                                         \
  EMBER_DECLARE_OP(name, #name ".ember(Tensor self, float p0, float p1, float p2) -> Tensor", \
                   Tensor(const Tensor&, double, double, double));                            \
  EMBER_DECLARE_OP(name##_backward,                                                           \
                   #name                                                                      \
                   "_backward.ember(Tensor grad_output, Tensor self, float p0, float p1, "    \
                   "float p2) -> Tensor",                                                     \
                   Tensor(const Tensor&, const Tensor&, double, double, double));
EMBER_UNARY_OPS(EMBER_DECLARE_UNARY)
#undef EMBER_DECLARE_UNARY
#undef EMBER_DECLARE_UNARY_WITH_INPLACE
#undef EMBER_DECLARE_UNARY_FLOAT
#undef EMBER_DECLARE_UNARY_SAME
#undef EMBER_DECLARE_UNARY_INT
#undef EMBER_DECLARE_UNARY_BOOL
#undef EMBER_DECLARE_UNARY_SPECIAL
#undef EMBER_DECLARE_UNARY_NOGRAD
#undef EMBER_DECLARE_UNARY_ACT

EMBER_DECLARE_OP(relu_backward, "relu_backward(Tensor grad_output, Tensor result) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(
    nan_to_num,
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>));
EMBER_DECLARE_OP(round_decimals, "round.decimals(Tensor self, *, int decimals) -> Tensor",
                 Tensor(const Tensor&, int64_t));

}  // namespace ember::op
