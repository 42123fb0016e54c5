// Normalization: checks, dispatch and derivatives of batch_norm and layer_norm (fused kernels in
// cpu/normalization.cpp); group_norm and instance_norm are composites over them.
//
// Note [Normalization backward]
// The backward nodes call one fused kernel that returns the input, weight and bias gradients.
// When the backward itself is recorded (create_graph), the statistics are recomputed from the
// input with public ops and the same formulas are applied, so double backward sees how the mean
// and variance depend on the input.
#include "ember/ops/normalization.h"

#include "ember/autograd/node.h"
#include "ember/core/profiler.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/normalization.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

using Stats = std::tuple<Tensor, Tensor, Tensor>;
using OptT = const std::optional<Tensor>&;

Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }
bool recording(std::initializer_list<const Tensor*> ts) {
  if (!GradMode::is_enabled()) return false;
  for (const Tensor* t : ts)
    if (t->defined() && t->requires_grad()) return true;
  return false;
}

// A per-channel vector shaped to broadcast against an (N, C, *) input.
Tensor channel_view(const Tensor& v, int64_t ndim) {
  DimVector shape(size_t(ndim), 1);
  shape[1] = v.numel();
  return reshape(v, shape);
}

std::vector<int64_t> dims_except_1(int64_t ndim) {
  std::vector<int64_t> dims{0};
  for (int64_t d = 2; d < ndim; ++d) dims.push_back(d);
  return dims;
}

// Note [Normalization backward]: batch_norm's gradients in public ops.
variable_list batch_norm_composite(const Tensor& g, const Tensor& x, const Tensor& w,
                                   const Tensor& save_mean, const Tensor& save_invstd,
                                   bool training, double eps) {
  int64_t nd = x.dim();
  auto dims = dims_except_1(nd);
  Tensor mean = channel_view(save_mean, nd), invstd = channel_view(save_invstd, nd);
  if (training) {
    mean = ember::mean(x, dims, true);
    Tensor c = x - mean;
    invstd = rsqrt(ember::mean(c * c, dims, true) + eps);
  }
  Tensor xhat = (x - mean) * invstd;
  Tensor scale = w.defined() ? invstd * channel_view(w, nd) : invstd;
  Tensor gx =
      training ? scale * (g - ember::mean(g, dims, true) - xhat * ember::mean(g * xhat, dims, true))
               : g * scale;
  return {gx, sum(g * xhat, dims), sum(g, dims)};
}

// The fused backward kernel, or the composite when the backward is recorded (create_graph).
variable_list batch_norm_backward(const Tensor& g, const Tensor& x, OptT weight, const Tensor& mean,
                                  const Tensor& invstd, bool training, double eps) {
  Tensor w = opt(weight);
  if (recording({&g, &x, &w})) return batch_norm_composite(g, x, w, mean, invstd, training, eps);
  auto [gx, gw, gb] = op::native_batch_norm_backward.call(g, x, weight, mean, invstd, training);
  return {gx, gw, gb};
}

// Note [Normalization backward]: layer_norm's gradients in public ops.
variable_list layer_norm_composite(const Tensor& g, const Tensor& x, const Tensor& w, int64_t k,
                                   double eps) {
  std::vector<int64_t> dims, lead;
  for (int64_t d = x.dim() - k; d < x.dim(); ++d) dims.push_back(d);
  for (int64_t d = 0; d < x.dim() - k; ++d) lead.push_back(d);
  Tensor mean = ember::mean(x, dims, true);
  Tensor c = x - mean;
  Tensor rstd = rsqrt(ember::mean(c * c, dims, true) + eps);
  Tensor xhat = c * rstd;
  Tensor gw_in = w.defined() ? g * w : g;
  Tensor gx = rstd * (gw_in - ember::mean(gw_in, dims, true) -
                      xhat * ember::mean(gw_in * xhat, dims, true));
  Tensor gw = lead.empty() ? g * xhat : sum(g * xhat, lead);
  Tensor gb = lead.empty() ? g : sum(g, lead);
  return {gx, gw, gb};
}

variable_list layer_norm_backward(const Tensor& g, const Tensor& x, IntArrayRef shape, OptT weight,
                                  const Tensor& mean, const Tensor& rstd, double eps) {
  Tensor w = opt(weight);
  if (recording({&g, &x, &w})) return layer_norm_composite(g, x, w, int64_t(shape.size()), eps);
  auto [gx, gw, gb] = op::native_layer_norm_backward.call(g, x, shape, mean, rstd, weight);
  return {gx, gw, gb};
}

}  // namespace

EMBER_DERIVATIVE_GROUPED(op::native_batch_norm, "NativeBatchNormBackward0",
                         (input, weight, bias, running_mean, running_var, training, momentum, eps),
                         (result, save_mean, save_invstd), (input, weight, bias),
                         batch_norm_backward(grad, input, weight, save_mean, save_invstd, training,
                                             eps));
EMBER_DERIVATIVE_GROUPED(op::native_layer_norm, "NativeLayerNormBackward0",
                         (input, normalized_shape, weight, bias, eps), (result, save_mean, rstd),
                         (input, weight, bias),
                         layer_norm_backward(grad, input, normalized_shape, weight, save_mean, rstd,
                                             eps));

namespace {

void check_channel_param(OptT t, const char* what, int64_t c) {
  if (t) EMBER_CHECK(t->numel() == c, what, " should contain ", c, " elements not ", t->numel());
}

}  // namespace

Stats native_batch_norm(const Tensor& input, OptT weight, OptT bias, OptT running_mean,
                        OptT running_var, bool training, double momentum, double eps) {
  EMBER_CHECK(input.dim() >= 2, "batch_norm: expected input with at least 2 dims (N, C, ...); got ",
              input.dim(), "-D input of shape ", input.sizes());
  // NotImplementedError, as PyTorch's "... not implemented for 'Long'"
  EMBER_CHECK_KIND(is_floating_point(input.dtype()), ErrorKind::NotImplemented,
                   "batch_norm: expected a floating point input; got ",
                   scalar_type_name(input.dtype()));
  int64_t c = input.size(1);
  check_channel_param(weight, "weight", c);
  check_channel_param(bias, "bias", c);
  check_channel_param(running_mean, "running_mean", c);
  check_channel_param(running_var, "running_var", c);
  EMBER_CHECK(training || (running_mean && running_var),
              "batch_norm: running_mean and running_var must be defined in evaluation mode");
  return op::native_batch_norm.call(input, weight, bias, running_mean, running_var, training,
                                    momentum, eps);
}

Tensor batch_norm(const Tensor& input, OptT weight, OptT bias, OptT running_mean, OptT running_var,
                  bool training, double momentum, double eps) {
  profiler::OpRange prof_range("batch_norm", input, weight, bias, running_mean, running_var,
                               training, momentum, eps, true);
  // torch's rows (Note [Profiler rows]): the index-returning implementation, and the reserve
  // buffer it allocates before the kernel.
  profiler::OpRange impl("_batch_norm_impl_index", input, weight, bias, running_mean, running_var,
                         training, momentum, eps, true);
  if (profiler::enabled()) [[unlikely]]
    profiler::mark_op("empty", std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt,
                      std::nullopt);
  return std::get<0>(
      native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps));
}

Stats native_layer_norm(const Tensor& input, IntArrayRef normalized_shape, OptT weight, OptT bias,
                        double eps) {
  int64_t k = int64_t(normalized_shape.size());
  EMBER_CHECK(k >= 1, "layer_norm: expected normalized_shape to be at least 1-dimensional");
  bool ok = input.dim() >= k;
  for (int64_t i = 0; ok && i < k; ++i)
    ok = input.size(input.dim() - k + i) == normalized_shape[size_t(i)];
  if (!ok) {
    std::string dims;
    for (int64_t d : normalized_shape) dims += ", " + std::to_string(d);
    EMBER_CHECK(false, "Given normalized_shape=", normalized_shape,
                ", expected input with shape [*", dims, "], but got input of size", input.sizes());
  }
  if (weight)
    EMBER_CHECK(weight->sizes().equals(normalized_shape), "Expected weight to be of same shape as ",
                "normalized_shape, but got weight of shape ", weight->sizes(),
                " and normalized_shape = ", normalized_shape);
  if (bias)
    EMBER_CHECK(bias->sizes().equals(normalized_shape), "Expected bias to be of same shape as ",
                "normalized_shape, but got bias of shape ", bias->sizes(),
                " and normalized_shape = ", normalized_shape);
  // NotImplementedError, as PyTorch's "... not implemented for 'Long'"
  EMBER_CHECK_KIND(is_floating_point(input.dtype()), ErrorKind::NotImplemented,
                   "layer_norm: expected a floating point input; got ",
                   scalar_type_name(input.dtype()));
  return op::native_layer_norm.call(input, normalized_shape, weight, bias, eps);
}

Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape, OptT weight, OptT bias,
                  double eps) {
  profiler::Range prof_range(profiler::RangeKind::Op, "layer_norm");
  return std::get<0>(native_layer_norm(input, normalized_shape, weight, bias, eps));
}

Tensor group_norm(const Tensor& input, int64_t num_groups, OptT weight, OptT bias, double eps) {
  EMBER_CHECK(input.dim() >= 2, "Expected at least 2 dimensions for input tensor but received ",
              input.dim());
  int64_t n = input.size(0), c = input.size(1);
  EMBER_CHECK(num_groups > 0 && c % num_groups == 0,
              "Expected number of channels in input to be divisible by num_groups, but got input "
              "of shape ",
              input.sizes(), " and num_groups=", num_groups);
  check_channel_param(weight, "weight", c);
  check_channel_param(bias, "bias", c);
  int64_t group_size = input.numel() / std::max<int64_t>(1, n * num_groups);
  Tensor y = layer_norm(reshape(input, {n, num_groups, group_size}), {group_size}, std::nullopt,
                        std::nullopt, eps);
  y = reshape(y, input.sizes());
  if (weight) y = y * channel_view(*weight, input.dim());
  if (bias) y = y + channel_view(*bias, input.dim());
  // 16-bit input with float32 affine parameters (autocast's usual case): the input's dtype, as
  // torch's mixed-dtype kernel returns
  if ((input.dtype() == kBFloat16 || input.dtype() == kHalf) && y.dtype() != input.dtype())
    y = y.to(input.dtype());
  return y;
}

Tensor instance_norm(const Tensor& input, OptT weight, OptT bias, OptT running_mean,
                     OptT running_var, bool use_input_stats, double momentum, double eps) {
  EMBER_CHECK(input.dim() >= 2, "instance_norm: expected input with at least 2 dims; got ",
              input.dim(), "-D input");
  int64_t n = input.size(0), c = input.size(1);
  check_channel_param(weight, "weight", c);
  check_channel_param(bias, "bias", c);
  check_channel_param(running_mean, "running_mean", c);
  check_channel_param(running_var, "running_var", c);
  // One batch_norm over a (1, N*C, *) view: every (sample, channel) plane is its own channel.
  auto rep = [n](OptT t) -> std::optional<Tensor> {
    if (!t) return std::nullopt;
    return repeat(*t, {n});
  };
  std::optional<Tensor> rm = rep(running_mean), rv = rep(running_var);
  DimVector shape(input.sizes());
  shape[0] = 1;
  shape[1] = n * c;
  Tensor y = batch_norm(reshape(input, shape), rep(weight), rep(bias), rm, rv, use_input_stats,
                        momentum, eps);
  if (use_input_stats) {
    NoGradGuard no_grad;
    if (running_mean) {
      Tensor dst = *running_mean;
      copy_(dst, mean(reshape(*rm, {n, c}), {0}));
    }
    if (running_var) {
      Tensor dst = *running_var;
      copy_(dst, mean(reshape(*rv, {n, c}), {0}));
    }
  }
  return reshape(y, input.sizes());
}

}  // namespace ember
