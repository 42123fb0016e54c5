// Adam and AdamW over the fused kernel.
#include "ember/optim/adam.h"

#include "ember/ops/creation.h"
#include "ember/optim/fused.h"

namespace ember::optim {

namespace {

template <class Options>
void check_options(const Options& o) {
  EMBER_CHECK_VALUE(o.lr() >= 0, "Invalid learning rate: ", o.lr());
  EMBER_CHECK_VALUE(o.eps() >= 0, "Invalid epsilon value: ", o.eps());
  const auto [beta1, beta2] = o.betas();
  EMBER_CHECK_VALUE(beta1 >= 0 && beta1 < 1, "Invalid beta parameter at index 0: ", beta1);
  EMBER_CHECK_VALUE(beta2 >= 0 && beta2 < 1, "Invalid beta parameter at index 1: ", beta2);
  EMBER_CHECK_VALUE(o.weight_decay() >= 0, "Invalid weight_decay value: ", o.weight_decay());
}

// One Adam step over every group; Options is AdamOptions or AdamWOptions.
template <class Options>
void adam_groups(std::vector<OptimizerParamGroup>& groups,
                 std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state,
                 bool decoupled) {
  for (auto& group : groups) {
    const auto& o = static_cast<const Options&>(group.options());
    std::vector<Tensor> params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps;
    for (const Tensor& p : group.params()) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      auto& slot = state[p.impl()];
      if (!slot) {
        auto s = std::make_unique<AdamParamState>();
        s->step(zeros({}, kFloat));
        s->exp_avg(zeros(p.sizes(), p.dtype()));
        s->exp_avg_sq(zeros(p.sizes(), p.dtype()));
        if (o.amsgrad()) s->max_exp_avg_sq(zeros(p.sizes(), p.dtype()));
        slot = std::move(s);
      }
      auto& s = static_cast<AdamParamState&>(*slot);
      params.push_back(p);
      grads.push_back(g);
      steps.push_back(s.step());
      exp_avgs.push_back(s.exp_avg());
      exp_avg_sqs.push_back(s.exp_avg_sq());
      if (o.amsgrad()) max_sqs.push_back(s.max_exp_avg_sq());
    }
    if (params.empty()) continue;
    const auto [beta1, beta2] = o.betas();
    detail::adam_step(
        params, grads, exp_avgs, exp_avg_sqs, max_sqs, steps,
        {o.lr(), beta1, beta2, o.eps(), o.weight_decay(), o.amsgrad(), o.maximize(), decoupled});
  }
}

}  // namespace

Adam::Adam(std::vector<OptimizerParamGroup> param_groups, AdamOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamOptions>(defaults)) {
  check_options(defaults);
}

Tensor Adam::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  adam_groups<AdamOptions>(param_groups_, state_, false);
  return loss;
}

AdamW::AdamW(std::vector<OptimizerParamGroup> param_groups, AdamWOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<AdamWOptions>(defaults)) {
  check_options(defaults);
}

Tensor AdamW::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  adam_groups<AdamWOptions>(param_groups_, state_, true);
  return loss;
}

}  // namespace ember::optim
