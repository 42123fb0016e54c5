#pragma once
// BatchNorm (training) + ReLU + 2x2 max-pool at stride 2 as one forward and one backward pass
// (Note [Fused BatchNorm, ReLU and max-pool] in cpu/batch_norm_relu_pool.cpp). Included by that
// file and by the binding (python/src/nn_spatial.cpp) only.
#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember::cpu {

/// (pooled output, window slots (uint8), batch mean, batch invstd) of
/// max_pool2d(relu(batch_norm(input, training=True)), 2) for a contiguous float32 NCHW input of
/// even height and width; updates the running statistics as batch_norm does.
std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_relu_max_pool2x2(
    const Tensor& input, const std::optional<Tensor>& weight, const std::optional<Tensor>& bias,
    const std::optional<Tensor>& running_mean, const std::optional<Tensor>& running_var,
    double momentum, double eps);

/// (input, weight, bias) gradients of the op above from the pooled output's gradient.
std::tuple<Tensor, Tensor, Tensor> batch_norm_relu_max_pool2x2_backward(
    const Tensor& grad, const Tensor& input, const Tensor& slots,
    const std::optional<Tensor>& weight, const Tensor& save_mean, const Tensor& save_invstd);

}  // namespace ember::cpu
