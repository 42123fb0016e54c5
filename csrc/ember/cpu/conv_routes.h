#pragma once
// The float convolution kernels of cpu/conv.cpp that cpu/conv3d.cpp builds on (Note [conv3d]):
// the 2-d forward and backward with their oneDNN routing, and the oneDNN pass over chunks of
// samples, which takes 1 to 3 spatial dims.
#include <array>
#include <optional>
#include <tuple>

#include "ember/core/tensor.h"
#include "ember/cpu/onednn.h"

namespace ember::cpu {

/// Whether `pass` of this float32 convolution goes to oneDNN (Note [Conv on oneDNN]); x and w
/// are the convolution's input and weight, of any number of spatial dims.
bool use_onednn(onednn::ConvPass pass, const Tensor& x, const Tensor& w, IntArrayRef stride,
                IntArrayRef padding, IntArrayRef dilation, int64_t groups);

/// One pass on oneDNN over chunks of samples, x, w, y contiguous in the pass's roles; weight
/// gradients summed over chunks in order. False when oneDNN did not run.
bool onednn_conv(onednn::ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                 const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                 IntArrayRef dilation, int64_t groups);

/// The 2-d convolution forward (NCHW result) and its gradients, as op::conv2d_forward and
/// op::convolution_backward compute them before the channels-last rule.
Tensor conv2d_forward_kernel(const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups);
std::tuple<Tensor, Tensor, Tensor> convolution_backward_kernel(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask);

}  // namespace ember::cpu
