#include "ember/nn/modules/conv.h"

#include <cmath>

#include "ember/nn/init.h"
#include "ember/ops/ops.h"

namespace ember::nn {

template <size_t D>
ConvNdImpl<D>::ConvNdImpl(const ConvOptions<D>& options)
    : Module(D == 1 ? "Conv1d" : "Conv2d"), options(options) {
  const auto& o = this->options;
  EMBER_CHECK_VALUE(o.groups() > 0, "groups must be a positive integer");
  EMBER_CHECK_VALUE(o.in_channels() % o.groups() == 0, "in_channels must be divisible by groups");
  EMBER_CHECK_VALUE(o.out_channels() % o.groups() == 0, "out_channels must be divisible by groups");
  const std::string& mode = o.padding_mode();
  EMBER_CHECK_VALUE(
      mode == "zeros" || mode == "reflect" || mode == "replicate" || mode == "circular",
      "padding_mode must be one of zeros, reflect, replicate, circular; got '", mode, "'");
  std::vector<int64_t> shape = {o.out_channels(), o.in_channels() / o.groups()};
  for (size_t i = 0; i < D; ++i) shape.push_back(o.kernel_size()[i]);
  weight = register_parameter("weight", ember::empty(shape));
  if (o.bias()) bias = register_parameter("bias", empty({o.out_channels()}));
  reset_parameters();
}

template <size_t D>
void ConvNdImpl<D>::reset_parameters() {
  init::kaiming_uniform_(weight, std::sqrt(5.0));
  if (bias.defined()) {
    auto [fan_in, fan_out] = init::calculate_fan_in_and_fan_out(weight);
    if (fan_in != 0)
      init::uniform_(bias, -1 / std::sqrt(double(fan_in)), 1 / std::sqrt(double(fan_in)));
  }
}

namespace {
template <size_t D, class Pad>
Tensor conv_call(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
                 const ConvOptions<D>& o, Pad padding) {
  if constexpr (D == 1) return conv1d(x, w, b, o.stride(), padding, o.dilation(), o.groups());
  else return conv2d(x, w, b, o.stride(), padding, o.dilation(), o.groups());
}
}  // namespace

template <size_t D>
Tensor ConvNdImpl<D>::forward(const Tensor& input) {
  std::optional<Tensor> b = bias.defined() ? std::optional<Tensor>(bias) : std::nullopt;
  const auto& pad_opt = options.padding();
  if (std::holds_alternative<enumtype::kValid>(pad_opt))
    return conv_call<D>(input, weight, b, options, std::string_view("valid"));
  if (std::holds_alternative<enumtype::kSame>(pad_opt))
    return conv_call<D>(input, weight, b, options, std::string_view("same"));
  const auto& p = std::get<ExpandingArray<D>>(pad_opt);
  if (options.padding_mode() == "zeros")
    return conv_call<D>(input, weight, b, options, IntArrayRef(p));
  // Non-zero padding modes pad explicitly (last dim first, as F.pad), then convolve unpadded.
  std::vector<int64_t> pads;
  for (size_t i = D; i-- > 0;) pads.insert(pads.end(), {p[i], p[i]});
  Tensor padded = pad(input, pads, options.padding_mode());
  return conv_call<D>(padded, weight, b, options, IntArrayRef(ExpandingArray<D>(0)));
}

template <size_t D>
void ConvNdImpl<D>::pretty_print(std::ostream& os) const {
  const auto& o = options;
  os << name() << "(" << o.in_channels() << ", " << o.out_channels()
     << ", kernel_size=" << IntArrayRef(o.kernel_size()) << ", stride=" << IntArrayRef(o.stride());
  if (auto* p = std::get_if<ExpandingArray<D>>(&o.padding())) os << ", padding=" << IntArrayRef(*p);
  else
    os << ", padding=" << (std::holds_alternative<enumtype::kSame>(o.padding()) ? "same" : "valid");
  if (o.groups() != 1) os << ", groups=" << o.groups();
  if (!o.bias()) os << ", bias=false";
  os << ")";
}

template class ConvNdImpl<1>;
template class ConvNdImpl<2>;

}  // namespace ember::nn
