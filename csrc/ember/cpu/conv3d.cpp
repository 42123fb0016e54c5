// 3-d convolution in float32 and float64: oneDNN's 3-d primitives where they run, else one 2-d
// convolution over the depth taps. See Note [conv3d].
#include <algorithm>
#include <array>
#include <cstring>

#include "ember/core/parallel.h"
#include "ember/core/shape.h"
#include "ember/cpu/conv_routes.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/kernels.h"
#include "ember/cpu/layout.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/conv.h"

namespace ember::cpu {

namespace {

// Note [conv3d]
// Each pass of a float32 3-d convolution runs on oneDNN's 3-d primitive where use_onednn routes
// the 2-d one (Note [Conv on oneDNN]): the same chunks of samples, one oneDNN thread each, weight
// gradients summed over chunks in order, so results do not depend on the thread count. The rest
// (float64, batches of one, EMBER_ONEDNN_CONV=0, CPUs without AVX-512, shapes oneDNN has no
// direct kernel for) is one 2-d convolution: the output depths fold into the batch and the
// kernel's depth taps into the input channels,
//   x2[n * Do + d, c * kD + t] = x[n, c, d * stride - pad + t * dilation]   (zero outside x),
// so the weight (O, C/g, kD, kH, kW) is already the 2-d weight (O, C/g * kD, kH, kW), and the 2-d
// kernels (with their own oneDNN routing) do the work; the input gradient adds x2's gradient back
// to the depths it was copied from, in order. Before this op, conv3d was that fold written in
// Python ops, whose copies and autograd nodes kept it at 1.3-1.45x torch's time.
struct Depth {
  int64_t D, Do, k, stride, pad, dil;
  // The input depth that output depth d's tap t reads, or -1 in the padding.
  int64_t at(int64_t d, int64_t t) const {
    const int64_t i = d * stride - pad + t * dil;
    return i >= 0 && i < D ? i : -1;
  }
};

// x2 from x as the Note says; `plane` is H * W elements of `elem` bytes.
void fold_input(const char* x, int64_t N, int64_t C, int64_t plane, size_t elem, const Depth& z,
                char* x2) {
  const size_t bytes = size_t(plane) * elem;
  parallel_for(0, N * z.Do, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / z.Do, d = r % z.Do;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t t = 0; t < z.k; ++t) {
          char* dst = x2 + size_t((r * C + c) * z.k + t) * bytes;
          const int64_t i = z.at(d, t);
          if (i < 0) std::memset(dst, 0, bytes);  // all-zero bits are 0.0 in float and double
          else std::memcpy(dst, x + size_t((n * C + c) * z.D + i) * bytes, bytes);
        }
    }
  });
}

// dst (N, B, A, plane) = src (N, A, B, plane) with its A and B axes swapped, whole planes moved.
void swap_axes(const char* src, int64_t N, int64_t A, int64_t B, int64_t plane, size_t elem,
               char* dst) {
  const size_t bytes = size_t(plane) * elem;
  parallel_for(0, N * B, 1, [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / B, b = r % B;
      for (int64_t a = 0; a < A; ++a)
        std::memcpy(dst + size_t(r * A + a) * bytes, src + size_t((n * A + a) * B + b) * bytes,
                    bytes);
    }
  });
}

// gi (N, C, D, plane) = the adjoint of fold_input applied to gi2: each input depth sums the
// taps that read it, output depths then taps in order.
template <class T>
void unfold_input_grad(const T* gi2, int64_t N, int64_t C, int64_t plane, const Depth& z, T* gi) {
  parallel_for(0, N * C, 1, [&](int64_t p0, int64_t p1) {
    with_best_isa([&] {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / C, c = p % C;
        T* out = gi + p * z.D * plane;
        std::fill_n(out, z.D * plane, T(0));
        for (int64_t d = 0; d < z.Do; ++d)
          for (int64_t t = 0; t < z.k; ++t) {
            const int64_t i = z.at(d, t);
            if (i < 0) continue;
            const T* src = gi2 + (((n * z.Do + d) * C + c) * z.k + t) * plane;
            T* dst = out + i * plane;
            for (int64_t e = 0; e < plane; ++e) dst[e] += src[e];
          }
      }
    });
  });
}

const char* bytes_of(const Tensor& t) { return static_cast<const char*>(t.data_ptr()); }
char* mutable_bytes_of(const Tensor& t) { return static_cast<char*>(t.data_ptr()); }

// The 2-d weight (O, C/g * kD, kH, kW) over the same memory as the contiguous 3-d one.
Tensor weight_2d(const Tensor& w) {
  const DimVector sizes = {w.size(0), w.size(1) * w.size(2), w.size(3), w.size(4)};
  return w.as_strided_view(sizes, contiguous_strides(sizes), w.storage_offset());
}

Tensor conv3d_forward_kernel(const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  Tensor x = contiguous(input), w = contiguous(weight);
  std::optional<Tensor> b;
  if (bias) b = contiguous(*bias);
  DimVector sizes = {x.size(0), w.size(0)};
  for (int64_t d = 0; d < 3; ++d)
    sizes.push_back(
        (x.size(d + 2) + 2 * padding[d] - dilation[d] * (w.size(d + 2) - 1) - 1) / stride[d] + 1);
  Tensor y = empty(sizes, x.dtype(), x.device());
  if (y.numel() == 0) return y;
  using onednn::ConvPass;
  if (x.numel() > 0 && use_onednn(ConvPass::forward, x, w, stride, padding, dilation, groups) &&
      onednn_conv(ConvPass::forward, x, w, y, b, stride, padding, dilation, groups))
    return y;
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), Do = sizes[2];
  const Depth z{x.size(2), Do, w.size(2), stride[0], padding[0], dilation[0]};
  const size_t elem = x.element_size();
  Tensor x2 = empty({N * Do, C * z.k, x.size(3), x.size(4)}, x.dtype(), x.device());
  fold_input(bytes_of(x), N, C, x.size(3) * x.size(4), elem, z, mutable_bytes_of(x2));
  Tensor y2 = conv2d_forward_kernel(x2, weight_2d(w), b, stride.slice(1, 2), padding.slice(1, 2),
                                    dilation.slice(1, 2), groups);
  swap_axes(bytes_of(y2), N, Do, O, sizes[3] * sizes[4], elem, mutable_bytes_of(y));
  return y;
}

std::tuple<Tensor, Tensor, Tensor> conv3d_backward_kernel(const Tensor& grad_output,
                                                          const Tensor& input, const Tensor& weight,
                                                          IntArrayRef stride, IntArrayRef padding,
                                                          IntArrayRef dilation, int64_t groups,
                                                          std::array<bool, 3> mask) {
  Tensor go = contiguous(grad_output), x = contiguous(input), w = contiguous(weight);
  Tensor gi, gw, gb;
  if (mask[2]) gb = sum(go, IntArrayRef{0, 2, 3, 4});
  if (mask[0]) gi = empty(x.sizes(), x.dtype(), x.device());
  if (mask[1]) gw = empty(w.sizes(), w.dtype(), w.device());
  if (go.numel() == 0 || x.numel() == 0 || w.numel() == 0) {
    if (gi.defined()) fill_(gi, 0);
    if (gw.defined()) fill_(gw, 0);
    return {gi, gw, gb};
  }
  using onednn::ConvPass;
  bool need_gi = mask[0], need_gw = mask[1];
  if (need_gi && use_onednn(ConvPass::input_grad, x, w, stride, padding, dilation, groups) &&
      onednn_conv(ConvPass::input_grad, gi, w, go, std::nullopt, stride, padding, dilation, groups))
    need_gi = false;
  if (need_gw && use_onednn(ConvPass::weight_grad, x, w, stride, padding, dilation, groups) &&
      onednn_conv(ConvPass::weight_grad, x, gw, go, std::nullopt, stride, padding, dilation,
                  groups))
    need_gw = false;
  if (!need_gi && !need_gw) return {gi, gw, gb};
  const int64_t N = x.size(0), C = x.size(1), O = w.size(0), Do = go.size(2);
  const Depth z{x.size(2), Do, w.size(2), stride[0], padding[0], dilation[0]};
  const size_t elem = x.element_size();
  const int64_t plane = x.size(3) * x.size(4);
  Tensor go2 = empty({N * Do, O, go.size(3), go.size(4)}, go.dtype(), go.device());
  swap_axes(bytes_of(go), N, O, Do, go.size(3) * go.size(4), elem, mutable_bytes_of(go2));
  // The 2-d input gradient reads only x2's shape: the fold is made for the weight gradient.
  Tensor x2 = empty({N * Do, C * z.k, x.size(3), x.size(4)}, x.dtype(), x.device());
  if (need_gw) fold_input(bytes_of(x), N, C, plane, elem, z, mutable_bytes_of(x2));
  auto [gi2, gw2, unused] =
      convolution_backward_kernel(go2, x2, weight_2d(w), stride.slice(1, 2), padding.slice(1, 2),
                                  dilation.slice(1, 2), groups, {need_gi, need_gw, false});
  if (need_gw) std::memcpy(gw.data_ptr(), gw2.data_ptr(), size_t(gw.numel()) * elem);
  if (need_gi) {
    if (x.dtype() == kFloat)
      unfold_input_grad(gi2.data_ptr<float>(), N, C, plane, z, gi.data_ptr<float>());
    else unfold_input_grad(gi2.data_ptr<double>(), N, C, plane, z, gi.data_ptr<double>());
  }
  return {gi, gw, gb};
}

// The kernels above with the channels-last rule (Note [Channels-last kernels]): a
// channels_last_3d input or weight gives channels_last_3d results.
Tensor conv3d_forward_layout(const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const MemoryFormat f = spatial_format({&input, &weight});
  return in_format(conv3d_forward_kernel(input, weight, bias, stride, padding, dilation, groups),
                   f);
}

std::tuple<Tensor, Tensor, Tensor> conv3d_backward_layout(const Tensor& grad_output,
                                                          const Tensor& input, const Tensor& weight,
                                                          IntArrayRef stride, IntArrayRef padding,
                                                          IntArrayRef dilation, int64_t groups,
                                                          std::array<bool, 3> mask) {
  const MemoryFormat f = spatial_format({&input, &weight});
  auto [gi, gw, gb] =
      conv3d_backward_kernel(grad_output, input, weight, stride, padding, dilation, groups, mask);
  return {in_format(gi, f), in_format(gw, f), gb};
}

}  // namespace

EMBER_REGISTER_KERNEL(op::conv3d_forward, CPU, conv3d_forward_layout);
EMBER_REGISTER_KERNEL(op::conv3d_backward, CPU, conv3d_backward_layout);

}  // namespace ember::cpu
