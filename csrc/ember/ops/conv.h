#pragma once
// Convolutions (torch.nn.functional.conv*, conv_transpose*). conv1d/conv2d run on a fused
// im2col + GEMM kernel (cpu/conv.cpp); the transposed forms are GEMM + col2im composites.
#include <array>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>

#include "ember/core/tensor.h"

namespace ember {

/// 1-d convolution over (N, C, L) or unbatched (C, L) input; one-element lists broadcast.
Tensor conv1d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
/// conv1d with padding "same" or "valid".
Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight,
                           const std::optional<Tensor>& bias, IntArrayRef stride,
                           std::string_view padding, IntArrayRef dilation = {1},
                           int64_t groups = 1);
/// 2-d convolution over (N, C, H, W) or unbatched (C, H, W) input; one-element lists broadcast.
Tensor conv2d(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt, IntArrayRef stride = {1},
              IntArrayRef padding = {0}, IntArrayRef dilation = {1}, int64_t groups = 1);
/// conv2d with padding "same" or "valid".
Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight,
                           const std::optional<Tensor>& bias, IntArrayRef stride,
                           std::string_view padding, IntArrayRef dilation = {1},
                           int64_t groups = 1);

// The string-padding overloads of conv1d/conv2d take any type convertible to std::string_view.
// They are templates so that a braced list such as `{0}` (which could also build a string_view
// from a null pointer) is not deducible for them and picks the IntArrayRef overload.
template <class S>
using IfString = std::enable_if_t<std::is_convertible_v<const S&, std::string_view>, int>;

/// conv1d with padding "same" or "valid".
template <class S, IfString<S> = 0>
Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, const S& padding, IntArrayRef dilation = {1},
              int64_t groups = 1) {
  return conv1d_padding_mode(input, weight, bias, stride, padding, dilation, groups);
}
/// conv2d with padding "same" or "valid".
template <class S, IfString<S> = 0>
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, const S& padding, IntArrayRef dilation = {1},
              int64_t groups = 1) {
  return conv2d_padding_mode(input, weight, bias, stride, padding, dilation, groups);
}
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
std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output,
                                                        const Tensor& input, const Tensor& weight,
                                                        IntArrayRef stride, IntArrayRef padding,
                                                        IntArrayRef dilation, int64_t groups,
                                                        std::array<bool, 3> output_mask);

}  // namespace ember
