#pragma once
// ember::optim::SGD (libtorch's torch::optim::SGD).
#include "ember/optim/optimizer.h"

namespace ember::optim {

/// Options of SGD; `lr` has no default, as in libtorch.
struct SGDOptions : public OptimizerCloneableOptions<SGDOptions> {
  SGDOptions(double lr) : lr_(lr) {}
  EMBER_ARG(double, lr);
  EMBER_ARG(double, momentum) = 0;
  EMBER_ARG(double, dampening) = 0;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(bool, nesterov) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
};

/// Per-parameter SGD state: the momentum buffer (created on the first step with momentum).
struct SGDParamState : public OptimizerCloneableParamState<SGDParamState> {
  EMBER_ARG(Tensor, momentum_buffer);
};

/// Stochastic gradient descent with momentum, dampening, Nesterov and weight decay.
class SGD : public Optimizer {
 public:
  SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults);
  SGD(std::vector<Tensor> params, SGDOptions defaults)
      : SGD(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))}, defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace ember::optim
