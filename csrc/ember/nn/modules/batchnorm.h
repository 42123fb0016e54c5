#pragma once
// BatchNorm1d and BatchNorm2d: batch statistics in training, running statistics in eval.
#include <optional>

#include "ember/nn/module.h"

namespace ember::nn {

struct BatchNormOptions {
  BatchNormOptions(int64_t num_features) : num_features_(num_features) {}
  EMBER_ARG(int64_t, num_features);
  EMBER_ARG(double, eps) = 1e-5;
  /// None means a cumulative moving average, as in PyTorch.
  EMBER_ARG(std::optional<double>, momentum) = 0.1;
  EMBER_ARG(bool, affine) = true;
  EMBER_ARG(bool, track_running_stats) = true;
};
using BatchNorm1dOptions = BatchNormOptions;
using BatchNorm2dOptions = BatchNormOptions;

/// Shared by BatchNorm1d (2-d or 3-d input) and BatchNorm2d (4-d input).
template <size_t D>
class BatchNormImpl : public Module {
 public:
  explicit BatchNormImpl(const BatchNormOptions& options);
  BatchNormImpl(int64_t num_features) : BatchNormImpl(BatchNormOptions(num_features)) {}
  void reset_running_stats();
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  BatchNormOptions options;
  Tensor weight, bias, running_mean, running_var, num_batches_tracked;
};

using BatchNorm1dImpl = BatchNormImpl<1>;
using BatchNorm2dImpl = BatchNormImpl<2>;
EMBER_MODULE(BatchNorm1d);
EMBER_MODULE(BatchNorm2d);

}  // namespace ember::nn
