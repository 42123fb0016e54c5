#pragma once
// Convolutions (torch.nn.functional.conv*, conv_transpose*). conv1d/conv2d run on a fused
// im2col + GEMM kernel (cpu/conv.cpp); the transposed forms are GEMM + col2im composites.
#include <array>
#include <optional>
#include <string_view>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// 1-d convolution over (N, C, L) or unbatched (C, L) input; one-element lists broadcast.
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);
/// conv1d with padding "same" or "valid".
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation = {1},
              int64_t groups = 1);
/// 2-d convolution over (N, C, H, W) or unbatched (C, H, W) input; one-element lists broadcast.
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias = std::nullopt,
              IntArrayRef stride = {1}, IntArrayRef padding = {0}, IntArrayRef dilation = {1},
              int64_t groups = 1);
/// conv2d with padding "same" or "valid".
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, std::string_view padding, IntArrayRef dilation = {1},
              int64_t groups = 1);
/// Transposed 1-d convolution; weight is (C_in, C_out / groups, k).
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
                        IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
/// Transposed 2-d convolution; weight is (C_in, C_out / groups, kH, kW).
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
                        IntArrayRef padding = {0}, IntArrayRef output_padding = {0},
                        int64_t groups = 1, IntArrayRef dilation = {1});
/// Gradients (input, weight, bias) of a batched conv2d; an entry of `output_mask` that is false
/// leaves its gradient undefined. Differentiable when grad mode is on.
std::tuple<Tensor, Tensor, Tensor> convolution_backward(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, int64_t groups, std::array<bool, 3> output_mask);

}  // namespace ember
