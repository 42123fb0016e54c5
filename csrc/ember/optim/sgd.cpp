// SGD over the fused kernel.
#include "ember/optim/sgd.h"

#include "ember/optim/fused.h"

namespace ember::optim {

SGD::SGD(std::vector<OptimizerParamGroup> param_groups, SGDOptions defaults)
    : Optimizer(std::move(param_groups), std::make_unique<SGDOptions>(defaults)) {
  EMBER_CHECK_VALUE(defaults.lr() >= 0, "Invalid learning rate: ", defaults.lr());
  EMBER_CHECK_VALUE(defaults.momentum() >= 0, "Invalid momentum value: ", defaults.momentum());
  EMBER_CHECK_VALUE(defaults.weight_decay() >= 0,
                    "Invalid weight_decay value: ", defaults.weight_decay());
  EMBER_CHECK_VALUE(!defaults.nesterov() || (defaults.momentum() > 0 && defaults.dampening() == 0),
                    "Nesterov momentum requires a momentum and zero dampening");
}

Tensor SGD::step(LossClosure closure) {
  Tensor loss = run_closure(closure);
  for (auto& group : param_groups_) {
    const auto& o = static_cast<const SGDOptions&>(group.options());
    std::vector<Tensor> params, grads, buffers;
    params_with_grad(group, params, grads);
    if (params.empty()) continue;
    std::vector<SGDParamState*> states;
    if (o.momentum() != 0) {
      for (const Tensor& p : params) {
        states.push_back(
            &state_for<SGDParamState>(p, [] { return std::make_unique<SGDParamState>(); }));
        buffers.push_back(states.back()->momentum_buffer());
      }
    }
    detail::sgd_step(
        params, grads, buffers,
        {o.lr(), o.momentum(), o.dampening(), o.weight_decay(), o.nesterov(), o.maximize()});
    for (size_t i = 0; i < states.size(); ++i) states[i]->momentum_buffer(buffers[i]);
  }
  return loss;
}

}  // namespace ember::optim
