#pragma once
// ember::optim::Adagrad (libtorch's torch::optim::Adagrad).
#include "ember/optim/optimizer.h"

namespace ember::optim {

/// Options of Adagrad.
struct AdagradOptions : public OptimizerCloneableOptions<AdagradOptions> {
  AdagradOptions(double lr = 1e-2) : lr_(lr) {}
  EMBER_ARG(double, lr);
  EMBER_ARG(double, lr_decay) = 0;
  EMBER_ARG(double, weight_decay) = 0;
  EMBER_ARG(double, initial_accumulator_value) = 0;
  EMBER_ARG(double, eps) = 1e-10;
  EMBER_ARG(bool, maximize) = false;

 public:
  double get_lr() const override { return lr_; }
  void set_lr(double lr) override { lr_ = lr; }
};

/// Per-parameter Adagrad state, created for every parameter at construction like torch.
struct AdagradParamState : public OptimizerCloneableParamState<AdagradParamState> {
  EMBER_ARG(Tensor, sum);
  EMBER_ARG(Tensor, step);
};

/// Adagrad (Duchi et al.) with learning-rate decay.
class Adagrad : public Optimizer {
 public:
  Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults = {});
  Adagrad(std::vector<Tensor> params, AdagradOptions defaults = {})
      : Adagrad(std::vector<OptimizerParamGroup>{OptimizerParamGroup(std::move(params))},
                defaults) {}
  Tensor step(LossClosure closure = nullptr) override;
};

}  // namespace ember::optim
