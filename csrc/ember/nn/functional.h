#pragma once
// ember::nn::functional (libtorch's torch::nn::functional, usually aliased `F`): functions that
// take a module's options struct, forwarding to the ops in ember/ops.
#include "ember/nn/modules/activation.h"
#include "ember/nn/modules/loss.h"
#include "ember/nn/modules/pooling.h"
#include "ember/ops/ops.h"

namespace ember {
inline constexpr Reduction kNone = Reduction::None;
inline constexpr Reduction kMean = Reduction::Mean;
inline constexpr Reduction kSum = Reduction::Sum;
}  // namespace ember

namespace ember::nn::functional {

using MaxPool2dFuncOptions = MaxPool2dOptions;
using AvgPool2dFuncOptions = AvgPool2dOptions;
using CrossEntropyFuncOptions = CrossEntropyLossOptions;
using NLLLossFuncOptions = NLLLossOptions;
using MSELossFuncOptions = MSELossOptions;

struct DropoutFuncOptions {
  EMBER_ARG(double, p) = 0.5;
  EMBER_ARG(bool, training) = true;
  EMBER_ARG(bool, inplace) = false;
};

struct SoftmaxFuncOptions {
  SoftmaxFuncOptions(int64_t dim) : dim_(dim) {}
  EMBER_ARG(int64_t, dim);
  EMBER_ARG(std::optional<ScalarType>, dtype) = std::nullopt;
};
using LogSoftmaxFuncOptions = SoftmaxFuncOptions;

inline Tensor relu(const Tensor& input) { return ember::relu(input); }

inline Tensor max_pool2d(const Tensor& input, const MaxPool2dFuncOptions& o) {
  return ember::max_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.dilation(),
                           o.ceil_mode());
}

inline Tensor avg_pool2d(const Tensor& input, const AvgPool2dFuncOptions& o) {
  return ember::avg_pool2d(input, o.kernel_size(), o.stride(), o.padding(), o.ceil_mode(),
                           o.count_include_pad(), o.divisor_override());
}

inline Tensor dropout(Tensor input, const DropoutFuncOptions& o = {}) {
  return o.inplace() ? ember::dropout_(input, o.p(), o.training())
                     : ember::dropout(input, o.p(), o.training());
}

inline Tensor softmax(const Tensor& input, const SoftmaxFuncOptions& o) {
  return ember::softmax(input, o.dim(), o.dtype());
}

inline Tensor log_softmax(const Tensor& input, const LogSoftmaxFuncOptions& o) {
  return ember::log_softmax(input, o.dim(), o.dtype());
}

inline std::optional<Tensor> optional_tensor(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}

inline Tensor cross_entropy(const Tensor& input, const Tensor& target,
                            const CrossEntropyFuncOptions& o = {}) {
  return ember::cross_entropy(input, target, optional_tensor(o.weight()), o.reduction(),
                              o.ignore_index(), o.label_smoothing());
}

inline Tensor nll_loss(const Tensor& input, const Tensor& target,
                       const NLLLossFuncOptions& o = {}) {
  return ember::nll_loss(input, target, optional_tensor(o.weight()), o.reduction(),
                         o.ignore_index());
}

inline Tensor mse_loss(const Tensor& input, const Tensor& target,
                       const MSELossFuncOptions& o = {}) {
  return ember::mse_loss(input, target, o.reduction());
}

}  // namespace ember::nn::functional
