// conv3d in float32 and float64: checks, the call to the kernels of cpu/conv3d.cpp (Note
// [conv3d]) and the derivative. Its create_graph backward is the 2-d convolution over the depth
// taps that the kernels fall back to, written in differentiable ops.
#include <array>
#include <limits>
#include <vector>

#include "ember/core/grad_mode.h"
#include "ember/ops/conv3d.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/conv.h"

namespace ember {

namespace {

// The gradients as compositions of differentiable ops (create_graph, forward-mode AD): x folded
// as Note [conv3d] says, the 2-d convolution's differentiable backward, and the fold's adjoint
// (each tap's input gradient spread back to its depths and summed).
std::tuple<Tensor, Tensor, Tensor> conv3d_backward_composite(const Tensor& go, const Tensor& x,
                                                             const Tensor& w, IntArrayRef stride,
                                                             IntArrayRef padding,
                                                             IntArrayRef dilation, int64_t groups,
                                                             std::array<bool, 3> mask) {
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), kD = w.size(2), Do = go.size(2);
  const int64_t D = x.size(2), H = x.size(3), W = x.size(4), Dp = D + 2 * padding[0];
  const int64_t span = stride[0] * (Do - 1) + 1;
  Tensor gi, gw, gb;
  if (mask[0] || mask[1]) {
    Tensor xp = padding[0] ? pad(x, {0, 0, 0, 0, padding[0], padding[0]}) : x;
    std::vector<Tensor> taps;
    for (int64_t t = 0; t < kD; ++t)
      taps.push_back(slice(xp, 2, t * dilation[0], t * dilation[0] + span, stride[0]));
    Tensor x2 = reshape(permute(stack(taps, 3), {0, 2, 1, 3, 4, 5}), {N * Do, C * kD, H, W});
    Tensor go2 = reshape(permute(go, {0, 2, 1, 3, 4}), {N * Do, O, go.size(3), go.size(4)});
    Tensor w2 = reshape(w, {O, w.size(1) * kD, w.size(3), w.size(4)});
    auto [gi2, gw2, unused] =
        convolution_backward(go2, x2, w2, stride.slice(1, 2), padding.slice(1, 2),
                             dilation.slice(1, 2), groups, {mask[0], mask[1], false});
    if (mask[1]) gw = reshape(gw2, w.sizes());
    if (mask[0]) {
      Tensor g6 = permute(reshape(gi2, {N, Do, C, kD, H, W}), {0, 2, 1, 3, 4, 5});
      Tensor acc;
      for (int64_t t = 0; t < kD; ++t) {
        Tensor piece = select(g6, 3, t);  // (N, C, Do, H, W): the depths t * dilation + d * stride
        if (stride[0] > 1) {              // zeros between the depths
          std::vector<Tensor> spread = {piece};
          for (int64_t k = 1; k < stride[0]; ++k) spread.push_back(zeros_like(piece));
          piece = narrow(reshape(stack(spread, 3), {N, C, Do * stride[0], H, W}), 2, 0, span);
        }
        piece = pad(piece, {0, 0, 0, 0, t * dilation[0], Dp - t * dilation[0] - span});
        acc = acc.defined() ? add(acc, piece) : piece;
      }
      gi = narrow(acc, 2, padding[0], D);
    }
  }
  if (mask[2]) gb = sum(go, {0, 2, 3, 4});
  return {gi, gw, gb};
}

std::tuple<Tensor, Tensor, Tensor> conv3d_grads(const Tensor& grad, const Tensor& input,
                                                const Tensor& weight, IntArrayRef stride,
                                                IntArrayRef padding, IntArrayRef dilation,
                                                int64_t groups, std::array<bool, 3> need) {
  if (!grad.defined()) return {};
  return conv3d_backward(grad, input, weight, stride, padding, dilation, groups, need);
}
EMBER_DERIVATIVE_GROUPED(op::conv3d_forward, "ConvolutionBackward0",
                         (input, weight, bias, stride, padding, dilation, groups), (result),
                         (input, weight, bias),
                         conv3d_grads(grad, input, weight, stride, padding, dilation, groups,
                                      need));

// Three values, one broadcast, as torch's expand_param_if_needed.
std::array<int64_t, 3> triple(IntArrayRef v, const char* name) {
  EMBER_CHECK(v.size() == 1 || v.size() == 3, "conv3d: expected ", name,
              " to be a single integer value or a list of 3 values to match the convolution ",
              "dimensions, but got ", name, "=", v);
  return {v[0], v[v.size() == 3 ? 1 : 0], v[v.size() == 3 ? 2 : 0]};
}

}  // namespace

Tensor conv3d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  EMBER_CHECK(input.dim() == 4 || input.dim() == 5,
              "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: ",
              input.sizes());
  EMBER_CHECK(weight.dim() == 5, "conv3d: expected weight to be 5-dimensional; got weight of ",
              "size ", weight.sizes());
  const auto s = triple(stride, "stride"), p = triple(padding, "padding");
  const auto d = triple(dilation, "dilation");
  EMBER_CHECK(groups > 0, "non-positive groups is not supported");
  for (int64_t v : s) EMBER_CHECK(v > 0, "non-positive stride is not supported");
  for (int64_t v : p) EMBER_CHECK(v >= 0, "negative padding is not supported");
  for (int64_t v : d) EMBER_CHECK(v > 0, "dilation should be greater than zero");
  const ScalarType t = input.dtype();
  EMBER_CHECK_KIND(t == kFloat || t == kDouble, ErrorKind::NotImplemented,
                   "conv3d: this kernel takes float32 or float64; got ", scalar_type_name(t));
  EMBER_CHECK(weight.dtype() == t && (!bias || bias->dtype() == t),
              "conv3d: expected input, weight and bias to have the same dtype; got input ",
              scalar_type_name(t), " and weight ", scalar_type_name(weight.dtype()));
  Tensor x = input.dim() == 4 ? unsqueeze(input, 0) : input;
  EMBER_CHECK(weight.size(0) >= groups, "Given groups=", groups,
              ", expected weight to be at least ", groups,
              " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  EMBER_CHECK(weight.size(0) % groups == 0, "Given groups=", groups,
              ", expected weight to be divisible by ", groups,
              " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  EMBER_CHECK(x.size(1) == weight.size(1) * groups, "Given groups=", groups, ", weight of size ",
              weight.sizes(), ", expected input", x.sizes(), " to have ", weight.size(1) * groups,
              " channels, but got ", x.size(1), " channels instead");
  EMBER_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == weight.size(0)),
              "Given weight of size ", weight.sizes(), ", expected bias to be 1-dimensional with ",
              weight.size(0), " elements, but got bias of size ",
              bias ? bias->sizes() : IntArrayRef{}, " instead");
  // In 128 bits: a padding or dilation near INT64_MAX must not wrap into a valid-looking size.
  std::array<__int128, 3> padded, kernel;
  for (int i = 0; i < 3; ++i) {
    padded[size_t(i)] = __int128(x.size(i + 2)) + 2 * __int128(p[size_t(i)]);
    kernel[size_t(i)] = __int128(weight.size(i + 2) - 1) * d[size_t(i)] + 1;
    EMBER_CHECK(padded[size_t(i)] <= std::numeric_limits<int64_t>::max() &&
                    kernel[size_t(i)] <= std::numeric_limits<int64_t>::max(),
                "conv3d: expected padded input and kernel sizes that fit in int64; got padding ",
                padding, ", dilation ", dilation);
  }
  for (int i = 0; i < 3; ++i)
    EMBER_CHECK(padded[size_t(i)] >= kernel[size_t(i)],
                "Calculated padded input size per channel: (", int64_t(padded[0]), " x ",
                int64_t(padded[1]), " x ", int64_t(padded[2]), "). Kernel size: (",
                int64_t(kernel[0]), " x ", int64_t(kernel[1]), " x ", int64_t(kernel[2]),
                "). Kernel size can't be greater than actual input size");
  Tensor out = op::conv3d_forward.call(x, weight, bias, s, p, d, groups);
  return input.dim() == 4 ? squeeze(out, {0}) : out;
}

std::tuple<Tensor, Tensor, Tensor> conv3d_backward(const Tensor& grad_output, const Tensor& input,
                                                   const Tensor& weight, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation,
                                                   int64_t groups,
                                                   std::array<bool, 3> output_mask) {
  const auto s = triple(stride, "stride"), p = triple(padding, "padding");
  const auto d = triple(dilation, "dilation");
  EMBER_CHECK(grad_output.dim() == 5 && input.dim() == 5 && weight.dim() == 5,
              "conv3d_backward: expected 5-d grad_output, input and weight; got ",
              grad_output.sizes(), ", ", input.sizes(), " and ", weight.sizes());
  if (GradMode::is_enabled() &&
      (grad_output.requires_grad() || input.requires_grad() || weight.requires_grad()))
    return conv3d_backward_composite(grad_output, input, weight, s, p, d, groups, output_mask);
  return op::conv3d_backward.call(grad_output, input, weight, s, p, d, groups, output_mask);
}

}  // namespace ember
