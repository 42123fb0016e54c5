// Pooling: argument checks, output shapes and derivatives. Each pooling kernel has a backward
// kernel that is its adjoint, and each is registered as the other's derivative, so double
// backward works; max pooling's backward scatters through the saved indices (its adjoint is
// a gather). Kernels are in cpu/pool.cpp.
#include "ember/ops/pool.h"

#include "ember/core/memory_format.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/pool.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// The adjoint of max_pool2d_backward in its gradient: read the gradient at the saved indices.
Tensor picked_at(const Tensor& grad, const Tensor& idx) {
  const int64_t N = idx.size(0), C = idx.size(1);
  Tensor picked = gather(reshape(grad, {N, C, -1}), 2, reshape(idx, {N, C, -1}));
  return reshape(picked, idx.sizes());
}
}  // namespace

// The derivative of a max pool: gradients go back to the saved argmax positions.
EMBER_DERIVATIVE_OUTPUTS(op::max_pool2d_with_indices, "MaxPool2DWithIndicesBackward0",
                         (self, kernel_size, stride, padding, dilation, ceil_mode),
                         (result, indices),
                         op::max_pool2d_backward.call(grad, indices, self_sizes));
EMBER_DERIVATIVE_OUTPUTS(op::adaptive_max_pool2d, "AdaptiveMaxPool2DBackward0", (self, output_size),
                         (result, indices),
                         op::max_pool2d_backward.call(grad, indices, self_sizes));
EMBER_DERIVATIVE(op::max_pool2d_backward, "MaxPool2DWithIndicesBackwardBackward0",
                 (grad_output, indices, input_size), picked_at(grad, indices),
                 not_differentiable());
EMBER_DERIVATIVE(op::avg_pool2d, "AvgPool2DBackward0",
                 (self, kernel_size, stride, padding, ceil_mode, count_include_pad, divisor),
                 op::avg_pool2d_backward.call(grad, self_sizes, kernel_size, stride, padding,
                                              ceil_mode, count_include_pad, divisor));
EMBER_DERIVATIVE(op::avg_pool2d_backward, "AvgPool2DBackwardBackward0",
                 (grad_output, input_size, kernel_size, stride, padding, ceil_mode,
                  count_include_pad, divisor),
                 op::avg_pool2d.call(grad, kernel_size, stride, padding, ceil_mode,
                                     count_include_pad, divisor));
EMBER_DERIVATIVE(op::adaptive_avg_pool2d, "AdaptiveAvgPool2DBackward0", (self, output_size),
                 op::adaptive_avg_pool2d_backward.call(grad, self_sizes));
EMBER_DERIVATIVE(op::adaptive_avg_pool2d_backward, "AdaptiveAvgPool2DBackwardBackward0",
                 (grad_output, input_size),
                 op::adaptive_avg_pool2d.call(grad, grad_output_sizes.slice(2, 2)));

namespace {

DimVector pair(IntArrayRef v, const char* name, const char* op) {
  EMBER_CHECK(v.size() == 1 || v.size() == 2, op, ": ", name,
              " must either be a single int, or a tuple of two ints");
  return v.size() == 1 ? DimVector{v[0], v[0]} : DimVector(v);
}

// A pooling call in 2-d form: batched 4-d input and two-element params. 1-d pooling runs over a
// height of 1; `finish` undoes both reshapes.
struct Pool2d {
  Tensor x;
  DimVector k, s, p, d;
  bool unbatched, one_d;
  Tensor finish(const Tensor& t) const {
    Tensor r = one_d ? squeeze(t, {2}) : t;
    return unbatched ? squeeze(r, {0}) : r;
  }
};

Pool2d prepare(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, IntArrayRef d,
               bool one_d, const char* op) {
  const int64_t nd = one_d ? 1 : 2;
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, op, ": Expected ", nd + 1, "D or ",
              nd + 2, "D (batch mode) tensor for input; got input of size ", input.sizes());
  Pool2d r;
  r.unbatched = input.dim() == nd + 1;
  r.one_d = one_d;
  r.x = r.unbatched ? unsqueeze(input, 0) : input;
  if (one_d) {
    auto one = [&](IntArrayRef v, const char* name) {
      EMBER_CHECK(v.size() == 1, op, ": ", name, " must be a single int; got ", v);
      return v[0];
    };
    r.x = unsqueeze(r.x, 2);
    r.k = {1, one(k, "kernel_size")};
    r.s = {1, s.empty() ? r.k[1] : one(s, "stride")};
    r.p = {0, one(p, "padding")};
    r.d = {1, one(d, "dilation")};
  } else {
    r.k = pair(k, "kernel_size", op);
    r.s = s.empty() ? r.k : pair(s, "stride", op);
    r.p = pair(p, "padding", op);
    r.d = pair(d, "dilation", op);
  }
  EMBER_CHECK(r.k[0] > 0 && r.k[1] > 0,
              "kernel size should be greater than zero, but got kH: ", r.k[0], " kW: ", r.k[1]);
  EMBER_CHECK(r.s[0] > 0 && r.s[1] > 0, "stride should be greater than zero, but got dH: ", r.s[0],
              " dW: ", r.s[1]);
  EMBER_CHECK(r.d[0] > 0 && r.d[1] > 0,
              "dilation should be greater than zero, but got dilationH: ", r.d[0],
              " dilationW: ", r.d[1]);
  EMBER_CHECK(r.p[0] >= 0 && r.p[1] >= 0, "pad must be non-negative, but got pad: ", r.p);
  for (int64_t i = 1; i < 4; ++i)
    EMBER_CHECK(r.x.size(i) > 0, op,
                ": Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for ",
                "input, but got:", input.sizes());
  return r;
}

// In 128 bits: a kernel, stride or padding near INT64_MAX must not wrap into a bogus (huge,
// or positive) output size.
int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  using I = __int128;
  const I num = I(in) + 2 * I(p) - I(d) * (k - 1) - 1 + (ceil_mode ? I(s) - 1 : 0);
  I out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= I(in) + p) --out;
  EMBER_CHECK(out <= std::numeric_limits<int64_t>::max(),
              "pool: expected an output size that "
              "fits in int64; got input size ",
              in, ", kernel ", k, ", padding ", p);
  return int64_t(std::max<I>(out, std::numeric_limits<int64_t>::min()));
}

void check_output(const Pool2d& r, bool ceil_mode) {
  const int64_t oh = pooled(r.x.size(2), r.k[0], r.s[0], r.p[0], r.d[0], ceil_mode);
  const int64_t ow = pooled(r.x.size(3), r.k[1], r.s[1], r.p[1], r.d[1], ceil_mode);
  EMBER_CHECK(oh >= 1 && ow >= 1, "Given input size: (", r.x.size(1), "x", r.x.size(2), "x",
              r.x.size(3), "). Calculated output size: (", r.x.size(1), "x", oh, "x", ow,
              "). Output size is too small");
}

std::tuple<Tensor, Tensor> max_pool_nd(const Tensor& input, IntArrayRef k, IntArrayRef s,
                                       IntArrayRef p, IntArrayRef d, bool ceil_mode, bool one_d) {
  const char* op = one_d ? "max_pool1d" : "max_pool2d";
  Pool2d r = prepare(input, k, s, p, d, one_d, op);
  for (size_t i = 0; i < 2; ++i)
    EMBER_CHECK(r.p[i] <= ((__int128(r.k[i]) - 1) * r.d[i] + 1) / 2,  // 128 bits: no overflow
                "pad should be at most half of effective kernel size, but got pad=", r.p[i],
                ", kernel_size=", r.k[i], " and dilation=", r.d[i]);
  check_output(r, ceil_mode);
  // 16-bit floats pool in float32, where the kernel is vectorized (47 ms -> ~1 ms for the
  // Fashion-MNIST CNN's first pool in bf16); a max is exact in either dtype.
  const ScalarType t = r.x.dtype();
  const bool narrow = t == kBFloat16 || t == kHalf;
  auto [out, idx] = op::max_pool2d_with_indices.call(narrow ? r.x.to(kFloat) : r.x, r.k, r.s, r.p,
                                                     r.d, ceil_mode);
  if (narrow) out = out.to(t);
  return {r.finish(out), r.finish(idx)};
}

Tensor avg_pool_nd(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p, bool ceil_mode,
                   bool count_pad, std::optional<int64_t> div, bool one_d) {
  const char* op = one_d ? "avg_pool1d" : "avg_pool2d";
  Pool2d r = prepare(input, k, s, p, {1}, one_d, op);
  for (size_t i = 0; i < 2; ++i)
    EMBER_CHECK(r.p[i] <= r.k[i] / 2,
                "pad should be at most half of kernel size, but got pad=", r.p[i],
                " and kernel_size=", r.k[i]);
  EMBER_CHECK(!div || *div != 0, "divisor must be not zero");
  check_output(r, ceil_mode);
  return r.finish(op::avg_pool2d.call(r.x, r.k, r.s, r.p, ceil_mode, count_pad, div));
}

// Adaptive pools: checks and the 2-d form; returns the prepared call.
Pool2d prepare_adaptive(const Tensor& input, IntArrayRef output_size, bool one_d, const char* op,
                        DimVector& size) {
  const int64_t nd = one_d ? 1 : 2;
  EMBER_CHECK(input.dim() == nd + 1 || input.dim() == nd + 2, op, "(): Expected ", nd + 1, "D or ",
              nd + 2, "D tensor, but got ", input.sizes());
  EMBER_CHECK(int64_t(output_size.size()) == nd || (!one_d && output_size.size() == 1), op,
              "(): internal error: output_size.size() must be ", nd);
  for (int64_t i = input.dim() - nd; i < input.dim(); ++i)
    EMBER_CHECK(input.size(i) > 0, op, "(): Expected input to have non-zero size for non-batch ",
                "dimensions, but input has sizes ", input.sizes(), " with dimension ", i,
                " being empty");
  for (int64_t v : output_size)
    EMBER_CHECK(v >= 0, op, "(): Expected output_size to be non-negative; got ", output_size);
  Pool2d r;
  r.unbatched = input.dim() == nd + 1;
  r.one_d = one_d;
  r.x = r.unbatched ? unsqueeze(input, 0) : input;
  if (one_d) {
    r.x = unsqueeze(r.x, 2);
    size = {1, output_size[0]};
  } else {
    size = output_size.size() == 1 ? DimVector{output_size[0], output_size[0]}
                                   : DimVector(output_size);
  }
  return r;
}

}  // namespace

Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, true));
}
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, IntArrayRef dilation, bool ceil_mode) {
  return std::get<0>(max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, false));
}
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, true);
}
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride, IntArrayRef padding,
                                                   IntArrayRef dilation, bool ceil_mode) {
  return max_pool_nd(input, kernel_size, stride, padding, dilation, ceil_mode, false);
}
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad) {
  return avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     std::nullopt, true);
}
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride,
                  IntArrayRef padding, bool ceil_mode, bool count_include_pad,
                  std::optional<int64_t> divisor_override) {
  return avg_pool_nd(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, false);
}

namespace {
// An output of one element per plane is the mean over the plane, which torch computes (and
// names, MeanBackward1) as mean(-1, -2, keepdim) for floating inputs. A channels-last input keeps
// the kernel, whose output is channels-last too (torch restrides the mean's: AsStridedBackward1).
bool is_plane_mean(const Tensor& x, IntArrayRef size) {
  return size.size() == 2 && size[0] == 1 && size[1] == 1 && is_floating_point(x.dtype()) &&
         x.device().is_cpu() &&
         suggest_memory_format(x.sizes(), x.strides()) != MemoryFormat::ChannelsLast;
}
}  // namespace

Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size) {
  DimVector size;
  Pool2d r = prepare_adaptive(input, output_size, true, "adaptive_avg_pool1d", size);
  if (is_plane_mean(r.x, size)) return r.finish(mean(r.x, {-1, -2}, true));
  return r.finish(op::adaptive_avg_pool2d.call(r.x, size));
}
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size) {
  DimVector size;
  Pool2d r = prepare_adaptive(input, output_size, false, "adaptive_avg_pool2d", size);
  if (is_plane_mean(r.x, size)) return mean(input, {-1, -2}, true);
  return r.finish(op::adaptive_avg_pool2d.call(r.x, size));
}
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size) {
  DimVector size;
  Pool2d r = prepare_adaptive(input, output_size, true, "adaptive_max_pool1d", size);
  auto [out, idx] = op::adaptive_max_pool2d.call(r.x, size);
  return {r.finish(out), r.finish(idx)};
}
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size) {
  DimVector size;
  Pool2d r = prepare_adaptive(input, output_size, false, "adaptive_max_pool2d", size);
  auto [out, idx] = op::adaptive_max_pool2d.call(r.x, size);
  return {r.finish(out), r.finish(idx)};
}

}  // namespace ember
