// The layers of a static int8 CNN in NHWC: convolution on oneDNN (Note [oneDNN int8] in
// cpu/onednn.cpp) through `_ember_qconv2d_onednn_pack` (the weight reordered once per input shape
// into the primitive's layout; empty when oneDNN does not run the convolution) and
// `_ember_qconv2d_onednn`, and max pooling of 8-bit integers (`_ember_qmax_pool2d`), which keeps
// the NHWC layout the convolutions read and write.
#include <algorithm>
#include <cstring>
#include <limits>

#include "ember/core/parallel.h"
#include "ember/cpu/onednn.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/quantized.h"

namespace ember::cpu {
namespace {

// The oneDNN convolution's description, which keys its primitive cache (onednn::qconv_plan): one
// builder, so the packing and the run look up the same primitive. w_scales: float32, contiguous,
// alive while the spec is used.
onednn::QConvSpec qconv_spec(IntArrayRef input_sizes, IntArrayRef weight_sizes, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                             const Tensor& w_scales, double in_scale, int64_t in_zp,
                             double out_scale, int64_t out_zp, bool relu) {
  onednn::QConvSpec spec;
  spec.input_sizes = input_sizes;
  spec.weight_sizes = weight_sizes;
  spec.stride = stride;
  spec.padding = padding;
  spec.dilation = dilation;
  spec.groups = groups;
  spec.in_scale = in_scale;
  spec.in_zp = in_zp;
  spec.out_scale = out_scale;
  spec.out_zp = out_zp;
  spec.relu = relu;
  spec.w_scales = static_cast<const float*>(w_scales.data_ptr());
  return spec;
}

Tensor qconv2d_onednn_pack_kernel(const Tensor& weight, IntArrayRef input_sizes, IntArrayRef stride,
                                  IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                                  const Tensor& w_scales_, double in_scale, int64_t in_zp,
                                  double out_scale, int64_t out_zp, bool relu) {
  EMBER_CHECK(weight.dtype() == kChar && weight.dim() == 4,
              "_ember_qconv2d_onednn_pack: expected a 4-d int8 weight; got ",
              dtype_name(weight.dtype()));
  Tensor w = weight.contiguous();
  Tensor w_scales = w_scales_.to(kFloat).contiguous();
  EMBER_CHECK(w_scales.numel() == w.size(0),
              "_ember_qconv2d_onednn_pack: expected one weight scale per output channel");
  const onednn::QConvSpec spec =
      qconv_spec(input_sizes, w.sizes(), stride, padding, dilation, groups, w_scales, in_scale,
                 in_zp, out_scale, out_zp, relu);
  Tensor packed = onednn::qconv_pack(w, spec);
  return packed.defined() ? packed : empty({0}, kChar);
}

Tensor qconv2d_onednn_kernel(const Tensor& input, double in_scale, int64_t in_zp,
                             const Tensor& packed, const Tensor& weight_, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                             const Tensor& w_scales_, const std::optional<Tensor>& bias_,
                             double out_scale, int64_t out_zp, bool relu) {
  EMBER_CHECK(input.dtype() == kByte && input.dim() == 4,
              "quantized::conv2d: expected a 4-d quint8 input; got ", dtype_name(input.dtype()));
  Tensor weight = weight_.contiguous();
  IntArrayRef wshape = weight.sizes();
  EMBER_CHECK(weight.dtype() == kChar && weight.dim() == 4,
              "quantized::conv2d: expected a 4-d int8 weight");
  const int64_t n = input.size(0), h = input.size(2), w = input.size(3), oc = wshape[0];
  const int64_t oh = (h + 2 * padding[0] - dilation[0] * (wshape[2] - 1) - 1) / stride[0] + 1;
  const int64_t ow = (w + 2 * padding[1] - dilation[1] * (wshape[3] - 1) - 1) / stride[1] + 1;
  EMBER_CHECK(oh > 0 && ow > 0, "quantized::conv2d: the kernel is larger than the padded input");
  // NHWC dense (what the previous convolution wrote; a one-channel NCHW input already is).
  Tensor x = input.permute({0, 2, 3, 1}).contiguous();
  Tensor w_scales = w_scales_.to(kFloat).contiguous();
  Tensor bias = bias_ ? bias_->to(kFloat).contiguous() : Tensor();
  Tensor out = empty_strided({n, oc, oh, ow}, {oh * ow * oc, 1, ow * oc, oc}, kByte);
  const onednn::QConvSpec spec =
      qconv_spec(input.sizes(), wshape, stride, padding, dilation, groups, w_scales, in_scale,
                 in_zp, out_scale, out_zp, relu);
  const float* b = bias.defined() ? static_cast<const float*>(bias.data_ptr()) : nullptr;
  EMBER_CHECK(onednn::qconv_run(x, packed, weight, out, b, spec),
              "quantized::conv2d: the packed weight was made for another input shape or "
              "quantization parameters");
  return out;
}

// Max pooling of uint8 / int8 values [N, C, H, W] as torch's max_pool2d (floor or ceil output
// size, padding that never wins, dilation); the result has channels-last strides. Each output
// position takes the maximum over its window's taps, a run of C bytes per tap.
// o[i] = max(o[i], s[i]) for i < c, 16 bytes at a time (GCC's vector extension: SSE2's pmaxub
// or, for int8, a compare and select; GCC at -O2 leaves the plain loop scalar).
template <class T>
void max_into(T* o, const T* s, int64_t c) {
  typedef T V __attribute__((vector_size(16)));
  int64_t i = 0;
  for (; i + 16 <= c; i += 16) {
    V a, b;
    std::memcpy(&a, o + i, 16);
    std::memcpy(&b, s + i, 16);
    a = a > b ? a : b;
    std::memcpy(o + i, &a, 16);
  }
  for (; i < c; ++i) o[i] = std::max(o[i], s[i]);
}

template <class T>
void max_pool_nhwc(const T* x, T* y, int64_t n, int64_t c, int64_t h, int64_t w, int64_t oh,
                   int64_t ow, IntArrayRef k, IntArrayRef st, IntArrayRef pad, IntArrayRef dil) {
  parallel_for(0, n * oh, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, ow * c * 4)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   const int64_t img = r / oh, oy = r % oh;
                   for (int64_t ox = 0; ox < ow; ++ox) {
                     T* o = y + (r * ow + ox) * c;
                     std::fill(o, o + c, std::numeric_limits<T>::lowest());
                     for (int64_t i = 0; i < k[0]; ++i) {
                       const int64_t iy = oy * st[0] - pad[0] + i * dil[0];
                       if (iy < 0 || iy >= h) continue;
                       for (int64_t j = 0; j < k[1]; ++j) {
                         const int64_t ix = ox * st[1] - pad[1] + j * dil[1];
                         if (ix < 0 || ix >= w) continue;
                         max_into(o, x + ((img * h + iy) * w + ix) * c, c);
                       }
                     }
                   }
                 }
               });
}

int64_t pooled_size(int64_t in, int64_t k, int64_t st, int64_t pad, int64_t dil, bool ceil_mode) {
  const int64_t span = in + 2 * pad - dil * (k - 1) - 1;
  if (span < 0) return 0;
  int64_t o = (ceil_mode ? (span + st - 1) / st : span / st) + 1;
  if (ceil_mode && (o - 1) * st >= in + pad) --o;  // the last window must start inside
  return o;
}

Tensor qmax_pool2d_kernel(const Tensor& self, IntArrayRef k, IntArrayRef st, IntArrayRef pad,
                          IntArrayRef dil, bool ceil_mode) {
  EMBER_CHECK((self.dtype() == kByte || self.dtype() == kChar) && self.dim() == 4,
              "quantized max_pool2d: expected 4-d 8-bit integers; got ", dtype_name(self.dtype()));
  const int64_t n = self.size(0), c = self.size(1), h = self.size(2), w = self.size(3);
  const int64_t oh = pooled_size(h, k[0], st[0], pad[0], dil[0], ceil_mode);
  const int64_t ow = pooled_size(w, k[1], st[1], pad[1], dil[1], ceil_mode);
  EMBER_CHECK(oh > 0 && ow > 0, "max_pool2d: the output size is too small");
  Tensor x = self.permute({0, 2, 3, 1}).contiguous();
  Tensor out = empty_strided({n, c, oh, ow}, {oh * ow * c, 1, ow * c, c}, self.dtype());
  if (self.dtype() == kByte)
    max_pool_nhwc(static_cast<const uint8_t*>(x.data_ptr()), static_cast<uint8_t*>(out.data_ptr()),
                  n, c, h, w, oh, ow, k, st, pad, dil);
  else
    max_pool_nhwc(static_cast<const int8_t*>(x.data_ptr()), static_cast<int8_t*>(out.data_ptr()), n,
                  c, h, w, oh, ow, k, st, pad, dil);
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_ember_qmax_pool2d, CPU, qmax_pool2d_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qconv2d_onednn_pack, CPU, qconv2d_onednn_pack_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qconv2d_onednn, CPU, qconv2d_onednn_kernel);

}  // namespace ember::cpu
