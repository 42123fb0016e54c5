#pragma once
// Convolutions: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(conv2d_forward,
                 "conv2d_forward(Tensor input, Tensor weight, Tensor? bias, int[2] stride, int[2] "
                 "padding, int[2] dilation, int groups) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef,
                        IntArrayRef, IntArrayRef, int64_t));
EMBER_DECLARE_OP(
    convolution_backward,
    "convolution_backward.ember(Tensor grad_output, Tensor input, Tensor weight, int[2] stride, "
    "int[2] padding, int[2] dilation, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                                       IntArrayRef, IntArrayRef, int64_t, std::array<bool, 3>));

EMBER_DECLARE_OP(conv3d_forward,
                 "conv3d_forward(Tensor input, Tensor weight, Tensor? bias, int[3] stride, int[3] "
                 "padding, int[3] dilation, int groups) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, IntArrayRef,
                        IntArrayRef, IntArrayRef, int64_t));
EMBER_DECLARE_OP(
    conv3d_backward,
    "conv3d_backward(Tensor grad_output, Tensor input, Tensor weight, int[3] stride, "
    "int[3] padding, int[3] dilation, int groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)",
    std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, IntArrayRef,
                                       IntArrayRef, IntArrayRef, int64_t, std::array<bool, 3>));

}  // namespace ember::op
