#pragma once
// The softmax family: fused, numerically stable kernels with their own backward ops.
#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// exp(x - max) / sum(exp(x - max)) along `dim`; `dtype` casts the input first.
Tensor softmax(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// x - logsumexp(x) along `dim`; `dtype` casts the input first.
Tensor log_softmax(const Tensor& input, int64_t dim,
                   std::optional<ScalarType> dtype = std::nullopt);
/// softmax(-x) along `dim`.
Tensor softmin(const Tensor& input, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// Gradient of softmax given its output: output * (grad - sum(grad * output, dim)).
Tensor softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim);
/// Gradient of log_softmax given its output: grad - exp(output) * sum(grad, dim).
Tensor log_softmax_backward(const Tensor& grad, const Tensor& output, int64_t dim);

}  // namespace ember
