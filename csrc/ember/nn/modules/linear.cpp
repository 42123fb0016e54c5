#include "ember/nn/modules/linear.h"

#include <cmath>

#include "ember/nn/init.h"
#include "ember/ops/ops.h"

namespace ember::nn {

LinearImpl::LinearImpl(const LinearOptions& options) : Module("Linear"), options(options) {
  weight = register_parameter("weight", empty({options.out_features(), options.in_features()}));
  if (options.bias()) bias = register_parameter("bias", empty({options.out_features()}));
  reset_parameters();
}

void LinearImpl::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    double bound = options.in_features() > 0 ? 1 / std::sqrt(double(options.in_features())) : 0;
    init::uniform_(bias, -bound, bound);
  }
}

Tensor LinearImpl::forward(const Tensor& input) {
  return linear(input, weight, bias.defined() ? std::optional<Tensor>(bias) : std::nullopt);
}

void LinearImpl::pretty_print(std::ostream& os) const {
  os << "Linear(in_features=" << options.in_features()
     << ", out_features=" << options.out_features()
     << ", bias=" << (options.bias() ? "true" : "false") << ")";
}

Tensor FlattenImpl::forward(const Tensor& input) {
  return flatten(input, options.start_dim(), options.end_dim());
}

void FlattenImpl::pretty_print(std::ostream& os) const {
  os << "Flatten(start_dim=" << options.start_dim() << ", end_dim=" << options.end_dim() << ")";
}

}  // namespace ember::nn
