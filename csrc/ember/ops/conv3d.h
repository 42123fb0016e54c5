#pragma once
// conv3d on its own 3-d kernels (Note [conv3d] in cpu/conv3d.cpp).
#include <array>
#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// 3-d convolution over (N, C, D, H, W) or unbatched (C, D, H, W) float32 or float64 input;
/// one-element lists broadcast; padding is symmetric (F.conv3d pads an odd 'same' total first).
Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups);
/// Gradients (input, weight, bias) of a batched conv3d; an entry of `output_mask` that is false
/// leaves its gradient undefined. Differentiable when grad mode is on.
std::tuple<Tensor, Tensor, Tensor> conv3d_backward(const Tensor& grad_output, const Tensor& input,
                                                   const Tensor& weight, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation,
                                                   int64_t groups, std::array<bool, 3> output_mask);

}  // namespace ember
