#pragma once
// Normalization layers in functional form: batch, layer, group, instance and local response norm.
#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// Normalizes over every dim but 1 (training: batch statistics, updating the running ones in
/// place with `momentum` and the unbiased variance; eval: the running statistics).
Tensor batch_norm(const Tensor& input, const std::optional<Tensor>& weight,
                  const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                  const std::optional<Tensor>& running_var, bool training, double momentum,
                  double eps);
/// Normalizes over the trailing `normalized_shape` dims, then scales and shifts elementwise.
Tensor layer_norm(const Tensor& input, IntArrayRef normalized_shape,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
/// Normalizes over groups of channels (dim 1) and the spatial dims of each sample.
Tensor group_norm(const Tensor& input, int64_t num_groups,
                  const std::optional<Tensor>& weight = std::nullopt,
                  const std::optional<Tensor>& bias = std::nullopt, double eps = 1e-5);
/// Normalizes each (sample, channel) plane; with running stats, updates their batch average.
Tensor instance_norm(const Tensor& input, const std::optional<Tensor>& weight,
                     const std::optional<Tensor>& bias, const std::optional<Tensor>& running_mean,
                     const std::optional<Tensor>& running_var, bool use_input_stats,
                     double momentum, double eps);

/// (output, mean, inverse std) of batch_norm; the statistics are per channel.
std::tuple<Tensor, Tensor, Tensor> native_batch_norm(const Tensor& input,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias,
                                                     const std::optional<Tensor>& running_mean,
                                                     const std::optional<Tensor>& running_var,
                                                     bool training, double momentum, double eps);
/// (output, mean, inverse std) of layer_norm; the statistics have one value per row.
std::tuple<Tensor, Tensor, Tensor> native_layer_norm(const Tensor& input,
                                                     IntArrayRef normalized_shape,
                                                     const std::optional<Tensor>& weight,
                                                     const std::optional<Tensor>& bias, double eps);

}  // namespace ember
