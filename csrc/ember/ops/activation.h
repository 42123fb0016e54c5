#pragma once
// Activation functions (torch.nn.functional's pointwise non-linearities, prelu and glu).
// relu, sigmoid and tanh live with the other unary ops in unary.h.
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

/// x * Phi(x); approximate = "none" (erf) or "tanh".
Tensor gelu(const Tensor& self, std::string_view approximate = "none");
Tensor& gelu_(Tensor& self, std::string_view approximate = "none");
/// x * sigmoid(x).
Tensor silu(const Tensor& self);
Tensor& silu_(Tensor& self);
/// x * tanh(softplus(x)).
Tensor mish(const Tensor& self);
Tensor& mish_(Tensor& self);
/// max(0, x) + negative_slope * min(0, x).
Tensor leaky_relu(const Tensor& self, const Scalar& negative_slope = 0.01);
Tensor& leaky_relu_(Tensor& self, const Scalar& negative_slope = 0.01);
/// scale * (x > 0 ? x : alpha * (exp(x * input_scale) - 1)).
Tensor elu(const Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1,
           const Scalar& input_scale = 1);
Tensor& elu_(Tensor& self, const Scalar& alpha = 1, const Scalar& scale = 1,
             const Scalar& input_scale = 1);
/// elu with the self-normalizing constants.
Tensor selu(const Tensor& self);
Tensor& selu_(Tensor& self);
/// max(0, x) + min(0, alpha * (exp(x / alpha) - 1)).
Tensor celu(const Tensor& self, const Scalar& alpha = 1.0);
Tensor& celu_(Tensor& self, const Scalar& alpha = 1.0);
/// log(1 + exp(beta * x)) / beta, linear above `threshold`.
Tensor softplus(const Tensor& self, const Scalar& beta = 1, const Scalar& threshold = 20);
/// Clamps into [min_val, max_val].
Tensor hardtanh(const Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
Tensor& hardtanh_(Tensor& self, const Scalar& min_val = -1, const Scalar& max_val = 1);
/// min(max(0, x), 6).
Tensor relu6(const Tensor& self);
Tensor& relu6_(Tensor& self);
/// relu6(x + 3) / 6.
Tensor hardsigmoid(const Tensor& self);
Tensor& hardsigmoid_(Tensor& self);
/// x * relu6(x + 3) / 6.
Tensor hardswish(const Tensor& self);
Tensor& hardswish_(Tensor& self);
/// x / (1 + |x|).
Tensor softsign(const Tensor& self);
/// x > threshold ? x : value.
Tensor threshold(const Tensor& self, const Scalar& threshold, const Scalar& value);
Tensor& threshold_(Tensor& self, const Scalar& threshold, const Scalar& value);
/// max(0, x) + weight * min(0, x), weight broadcast over the channel dim 1.
Tensor prelu(const Tensor& self, const Tensor& weight);
/// log(sigmoid(x)), computed stably.
Tensor logsigmoid(const Tensor& self);
/// x - tanh(x).
Tensor tanhshrink(const Tensor& self);
/// x - lambd, x + lambd or 0.
Tensor softshrink(const Tensor& self, const Scalar& lambd = 0.5);
/// x where |x| > lambd, else 0.
Tensor hardshrink(const Tensor& self, const Scalar& lambd = 0.5);
/// a * sigmoid(b) for the halves a, b of `self` along `dim`.
Tensor glu(const Tensor& self, int64_t dim = -1);

// Fused backward kernels: the gradient of the activation of the same name given the output
// gradient and the input. Differentiable (composite formulas) when grad mode is on.
Tensor gelu_backward(const Tensor& grad, const Tensor& self, std::string_view approximate = "none");
Tensor silu_backward(const Tensor& grad, const Tensor& self);
Tensor leaky_relu_backward(const Tensor& grad, const Tensor& self, const Scalar& negative_slope);
Tensor elu_backward(const Tensor& grad, const Tensor& self, const Scalar& alpha,
                    const Scalar& scale, const Scalar& input_scale);
Tensor softplus_backward(const Tensor& grad, const Tensor& self, const Scalar& beta,
                         const Scalar& threshold);
Tensor hardtanh_backward(const Tensor& grad, const Tensor& self, const Scalar& min_val,
                         const Scalar& max_val);

}  // namespace ember
