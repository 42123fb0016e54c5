#pragma once
// ember::optim::RMSprop (libtorch's torch::optim::RMSprop).
#include "ember/optim/optimizer.h"

namespace ember::optim {

/// Options of RMSprop.
struct RMSpropOptions : public OptimizerCloneableOptions<RMSpropOptions> {
  RMSpropOptions(double lr = 1e-2) : lr_(lr) {}
  EMBER_ARG(double, lr);
  EMBER_ARG(double, alpha) = 0.99;
  EMBER_ARG(double, eps) = 1e-8;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, momentum) = 0;
  EMBER_ARG(bool, centered) = false;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
};

/// Per-parameter RMSprop state; `step` is a 0-d float tensor.
struct RMSpropParamState : public OptimizerCloneableParamState<RMSpropParamState> {
  EMBER_ARG(Tensor, step);
  EMBER_ARG(Tensor, square_avg);
  EMBER_ARG(Tensor, momentum_buffer);
  EMBER_ARG(Tensor, grad_avg);
};

/// RMSprop, optionally centered and with momentum.
class RMSprop : public Optimizer {
 public:
  RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults = {});
  RMSprop(std::vector<Tensor> params, RMSpropOptions defaults = {})
      : RMSprop(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
                defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace ember::optim
