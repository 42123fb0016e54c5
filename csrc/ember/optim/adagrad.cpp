// Adagrad over the fused kernel.
#include "ember/optim/adagrad.h"

#include "ember/ops/creation.h"
#include "ember/optim/fused.h"

namespace ember::optim {

Adagrad::Adagrad(std::vector<OptimizerParamGroup> param_groups, AdagradOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdagradOptions>(defaults)) {
  EMBER_CHECK_VALUE(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  EMBER_CHECK_VALUE(defaults.lr_decay() >= 0, "Invalid lr_decay value: ", defaults.lr_decay());
  EMBER_CHECK_VALUE(defaults.weight_decay() >= 0,
                    "Invalid weight_decay value: ", defaults.weight_decay());
  EMBER_CHECK_VALUE(
      defaults.initial_accumulator_value() >= 0,
      "Invalid initial_accumulator_value value: ", defaults.initial_accumulator_value());
  EMBER_CHECK_VALUE(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    for (const Tensor& p : group.params()) {
      auto s = std::make_unique<AdagradParamState>();
      s->step(zeros({}, kFloat));
      s->sum(full(p.sizes(), o.initial_accumulator_value(), p.dtype()));
      state_[p.impl()] = std::move(s);
    }
  }
}

Tensor Adagrad::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const AdagradOptions&>(group.options());
    std::vector<Tensor> params, grads, sums, steps;
    params_with_grad(group, params, grads);
    if (params.empty()) continue;
    for (const Tensor& p : params) {
      // Groups added after construction get their state on first use.
      auto& s = state_for<AdagradParamState>(p, [&] {
        auto s = std::make_unique<AdagradParamState>();
        s->step(zeros({}, kFloat));
        s->sum(full(p.sizes(), o.initial_accumulator_value(), p.dtype()));
        return s;
      });
      sums.push_back(s.sum());
      steps.push_back(s.step());
    }
    detail::adagrad_step(params, grads, sums, steps,
                         {o.lr(), o.lr_decay(), o.weight_decay(), o.eps(), o.maximize()});
  }
  return loss;
}

}  // namespace ember::optim
