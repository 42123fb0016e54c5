#pragma once
// The elementwise unary ops by name, kept apart from ops/unary.h so that core/tensor.h can
// declare a Tensor method for each (see Note [Tensor methods]) without including the ops layer.

// Unary ops that compute in floating point (integer inputs promote to the default dtype).
// (name, PyTorch backward node name)
#define EMBER_UNARY_FLOAT_OPS(_)     \
  _(exp, ExpBackward0)               \
  _(exp2, Exp2Backward0)             \
  _(expm1, Expm1Backward0)           \
  _(log, LogBackward0)               \
  _(log2, Log2Backward0)             \
  _(log10, Log10Backward0)           \
  _(log1p, Log1PBackward0)           \
  _(sqrt, SqrtBackward0)             \
  _(rsqrt, RsqrtBackward0)           \
  _(sin, SinBackward0)               \
  _(cos, CosBackward0)               \
  _(tan, TanBackward0)               \
  _(asin, AsinBackward0)             \
  _(acos, AcosBackward0)             \
  _(atan, AtanBackward0)             \
  _(sinh, SinhBackward0)             \
  _(cosh, CoshBackward0)             \
  _(tanh, TanhBackward0)             \
  _(asinh, AsinhBackward0)           \
  _(acosh, AcoshBackward0)           \
  _(atanh, AtanhBackward0)           \
  _(sigmoid, SigmoidBackward0)       \
  _(erf, ErfBackward0)               \
  _(erfc, ErfcBackward0)             \
  _(erfinv, ErfinvBackward0)         \
  _(reciprocal, ReciprocalBackward0) \
  _(sinc, SincBackward0)

// Unary ops that keep the input dtype.
#define EMBER_UNARY_SAME_OPS(_) \
  _(abs, AbsBackward0)          \
  _(neg, NegBackward0)          \
  _(sign, SignBackward0)        \
  _(floor, FloorBackward0)      \
  _(ceil, CeilBackward0)        \
  _(round, RoundBackward0)      \
  _(trunc, TruncBackward0)      \
  _(frac, FracBackward0)        \
  _(relu, ReluBackward0)        \
  _(bitwise_not, NotImplemented)
