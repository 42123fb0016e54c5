#include "ember/nn/modules/pooling.h"

#include "ember/ops/ops.h"

namespace ember::nn {

Tensor MaxPool2dImpl::forward(const Tensor& input) {
  const auto& o = options;
  return max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(), o.ceil_mode());
}

void MaxPool2dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  os << "MaxPool2d(kernel_size=" << IntArrayRef(o.kernel_size())
     << ", stride=" << IntArrayRef(o.stride()) << ", padding=" << IntArrayRef(o.padding())
     << ", dilation=" << IntArrayRef(o.dilation())
     << ", ceil_mode=" << (o.ceil_mode() ? "true" : "false") << ")";
}

Tensor AvgPool2dImpl::forward(const Tensor& input) {
  const auto& o = options;
  return avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                    o.count_include_pad(), o.divisor_override());
}

void AvgPool2dImpl::pretty_print(std::ostream& os) const {
  const auto& o = options;
  os << "AvgPool2d(kernel_size=" << IntArrayRef(o.kernel_size())
     << ", stride=" << IntArrayRef(o.stride()) << ", padding=" << IntArrayRef(o.padding()) << ")";
}

Tensor AdaptiveAvgPool2dImpl::forward(const Tensor& input) {
  return adaptive_avg_pool2d(input, options.output_size());
}

void AdaptiveAvgPool2dImpl::pretty_print(std::ostream& os) const {
  os << "AdaptiveAvgPool2d(output_size=" << IntArrayRef(options.output_size()) << ")";
}

}  // namespace ember::nn
