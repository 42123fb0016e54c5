#pragma once
// ember::nn::init: in-place initializers with PyTorch's formulas (torch::nn::init).
#include <string>
#include <tuple>

#include "ember/core/tensor.h"
#include "ember/nn/options.h"

namespace ember::nn::init {

/// The recommended gain for a nonlinearity ("relu", "leaky_relu", "tanh", ...).
double calculate_gain(const std::string& nonlinearity, double param = 0.01);
/// (fan_in, fan_out) of a weight of at least 2 dims.
std::tuple<int64_t, int64_t> calculate_fan_in_and_fan_out(const Tensor& tensor);

Tensor uniform_(Tensor tensor, double low = 0, double high = 1);
Tensor normal_(Tensor tensor, double mean = 0, double std = 1);
Tensor constant_(Tensor tensor, double value);
Tensor zeros_(Tensor tensor);
Tensor ones_(Tensor tensor);
Tensor xavier_uniform_(Tensor tensor, double gain = 1);
Tensor xavier_normal_(Tensor tensor, double gain = 1);
Tensor kaiming_uniform_(Tensor tensor, double a = 0, const std::string& mode = kFanIn,
                        const std::string& nonlinearity = kLeakyReLU);
Tensor kaiming_normal_(Tensor tensor, double a = 0, const std::string& mode = kFanIn,
                       const std::string& nonlinearity = kLeakyReLU);

}  // namespace ember::nn::init
