// Initializers run under no_grad on the tensor's own storage, like torch.nn.init.
#include "ember/nn/init.h"

#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/ops.h"

namespace ember::nn::init {

double calculate_gain(const std::string& nonlinearity, double param) {
  if (nonlinearity == "linear" || nonlinearity == "sigmoid" || nonlinearity.rfind("conv", 0) == 0)
    return 1;
  if (nonlinearity == "tanh") return 5.0 / 3;
  if (nonlinearity == "relu") return std::sqrt(2.0);
  if (nonlinearity == "leaky_relu") return std::sqrt(2.0 / (1 + param * param));
  if (nonlinearity == "selu") return 3.0 / 4;
  EMBER_CHECK_VALUE(false, "Unsupported nonlinearity ", nonlinearity);
  return 0;
}

std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor) {
  EMBER_CHECK_VALUE(
      tensor.dim() >= 2,
      "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions");
  int64_t receptive = 1;
  for (int64_t d = 2; d < tensor.dim(); ++d) receptive *= tensor.size(d);
  return {tensor.size(1) * receptive, tensor.size(0) * receptive};
}

namespace {
Tensor leaf_data(const Tensor& t) { return t.detach(); }

double fan(const Tensor& t, const std::string& mode) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(t);
  EMBER_CHECK_VALUE(mode == "fan_in" || mode == "fan_out", "Mode ", mode,
                    " not supported, please use one of fan_in, fan_out");
  return double(mode == "fan_in" ? fan_in : fan_out);
}
}  // namespace

Tensor uniform_(Tensor tensor, double low, double high) {
  NoGradGuard g;
  Tensor d = leaf_data(tensor);
  ember::uniform_(d, low, high);
  return tensor;
}

Tensor normal_(Tensor tensor, double mean, double std) {
  NoGradGuard g;
  Tensor d = leaf_data(tensor);
  ember::normal_(d, mean, std);
  return tensor;
}

Tensor constant_(Tensor tensor, double value) {
  NoGradGuard g;
  Tensor d = leaf_data(tensor);
  fill_(d, value);
  return tensor;
}

Tensor zeros_(Tensor tensor) { return constant_(std::move(tensor), 0); }
Tensor ones_(Tensor tensor) { return constant_(std::move(tensor), 1); }

Tensor xavier_uniform_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  double a = gain * std::sqrt(6.0 / double(fan_in + fan_out));
  return uniform_(std::move(tensor), -a, a);
}

Tensor xavier_normal_(Tensor tensor, double gain) {
  auto [fan_in, fan_out] = calculate_fan_in_and_fan_out(tensor);
  return normal_(std::move(tensor), 0, gain * std::sqrt(2.0 / double(fan_in + fan_out)));
}

Tensor kaiming_uniform_(Tensor tensor, double a, const std::string& mode,
                        const std::string& nonlinearity) {
  double bound = calculate_gain(nonlinearity, a) * std::sqrt(3.0 / fan(tensor, mode));
  return uniform_(std::move(tensor), -bound, bound);
}

Tensor kaiming_normal_(Tensor tensor, double a, const std::string& mode,
                       const std::string& nonlinearity) {
  double std = calculate_gain(nonlinearity, a) / std::sqrt(fan(tensor, mode));
  return normal_(std::move(tensor), 0, std);
}

}  // namespace ember::nn::init
