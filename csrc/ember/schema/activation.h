#pragma once
// Fused activations: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

// (name, PyTorch backward node name)
#define EMBER_FUSED_ACTIVATIONS(_)     \
  _(gelu, GeluBackward0)               \
  _(silu, SiluBackward0)               \
  _(mish, MishBackward0)               \
  _(leaky_relu, LeakyReluBackward0)    \
  _(elu, EluBackward0)                 \
  _(softplus, SoftplusBackward0)       \
  _(hardtanh, HardtanhBackward0)       \
  _(hardsigmoid, HardsigmoidBackward0) \
  _(hardswish, HardswishBackward0)     \
  _(threshold, ThresholdBackward0)     \
  _(softshrink, SoftshrinkBackward0)   \
  _(hardshrink, HardshrinkBackward0)   \
  _(logsigmoid, LogSigmoidBackward0)

namespace ember::op {

// Each fused activation takes up to three parameters (p0..p2: negative_slope, alpha/scale,
// beta/threshold, ... as ops/activation.cpp passes them) and has a backward op of its own.
#define EMBER_DECLARE_ACTIVATION_OP(name, node)                                               \
  EMBER_DECLARE_OP(name, #name ".ember(Tensor self, float p0, float p1, float p2) -> Tensor", \
                   Tensor(const Tensor&, double, double, double));                            \
  EMBER_DECLARE_OP(name##_backward,                                                           \
                   #name                                                                      \
                   "_backward.ember(Tensor grad_output, Tensor self, float p0, float p1, "    \
                   "float p2) -> Tensor",                                                     \
                   Tensor(const Tensor&, const Tensor&, double, double, double));
EMBER_FUSED_ACTIVATIONS(EMBER_DECLARE_ACTIVATION_OP)
#undef EMBER_DECLARE_ACTIVATION_OP

}  // namespace ember::op
