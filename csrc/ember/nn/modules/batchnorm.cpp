#include "ember/nn/modules/batchnorm.h"

#include "ember/autograd/grad_mode.h"
#include "ember/nn/init.h"
#include "ember/ops/ops.h"

namespace ember::nn {

template <size_t D>
BatchNormImpl<D>::BatchNormImpl(const BatchNormOptions& options)
    : Module(D == 1 ? "BatchNorm1d" : "BatchNorm2d"), options(options) {
  int64_t c = options.num_features();
  if (options.affine()) {
    weight = register_parameter("weight", empty({c}));
    bias = register_parameter("bias", empty({c}));
  }
  if (options.track_running_stats()) {
    running_mean = register_buffer("running_mean", zeros({c}));
    running_var = register_buffer("running_var", ones({c}));
    num_batches_tracked = register_buffer("num_batches_tracked", zeros({}, kLong));
  }
  reset_parameters();
}

template <size_t D>
void BatchNormImpl<D>::reset_running_stats() {
  if (!options.track_running_stats()) return;
  NoGradGuard g;
  zero_(running_mean);
  fill_(running_var, 1);
  zero_(num_batches_tracked);
}

template <size_t D>
void BatchNormImpl<D>::reset_parameters() {
  reset_running_stats();
  if (!options.affine()) return;
  init::ones_(weight);
  init::zeros_(bias);
}

template <size_t D>
Tensor BatchNormImpl<D>::forward(const Tensor& input) {
  if constexpr (D == 1)
    EMBER_CHECK_VALUE(input.dim() == 2 || input.dim() == 3, "expected 2D or 3D input (got ",
                      input.dim(), "D input)");
  else EMBER_CHECK_VALUE(input.dim() == 4, "expected 4D input (got ", input.dim(), "D input)");
  double momentum = options.momentum().value_or(0.0);
  if (is_training() && options.track_running_stats()) {
    NoGradGuard g;
    add_(num_batches_tracked, ones({}, kLong));
    if (!options.momentum()) momentum = 1.0 / num_batches_tracked.item<double>();
  }
  bool use_batch_stats = is_training() || !options.track_running_stats();
  auto opt = [](const Tensor& t) { return t.defined() ? std::optional<Tensor>(t) : std::nullopt; };
  // Running statistics are updated only while training; in eval they are read.
  bool pass_stats = !is_training() || options.track_running_stats();
  return batch_norm(input, opt(weight), opt(bias), pass_stats ? opt(running_mean) : std::nullopt,
                    pass_stats ? opt(running_var) : std::nullopt, use_batch_stats, momentum,
                    options.eps());
}

template <size_t D>
void BatchNormImpl<D>::pretty_print(std::ostream& os) const {
  os << name() << "(" << options.num_features() << ", eps=" << options.eps() << ", momentum=";
  if (options.momentum()) os << *options.momentum();
  else os << "None";
  os << ", affine=" << (options.affine() ? "true" : "false")
     << ", track_running_stats=" << (options.track_running_stats() ? "true" : "false") << ")";
}

template class BatchNormImpl<1>;
template class BatchNormImpl<2>;

}  // namespace ember::nn
