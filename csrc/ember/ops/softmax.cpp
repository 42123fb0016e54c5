// softmax / log_softmax: checks, dtype rules, the Autograd kernels and the backward ops.
// Note [Softmax backward ops]: each backward is an op of its own (a fused CPU kernel); its
// Autograd kernel, reached only when the backward itself is differentiated (create_graph),
// evaluates the same formula in public ops so higher derivatives come for free.
#include "ember/ops/softmax.h"

#include "ember/core/profiler.h"
#include "ember/core/shape.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/softmax.h"

namespace ember {

EMBER_DERIVATIVE(op::_softmax, "SoftmaxBackward0", (self, dim),
                 softmax_backward(grad, result, dim));
EMBER_DERIVATIVE(op::_log_softmax, "LogSoftmaxBackward0", (self, dim),
                 log_softmax_backward(grad, result, dim));

namespace {
// See Note [Softmax backward ops].
Tensor softmax_backward_composite(const Tensor& grad, const Tensor& output, int64_t dim) {
  return output * (grad - sum(grad * output, {dim}, true));
}
Tensor log_softmax_backward_composite(const Tensor& grad, const Tensor& output, int64_t dim) {
  return grad - exp(output) * sum(grad, {dim}, true);
}
EMBER_REGISTER_KERNEL(op::_softmax_backward_data, Autograd, softmax_backward_composite);
EMBER_REGISTER_KERNEL(op::_log_softmax_backward_data, Autograd, log_softmax_backward_composite);

// Reduced-precision inputs compute in float32, as PyTorch's CPU kernels accumulate.
bool is_reduced(ScalarType t) { return t == kHalf || t == kBFloat16; }

template <bool Log>
Tensor softmax_impl(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor x = dtype && *dtype != input.dtype() ? to_dtype(input, *dtype) : input;
  dim = maybe_wrap_dim(dim, x.dim());
  if (is_reduced(x.dtype()))
    return to_dtype(softmax_impl<Log>(to_dtype(x, kFloat), dim, {}), x.dtype());
  if constexpr (Log) return op::_log_softmax.call(x, dim);
  else return op::_softmax.call(x, dim);
}

Tensor backward_impl(bool log, const Tensor& grad, const Tensor& output, int64_t dim) {
  dim = maybe_wrap_dim(dim, output.dim());
  EMBER_CHECK(grad.sizes().equals(output.sizes()), log ? "log_" : "",
              "softmax_backward: expected grad "
              "and output of one shape; got ",
              grad.sizes(), " and ", output.sizes());
  Tensor g = grad.dtype() == output.dtype() ? grad : to_dtype(grad, output.dtype());
  if (is_reduced(output.dtype()))
    return to_dtype(backward_impl(log, to_dtype(g, kFloat), to_dtype(output, kFloat), dim),
                    output.dtype());
  return log ? op::_log_softmax_backward_data.call(g, output, dim)
             : op::_softmax_backward_data.call(g, output, dim);
}

}  // namespace

Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  profiler::OpRange prof_range("softmax", input, dim, dtype);
  return softmax_impl<false>(input, dim, dtype);
}

Tensor log_softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  profiler::OpRange prof_range("log_softmax", input, dim, dtype);
  if (dtype && profiler::enabled()) [[unlikely]] {  // torch converts to the dtype first
    const std::nullopt_t none = std::nullopt;
    profiler::mark_op("to", input, dtype, none, none, none, false, false, none);
  }
  return softmax_impl<true>(input, dim, dtype);
}

Tensor softmin(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor x = dtype && *dtype != input.dtype() ? to_dtype(input, *dtype) : input;
  return softmax(-x, dim);
}

Tensor softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim) {
  return backward_impl(false, grad, output, dim);
}

Tensor log_softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim) {
  return backward_impl(true, grad, output, dim);
}

}  // namespace ember
