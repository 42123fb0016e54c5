#pragma once
// Conv1d and Conv2d with torch::nn's options (padding as numbers, kValid or kSame).
#include <string>
#include <variant>

#include "ember/nn/module.h"
#include "ember/nn/options.h"

namespace ember::nn {

template <size_t D>
struct ConvOptions {
  using padding_t = std::variant<ExpandingArray<D>, enumtype::kValid, enumtype::kSame>;
  ConvOptions(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : in_channels_(in_channels), out_channels_(out_channels), kernel_size_(kernel_size) {}
  EMBER_ARG(int64_t, in_channels);
  EMBER_ARG(int64_t, out_channels);
  EMBER_ARG(ExpandingArray<D>, kernel_size);
  EMBER_ARG(ExpandingArray<D>, stride) = 1;
  EMBER_ARG(padding_t, padding) = ExpandingArray<D>(0);
  EMBER_ARG(ExpandingArray<D>, dilation) = 1;
  EMBER_ARG(int64_t, groups) = 1;
  EMBER_ARG(bool, bias) = true;
  /// "zeros", "reflect", "replicate" or "circular" (kZeros, ...).
  EMBER_ARG(std::string, padding_mode) = kZeros;
};
using Conv1dOptions = ConvOptions<1>;
using Conv2dOptions = ConvOptions<2>;

/// An N-d convolution layer, initialised like PyTorch (kaiming_uniform_ with a = sqrt(5)).
template <size_t D>
class ConvNdImpl : public Module {
 public:
  explicit ConvNdImpl(const ConvOptions<D>& options);
  ConvNdImpl(int64_t in_channels, int64_t out_channels, ExpandingArray<D> kernel_size)
      : ConvNdImpl(ConvOptions<D>(in_channels, out_channels, kernel_size)) {}
  void reset_parameters();
  Tensor forward(const Tensor& input);
  void pretty_print(std::ostream& os) const override;

  ConvOptions<D> options;
  Tensor weight, bias;
};

using Conv1dImpl = ConvNdImpl<1>;
using Conv2dImpl = ConvNdImpl<2>;
EMBER_MODULE(Conv1d);
EMBER_MODULE(Conv2d);

}  // namespace ember::nn
