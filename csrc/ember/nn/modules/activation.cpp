#include "ember/nn/modules/activation.h"

#include "ember/ops/ops.h"

namespace ember::nn {

Tensor ReLUImpl::forward(Tensor input) { return options.inplace() ? relu_(input) : relu(input); }

void ReLUImpl::pretty_print(std::ostream& os) const {
  os << "ReLU(" << (options.inplace() ? "inplace=true" : "") << ")";
}

DropoutImpl::DropoutImpl(const DropoutOptions& options) : Module("Dropout"), options(options) {
  EMBER_CHECK_VALUE(options.p() >= 0 && options.p() <= 1,
                    "dropout probability has to be between 0 and 1, but got ", options.p());
}

Tensor DropoutImpl::forward(Tensor input) {
  return options.inplace() ? dropout_(input, options.p(), is_training())
                           : dropout(input, options.p(), is_training());
}

void DropoutImpl::pretty_print(std::ostream& os) const {
  os << "Dropout(p=" << options.p() << ", inplace=" << (options.inplace() ? "true" : "false")
     << ")";
}

}  // namespace ember::nn
