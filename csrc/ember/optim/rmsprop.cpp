// RMSprop over the fused kernel.
#include "ember/optim/rmsprop.h"

#include "ember/ops/creation.h"
#include "ember/optim/fused.h"

namespace ember::optim {

RMSprop::RMSprop(std::vector<OptimizerParamGroup> param_groups, RMSpropOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<RMSpropOptions>(defaults)) {
  EMBER_CHECK_VALUE(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  EMBER_CHECK_VALUE(defaults.eps() >= 0, "Invalid epsilon value: ", defaults.eps());
  EMBER_CHECK_VALUE(defaults.momentum() >= 0, "Invalid momentum value: ", defaults.momentum());
  EMBER_CHECK_VALUE(defaults.weight_decay() >= 0,
                    "Invalid weight_decay value: ", defaults.weight_decay());
  EMBER_CHECK_VALUE(defaults.alpha() >= 0, "Invalid alpha value: ", defaults.alpha());
}

Tensor RMSprop::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const RMSpropOptions&>(group.options());
    std::vector<Tensor> params, grads, square_avgs, grad_avgs, buffers, steps;
    params_with_grad(group, params, grads);
    if (params.empty()) continue;
    for (const Tensor& p : params) {
      auto& s = state_for<RMSpropParamState>(p, [&] {
        auto s = std::make_unique<RMSpropParamState>();
        s->step(zeros({}, kFloat));
        s->square_avg(zeros(p.sizes(), p.dtype()));
        if (o.momentum() > 0) s->momentum_buffer(zeros(p.sizes(), p.dtype()));
        if (o.centered()) s->grad_avg(zeros(p.sizes(), p.dtype()));
        return s;
      });
      steps.push_back(s.step());
      square_avgs.push_back(s.square_avg());
      if (o.momentum() > 0) buffers.push_back(s.momentum_buffer());
      if (o.centered()) grad_avgs.push_back(s.grad_avg());
    }
    detail::rmsprop_step(
        params, grads, square_avgs, grad_avgs, buffers, steps,
        {o.lr(), o.alpha(), o.eps(), o.weight_decay(), o.momentum(), o.centered(), o.maximize()});
  }
  return loss;
}

}  // namespace ember::optim
