#pragma once
// Linear maps, dropout, one_hot and the distance functions of torch.nn.functional.
#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// input @ weight^T + bias over any leading dims of input.
Tensor linear(const Tensor& input, const Tensor& weight,
              const std::optional<Tensor>& bias = std::nullopt);
/// y_k = input1^T weight_k input2 + bias_k over any leading dims.
Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias = std::nullopt);

/// Zeroes elements with probability p and scales the rest by 1 / (1 - p) (identity in eval).
Tensor dropout(const Tensor& input, double p, bool train);
Tensor& dropout_(Tensor& input, double p, bool train);
/// dropout of whole channels: one draw per (sample, channel) of an (N, C, *) input.
Tensor feature_dropout(const Tensor& input, double p, bool train);
Tensor& feature_dropout_(Tensor& input, double p, bool train);
/// Dropout that keeps the self-normalizing mean and variance (for selu networks).
Tensor alpha_dropout(const Tensor& input, double p, bool train);
Tensor& alpha_dropout_(Tensor& input, double p, bool train);
/// alpha_dropout of whole channels.
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train);
Tensor& feature_alpha_dropout_(Tensor& input, double p, bool train);

/// An int64 tensor with one more dim of size num_classes (-1: max + 1), one at each index.
Tensor one_hot(const Tensor& self, int64_t num_classes = -1);
/// input / max(||input||_p along dim, eps).
Tensor normalize(const Tensor& input, double p = 2, int64_t dim = 1, double eps = 1e-12);
/// Cosine of the angle between x1 and x2 along dim (norms clamped below by eps).
Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim = 1, double eps = 1e-8);
/// ||x1 - x2 + eps||_p along the last dim.
Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p = 2, double eps = 1e-6,
                         bool keepdim = false);

}  // namespace ember
