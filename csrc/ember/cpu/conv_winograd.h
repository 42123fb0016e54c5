#pragma once
// Winograd F(2x2, 3x3) float32 convolution (Note [Winograd convolution] in
// cpu/conv_winograd.cpp), for cpu/conv.cpp's routes.
#include <optional>

#include "ember/core/tensor.h"

namespace ember::cpu {

/// Whether a convolution from `in_channels` to `out_channels` with this kernel goes to Winograd:
/// float32, 3x3, unit stride and dilation, one group, enough channels; EMBER_WINOGRAD=0 (read on
/// every call) turns it off.
bool winograd_applies(ScalarType dtype, int64_t in_channels, int64_t out_channels,
                      IntArrayRef kernel, IntArrayRef stride, IntArrayRef dilation, int64_t groups);

/// y = conv2d(x, w, bias) with this padding, all contiguous NCHW and winograd_applies. False,
/// with y unspecified, when x or w holds an infinity or NaN (Note [Winograd convolution]).
bool winograd_forward(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                      const Tensor& y, IntArrayRef padding);

/// Whether winograd_backward should take the input gradient too when it computes the weight
/// gradient (Note [Winograd convolution]); otherwise the turned convolution is faster.
bool winograd_adjoint_pays(int64_t in_channels, int64_t out_channels, int64_t H, int64_t W,
                           IntArrayRef padding, int64_t OH, int64_t OW);

/// The gradients of conv2d(x, w) given grad_output go, as winograd_forward's: gi (the input
/// gradient) and gw (the weight gradient), each skipped when undefined. Both share the output
/// gradient's transform. False, with both unspecified, when an operand they read (go, x for gw,
/// w for gi) holds an infinity or NaN.
bool winograd_backward(const Tensor& go, const Tensor& x, const Tensor& w, const Tensor& gi,
                       const Tensor& gw, IntArrayRef padding);

}  // namespace ember::cpu
