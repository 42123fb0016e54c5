#include "ember/nn/modules/loss.h"

#include "ember/ops/ops.h"

namespace ember::nn {

namespace {
std::optional<Tensor> opt(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}
}  // namespace

CrossEntropyLossImpl::CrossEntropyLossImpl(const CrossEntropyLossOptions& options)
    : Module("CrossEntropyLoss"), options(options) {
  // The class weights are a buffer, so they follow the module's state_dict as in PyTorch.
  if (options.weight().defined()) weight = register_buffer("weight", options.weight());
}

Tensor CrossEntropyLossImpl::forward(const Tensor& input, const Tensor& target) {
  return cross_entropy(input, target, opt(weight), options.reduction(), options.ignore_index(),
                       options.label_smoothing());
}

NLLLossImpl::NLLLossImpl(const NLLLossOptions& options) : Module("NLLLoss"), options(options) {
  if (options.weight().defined()) weight = register_buffer("weight", options.weight());
}

Tensor NLLLossImpl::forward(const Tensor& input, const Tensor& target) {
  return nll_loss(input, target, opt(weight), options.reduction(), options.ignore_index());
}

Tensor MSELossImpl::forward(const Tensor& input, const Tensor& target) {
  return mse_loss(input, target, options.reduction());
}

}  // namespace ember::nn
