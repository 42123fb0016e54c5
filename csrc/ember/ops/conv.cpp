// Convolutions: argument checks, shape rules and derivatives. conv1d is conv2d over a height of 1;
// the forward and backward kernels are in cpu/conv.cpp; transposed convolutions are composites
// (GEMM + col2im), so they and the create_graph backward need no derivative of their own.
#include "ember/ops/conv.h"

#include <array>
#include <cstdint>
#include <limits>
#include <string_view>
#include <vector>

#include "ember/autograd/node.h"
#include "ember/core/profiler.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/autocast.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/conv.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// A parameter list of `n` values: one value broadcasts, as in PyTorch's expand_param_if_needed.
DimVector expand_param(IntArrayRef v, size_t n, const char* name, const char* op) {
  EMBER_CHECK(v.size() == 1 || v.size() == n, op, ": expected ", name,
              " to be a single integer value or a list of ", n,
              " values to match the convolution dimensions, but got ", name, "=", v);
  DimVector out;
  for (size_t i = 0; i < n; ++i) out.push_back(v.size() == 1 ? v[0] : v[i]);
  return out;
}

// An integer convolution, computed in int64 with two's-complement wraparound as PyTorch's integer
// kernel computes it (a float64 sum would round past 2^53 and saturate past 2^63): direct loops,
// x (N, C, H, W), w (O, C / groups, KH, KW), both int64 and contiguous; the result is int64.
Tensor conv2d_int64(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                    IntArrayRef st, IntArrayRef pad, IntArrayRef dil, int64_t groups) {
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t O = w.size(0), Cg = w.size(1), KH = w.size(2), KW = w.size(3), Og = O / groups;
  const int64_t OH = (H + 2 * pad[0] - dil[0] * (KH - 1) - 1) / st[0] + 1;
  const int64_t OW = (W + 2 * pad[1] - dil[1] * (KW - 1) - 1) / st[1] + 1;
  Tensor y = empty({N, O, OH, OW}, kLong, x.device());
  if (y.numel() == 0) return y;
  const int64_t* px = x.data_ptr<int64_t>();
  const int64_t* pw = w.data_ptr<int64_t>();
  const int64_t* pb = bias ? bias->data_ptr<int64_t>() : nullptr;
  int64_t* py = y.data_ptr<int64_t>();
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      const int64_t c0 = (o / Og) * Cg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          uint64_t acc = pb ? uint64_t(pb[o]) : 0;
          for (int64_t c = 0; c < Cg; ++c)
            for (int64_t kh = 0; kh < KH; ++kh) {
              const int64_t ih = oh * st[0] - pad[0] + kh * dil[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                const int64_t iw = ow * st[1] - pad[1] + kw * dil[1];
                if (iw < 0 || iw >= W) continue;
                acc += uint64_t(px[((n * C + c0 + c) * H + ih) * W + iw]) *
                       uint64_t(pw[((o * Cg + c) * KH + kh) * KW + kw]);
              }
            }
          py[((n * O + o) * OH + oh) * OW + ow] = int64_t(acc);
        }
    }
  return y;
}

// The kernels run in float32/float64: 16-bit floats widen to float32 (integers take
// conv2d_int64), and the result converts back.
template <class F>
Tensor in_wide_dtype(const Tensor& input, const char* kernel, F&& f) {
  ScalarType t = input.dtype();
  EMBER_CHECK_KIND(t != kBool, ErrorKind::NotImplemented, "\"", kernel, "\" not implemented for '",
                   scalar_type_name(t), "'");
  if (t == kFloat || t == kDouble) return f(t);
  if (is_floating_point(t)) return to_dtype(f(kFloat), t);
  return to_dtype(f(kDouble), t);
}

struct Conv2dArgs {
  DimVector stride, padding, dilation, output_padding;
  int64_t groups;
};

// Checks shared by the forward and transposed forms; input is batched 4-d, params expanded.
void check_conv(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                const Conv2dArgs& a, bool transposed, const char* op) {
  EMBER_CHECK(a.groups > 0, "non-positive groups is not supported");
  for (int64_t s : a.stride) EMBER_CHECK(s > 0, "non-positive stride is not supported");
  for (int64_t p : a.padding) EMBER_CHECK(p >= 0, "negative padding is not supported");
  for (int64_t d : a.dilation) EMBER_CHECK(d > 0, "dilation should be greater than zero");
  EMBER_CHECK(input.dtype() == weight.dtype(), op, ": expected input and weight to have the ",
              "same dtype; got input ", scalar_type_name(input.dtype()), " and weight ",
              scalar_type_name(weight.dtype()));
  EMBER_CHECK(!bias || bias->dtype() == input.dtype(), op,
              ": expected input and bias to have the same dtype; got input ",
              scalar_type_name(input.dtype()), " and bias ", scalar_type_name(bias->dtype()));
  // conv1d runs as conv2d over a height of 1: messages show the 1-d sizes the caller passed
  const bool one_d = std::string_view(op) == "conv1d";
  auto shown = [one_d](const Tensor& t) {
    std::vector<int64_t> s = t.sizes().vec();
    if (one_d) s.erase(s.begin() + 2);
    return s;
  };
  const int64_t out_ch = transposed ? weight.size(1) * a.groups : weight.size(0);
  const int64_t in_ch = transposed ? weight.size(0) : weight.size(1) * a.groups;
  EMBER_CHECK(weight.size(0) >= a.groups, "Given groups=", a.groups,
              ", expected weight to be at least ", a.groups,
              " at dimension 0, but got weight of size ", IntArrayRef(shown(weight)), " instead");
  if (!transposed)
    EMBER_CHECK(weight.size(0) % a.groups == 0, "Given groups=", a.groups,
                ", expected weight to be divisible by ", a.groups,
                " at dimension 0, but got weight of size ", IntArrayRef(shown(weight)), " instead");
  else
    EMBER_CHECK(weight.size(0) % a.groups == 0, "Given transposed=1, groups=", a.groups,
                ", expected weight to be divisible by ", a.groups,
                " at dimension 0, but got weight of size ", weight.sizes(), " instead");
  EMBER_CHECK(input.size(1) == in_ch, "Given ", transposed ? "transposed=1, " : "",
              "groups=", a.groups, ", weight of size ", IntArrayRef(shown(weight)),
              ", expected input", IntArrayRef(shown(input)), " to have ", in_ch,
              " channels, but got ", input.size(1), " channels instead");
  EMBER_CHECK(!bias || (bias->dim() == 1 && bias->size(0) == out_ch), "Given weight of size ",
              IntArrayRef(shown(weight)), ", expected bias to be 1-dimensional with ", out_ch,
              " elements, but got bias of size ", bias ? bias->sizes() : IntArrayRef{}, " instead");
  if (transposed) {
    for (size_t i = 0; i < 2; ++i)
      EMBER_CHECK(a.output_padding[i] >= 0, "conv_transpose: expected a non-negative ",
                  "output_padding; got ", a.output_padding);
    for (size_t i = 0; i < 2; ++i)
      EMBER_CHECK(a.output_padding[i] < a.stride[i] || a.output_padding[i] < a.dilation[i],
                  "output padding must be smaller than either stride or dilation, but got ",
                  "output_padding=", a.output_padding, " stride=", a.stride,
                  " dilation=", a.dilation);
    return;
  }
  // In 128 bits: a padding or dilation near INT64_MAX must not wrap into a valid-looking size.
  using I = __int128;
  const I ph = I(input.size(2)) + 2 * I(a.padding[0]);
  const I pw = I(input.size(3)) + 2 * I(a.padding[1]);
  const I kh = I(weight.size(2) - 1) * a.dilation[0] + 1;
  const I kw = I(weight.size(3) - 1) * a.dilation[1] + 1;
  constexpr I kMax = std::numeric_limits<int64_t>::max();
  EMBER_CHECK(ph <= kMax && pw <= kMax && kh <= kMax && kw <= kMax, "conv: expected padded ",
              "input and kernel sizes that fit in int64; got padding ", a.padding, ", dilation ",
              a.dilation);
  if (one_d)
    EMBER_CHECK(pw >= kw, "Calculated padded input size per channel: (", int64_t(pw),
                "). Kernel size: (", int64_t(kw),
                "). Kernel size can't be greater than actual input size");
  EMBER_CHECK(ph >= kh && pw >= kw, "Calculated padded input size per channel: (", int64_t(ph),
              " x ", int64_t(pw), "). Kernel size: (", int64_t(kh), " x ", int64_t(kw),
              "). Kernel size can't be greater than actual input size");
}

// The three gradients come from one backward (im2col + GEMM, Note [Conv panels]).
std::tuple<Tensor, Tensor, Tensor> conv2d_backward(const Tensor& grad, const Tensor& input,
                                                   const Tensor& weight, IntArrayRef stride,
                                                   IntArrayRef padding, IntArrayRef dilation,
                                                   int64_t groups, std::array<bool, 3> need) {
  if (!grad.defined()) return {};
  return convolution_backward(grad, input, weight, stride, padding, dilation, groups, need);
}
EMBER_DERIVATIVE_GROUPED(op::conv2d_forward, "ConvolutionBackward0",
                         (input, weight, bias, stride, padding, dilation, groups), (result),
                         (input, weight, bias),
                         conv2d_backward(grad, input, weight, stride, padding, dilation, groups,
                                         need));

// int64 transposed convolution onto the uncropped canvas (CH, CW): every input element times
// every tap of its group's weight, added where the tap lands; unsigned arithmetic wraps as
// torch's int64 kernel does.
Tensor conv_transpose_int64(const Tensor& x, const Tensor& w, int64_t G,
                            std::array<int64_t, 2> canvas, const Conv2dArgs& a) {
  const int64_t N = x.size(0), Cg = x.size(1) / G, Og = w.size(1), kh = w.size(2);
  const int64_t kw = w.size(3), H = x.size(2), W = x.size(3), CH = canvas[0], CW = canvas[1];
  Tensor out = zeros({N, G * Og, CH, CW}, TensorOptions(kLong));
  const auto* xp = reinterpret_cast<const uint64_t*>(x.data_ptr<int64_t>());
  const auto* wp = reinterpret_cast<const uint64_t*>(w.data_ptr<int64_t>());
  auto* op = reinterpret_cast<uint64_t*>(out.data_ptr<int64_t>());
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < G; ++g)
      for (int64_t c = 0; c < Cg; ++c)
        for (int64_t o = 0; o < Og; ++o) {
          const uint64_t* xc = xp + ((n * G + g) * Cg + c) * H * W;
          const uint64_t* wc = wp + ((g * Cg + c) * Og + o) * kh * kw;
          uint64_t* oc = op + ((n * G + g) * Og + o) * CH * CW;
          for (int64_t i = 0; i < H; ++i)
            for (int64_t j = 0; j < W; ++j)
              for (int64_t u = 0; u < kh; ++u)
                for (int64_t v = 0; v < kw; ++v)
                  oc[(i * a.stride[0] + u * a.dilation[0]) * CW + j * a.stride[1] +
                     v * a.dilation[1]] += xc[i * W + j] * wc[u * kw + v];
        }
  return out;
}

// Transposed convolution over batched 4-d input with expanded, checked params.
Tensor conv_transpose_batched(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                              const Conv2dArgs& a) {
  const int64_t N = x.size(0), G = a.groups, Cg = x.size(1) / G, Og = w.size(1);
  const int64_t kh = w.size(2), kw = w.size(3), H = x.size(2), W = x.size(3);
  // Every tap lands on the canvas (the output before padding is cropped); the output is its
  // window [p, canvas - p + output_padding), zero-extended where output_padding passes its end.
  // In 128 bits: strides and dilations near INT64_MAX must raise, not wrap.
  const __int128 ch = __int128(H - 1) * a.stride[0] + __int128(a.dilation[0]) * (kh - 1) + 1;
  const __int128 cw = __int128(W - 1) * a.stride[1] + __int128(a.dilation[1]) * (kw - 1) + 1;
  const __int128 oh = ch - 2 * __int128(a.padding[0]) + a.output_padding[0];
  const __int128 ow = cw - 2 * __int128(a.padding[1]) + a.output_padding[1];
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  EMBER_CHECK(ch <= kMax && cw <= kMax && oh <= kMax && ow <= kMax,
              "conv_transpose2d: expected an output size that fits in int64; got input size (", H,
              " x ", W, "), stride ", a.stride, ", dilation ", a.dilation, ", output_padding ",
              a.output_padding);
  const int64_t CH = int64_t(ch), CW = int64_t(cw);
  const int64_t OH = int64_t(std::max<__int128>(oh, -kMax));
  const int64_t OW = int64_t(std::max<__int128>(ow, -kMax));
  EMBER_CHECK(OH > 0 && OW > 0, "Given input size per channel: (", H, " x ", W,
              "). Calculated output size per channel: (", OH, " x ", OW,
              "). Output size is too small");
  // torch sizes its output before its kernel rejects the dtype; its kernel computes int64
  // (wrapping) but no other integer type
  EMBER_CHECK_KIND(is_floating_point(x.dtype()) || x.dtype() == kLong, ErrorKind::NotImplemented,
                   "\"slow_conv_transpose2d_out_cpu\" not implemented for '",
                   scalar_type_name(x.dtype()), "'");
  if (x.dtype() == kLong) {
    Tensor out = conv_transpose_int64(contiguous(x), contiguous(w), G, {CH, CW}, a);
    if (CH != OH || CW != OW || a.padding[0] || a.padding[1])
      out = pad(out, {-a.padding[1], a.output_padding[1] - a.padding[1], -a.padding[0],
                      a.output_padding[0] - a.padding[0]});
    if (bias) out = out + view(to_dtype(*bias, kLong), {1, -1, 1, 1});
    return out;
  }
  Tensor xg = reshape(x, {N, G, Cg, H * W});
  Tensor wg = reshape(w, {G, Cg, Og * kh * kw});
  Tensor cols = reshape(matmul(transpose(wg, 1, 2), xg), {N, G * Og * kh * kw, H * W});
  Tensor out = col2im(cols, {CH, CW}, {kh, kw}, a.dilation, {0, 0}, a.stride);
  if (CH != OH || CW != OW || a.padding[0] || a.padding[1])
    out = pad(out, {-a.padding[1], a.output_padding[1] - a.padding[1], -a.padding[0],
                    a.output_padding[0] - a.padding[0]});
  if (bias) out = out + view(*bias, {1, -1, 1, 1});
  return out;
}

// The gradients as compositions of differentiable ops, for create_graph backward.
std::tuple<Tensor, Tensor, Tensor> convolution_backward_composite(const Tensor& go, const Tensor& x,
                                                                  const Tensor& w,
                                                                  const Conv2dArgs& a,
                                                                  std::array<bool, 3> mask) {
  Tensor gi, gw, gb;
  const int64_t N = x.size(0), G = a.groups, O = w.size(0), L = go.size(2) * go.size(3);
  if (mask[0]) {
    Conv2dArgs t = a;
    for (size_t i = 0; i < 2; ++i) {
      int64_t base = (go.size(i + 2) - 1) * a.stride[i] - 2 * a.padding[i] +
                     a.dilation[i] * (w.size(i + 2) - 1) + 1;
      t.output_padding[i] = x.size(i + 2) - base;
    }
    gi = conv_transpose_batched(go, w, std::nullopt, t);
  }
  if (mask[1]) {
    Tensor cols = im2col(x, {w.size(2), w.size(3)}, a.dilation, a.padding, a.stride);
    Tensor gg = reshape(go, {N, G, O / G, L});
    Tensor cg = reshape(cols, {N, G, -1, L});
    gw = reshape(sum(matmul(gg, transpose(cg, 2, 3)), {0}), w.sizes());
  }
  if (mask[2]) gb = sum(go, {0, 2, 3});
  return {gi, gw, gb};
}

// conv1d and conv2d: rank checks, unbatched inputs, then the 2-d kernel.
Tensor conv_nd(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
               IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups,
               int64_t nd, const char* op) {
  if (autocast::is_active()) [[unlikely]]  // Note [Autocast]: the weight's cast is cached
    return autocast::run(
        autocast::CastPolicy::lower_precision_fp,
        [&](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
          return conv_nd(x, w, b, stride, padding, dilation, groups, nd, op);
        },
        input, weight, bias);
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, "Expected ", nd + 1,
              "D (unbatched) or ", nd + 2, "D (batched) input to ", op,
              ", but got input of size: ", input.sizes());
  EMBER_CHECK(weight.dim() == nd + 2, op, ": expected weight to be ", nd + 2,
              "-dimensional; got weight of size ", weight.sizes());
  const size_t n = size_t(nd);
  Conv2dArgs a{expand_param(stride, n, "stride", op),
               expand_param(padding, n, "padding", op),
               expand_param(dilation, n, "dilation", op),
               {},
               groups};
  Tensor x = input.dim() == nd + 1 ? unsqueeze(input, 0) : input, w = weight;
  if (nd == 1) {
    x = unsqueeze(x, 2);
    w = unsqueeze(w, 2);
    a.stride.insert(0, 1);
    a.padding.insert(0, 0);
    a.dilation.insert(0, 1);
  }
  a.output_padding = {0, 0};
  check_conv(x, w, bias, a, false, op);
  auto run = [&](ScalarType t) {
    std::optional<Tensor> b;
    if (bias) b = to_dtype(*bias, t);
    return op::conv2d_forward.call(to_dtype(x, t), to_dtype(w, t), b, a.stride, a.padding,
                                   a.dilation, groups);
  };
  Tensor out;
  if (is_integral(x.dtype(), false)) {  // exact, wrapping in int64 (int32 wraps on the way back)
    std::optional<Tensor> b;
    if (bias) b = contiguous(to_dtype(*bias, kLong));
    out = to_dtype(conv2d_int64(contiguous(to_dtype(x, kLong)), contiguous(to_dtype(w, kLong)), b,
                                a.stride, a.padding, a.dilation, groups),
                   x.dtype());
  } else {
    // bfloat16 stays bfloat16: the kernel has a bf16 path (Note [oneDNN bf16]).
    out = x.dtype() == kBFloat16 ? run(kBFloat16) : in_wide_dtype(x, "slow_conv2d_cpu", run);
  }
  if (nd == 1) out = squeeze(out, {2});
  return input.dim() == nd + 1 ? squeeze(out, {0}) : out;
}

// padding="same"/"valid": "same" pads (total / 2) on the left and the odd remainder on the right,
// like PyTorch, which needs an explicit pad when a total is odd.
Tensor conv_nd_mode(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
                    IntArrayRef stride, std::string_view padding, IntArrayRef dilation,
                    int64_t groups, int64_t nd, const char* op) {
  if (padding == "valid")
    return conv_nd(input, weight, bias, stride, {0}, dilation, groups, nd, op);
  EMBER_CHECK(padding == "same", "Invalid padding string: '", padding, "'");
  for (int64_t s : stride)
    EMBER_CHECK(s == 1, "padding='same' is not supported for strided convolutions");
  EMBER_CHECK(weight.dim() == nd + 2, op, ": expected weight to be ", nd + 2,
              "-dimensional; got weight of size ", weight.sizes());
  DimVector d = expand_param(dilation, size_t(nd), "dilation", op), left, extra;
  bool asymmetric = false;
  for (int64_t i = 0; i < nd; ++i) {
    int64_t total = d[size_t(i)] * (weight.size(i + 2) - 1);
    left.push_back(total / 2);
    extra.push_back(total % 2);
    asymmetric = asymmetric || total % 2;
  }
  Tensor x = input;
  if (asymmetric) {
    DimVector p;  // F.pad order: last dim first
    for (int64_t i = nd - 1; i >= 0; --i) {
      p.push_back(0);
      p.push_back(extra[size_t(i)]);
    }
    x = pad(input, p);
  }
  return conv_nd(x, weight, bias, stride, left, d, groups, nd, op);
}

Tensor conv_transpose_nd(const Tensor& input, const Tensor& weight,
                         const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                         IntArrayRef output_padding, int64_t groups, IntArrayRef dilation,
                         int64_t nd, const char* op) {
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, "Expected ", nd + 1,
              "D (unbatched) or ", nd + 2, "D (batched) input to ", op,
              ", but got input of size: ", input.sizes());
  EMBER_CHECK(weight.dim() == nd + 2, op, ": expected weight to be ", nd + 2,
              "-dimensional; got weight of size ", weight.sizes());
  const size_t n = size_t(nd);
  Conv2dArgs a{expand_param(stride, n, "stride", op), expand_param(padding, n, "padding", op),
               expand_param(dilation, n, "dilation", op),
               expand_param(output_padding, n, "output_padding", op), groups};
  Tensor x = input.dim() == nd + 1 ? unsqueeze(input, 0) : input, w = weight;
  if (nd == 1) {
    x = unsqueeze(x, 2);
    w = unsqueeze(w, 2);
    a.stride.insert(0, 1);
    a.padding.insert(0, 0);
    a.dilation.insert(0, 1);
    a.output_padding.insert(0, 0);
  }
  check_conv(x, w, bias, a, true, op);
  Tensor out = conv_transpose_batched(x, w, bias, a);
  if (nd == 1) out = squeeze(out, {2});
  return input.dim() == nd + 1 ? squeeze(out, {0}) : out;
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> convolution_backward(const Tensor& grad_output,
                                                        const Tensor& input, const Tensor& weight,
                                                        IntArrayRef stride, IntArrayRef padding,
                                                        IntArrayRef dilation, int64_t groups,
                                                        std::array<bool, 3> output_mask) {
  Conv2dArgs a{expand_param(stride, 2, "stride", "convolution_backward"),
               expand_param(padding, 2, "padding", "convolution_backward"),
               expand_param(dilation, 2, "dilation", "convolution_backward"),
               {0, 0},
               groups};
  if (GradMode::is_enabled() &&
      (grad_output.requires_grad() || input.requires_grad() || weight.requires_grad()))
    return convolution_backward_composite(grad_output, input, weight, a, output_mask);
  ScalarType t = input.dtype();
  if (t == kFloat || t == kDouble || t == kBFloat16)  // bf16: Note [oneDNN bf16]
    return op::convolution_backward.call(grad_output, input, weight, a.stride, a.padding,
                                         a.dilation, groups, output_mask);
  auto [gi, gw, gb] = op::convolution_backward.call(
      to_dtype(grad_output, kFloat), to_dtype(input, kFloat), to_dtype(weight, kFloat), a.stride,
      a.padding, a.dilation, groups, output_mask);
  auto back = [t](const Tensor& g) { return g.defined() ? to_dtype(g, t) : g; };
  return {back(gi), back(gw), back(gb)};
}

namespace {
// Records the input shapes of a composite op's own range, as the dispatcher records its ops'.
template <class... Args>
void profile_inputs(const profiler::Range& range, const Args&... args) {
  if (range.handle() >= 0 && profiler::records_shapes()) [[unlikely]]
    detail::profile_inputs(range.handle(), args...);
}
}  // namespace

Tensor conv1d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}
Tensor conv1d_padding_mode(const Tensor& input, const Tensor& weight,
                           const std::optional<Tensor>& bias, IntArrayRef stride,
                           std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd_mode(input, weight, bias, stride, padding, dilation, groups, 1, "conv1d");
}
Tensor conv2d(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias,
              IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  profiler::Range prof_range(profiler::RangeKind::Op, "conv2d");
  profile_inputs(prof_range, input, weight, bias, stride, padding, dilation, groups);
  return conv_nd(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}
Tensor conv2d_padding_mode(const Tensor& input, const Tensor& weight,
                           const std::optional<Tensor>& bias, IntArrayRef stride,
                           std::string_view padding, IntArrayRef dilation, int64_t groups) {
  return conv_nd_mode(input, weight, bias, stride, padding, dilation, groups, 2, "conv2d");
}
Tensor conv_transpose1d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           1, "conv_transpose1d");
}
Tensor conv_transpose2d(const Tensor& input, const Tensor& weight,
                        const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef output_padding, int64_t groups, IntArrayRef dilation) {
  return conv_transpose_nd(input, weight, bias, stride, padding, output_padding, groups, dilation,
                           2, "conv_transpose2d");
}

}  // namespace ember
