// Optimizer base: param groups, defaults, zero_grad and the shared step helpers.
#include "ember/optim/optimizer.h"

#include <unordered_set>

#include "ember/autograd/grad_mode.h"
#include "ember/ops/copy.h"
#include "ember/ops/creation.h"

namespace ember::optim {

OptimizerParamGroup::OptimizerParamGroup(const OptimizerParamGroup& other)
    : params_(other.params_), options_(other.options_ ? other.options_->clone() : nullptr) {}

OptimizerParamGroup& OptimizerParamGroup::operator=(const OptimizerParamGroup& other) {
  params_ = other.params_;
  options_ = other.options_ ? other.options_->clone() : nullptr;
  return *this;
}

OptimizerOptions& OptimizerParamGroup::options() {
  EMBER_CHECK(options_ != nullptr, "optim: param group has no options");
  return *options_;
}

const OptimizerOptions& OptimizerParamGroup::options() const {
  EMBER_CHECK(options_ != nullptr, "optim: param group has no options");
  return *options_;
}

Optimizer::Optimizer(std::vector<OptimizerParamGroup> param_groups,
                     std::unique_ptr<OptimizerOptions> defaults)
    : defaults_(std::move(defaults)) {
  for (const auto& group : param_groups) add_param_group(group);
}

void Optimizer::add_param_group(const OptimizerParamGroup& param_group) {
  std::unordered_set<TensorImpl*> seen;
  for (const auto& group : param_groups_)
    for (const Tensor& p : group.params()) seen.insert(p.impl());
  for (const Tensor& p : param_group.params()) {
    EMBER_CHECK(p.defined(), "optim: expected defined parameters");
    EMBER_CHECK_VALUE(p.is_leaf(), "can't optimize a non-leaf Tensor");
    EMBER_CHECK_VALUE(seen.insert(p.impl()).second,
                      "some parameters appear in more than one parameter group");
  }
  OptimizerParamGroup group(param_group.params());
  group.set_options(param_group.has_options() ? param_group.options().clone() : defaults_->clone());
  param_groups_.push_back(std::move(group));
}

void Optimizer::zero_grad(bool set_to_none) {
  for (auto& group : param_groups_) {
    for (Tensor& p : group.params()) {
      Tensor g = p.grad();
      if (!g.defined()) continue;
      if (set_to_none) {
        p.set_grad(Tensor());
      } else {
        if (g.grad_fn()) g.detach_();
        NoGradGuard guard;
        zero_(g);
      }
    }
  }
}

size_t Optimizer::size() const noexcept {
  size_t n = 0;
  for (const auto& group : param_groups_) n += group.params().size();
  return n;
}

Tensor Optimizer::run_closure(const LossClosure& closure) {
  if (!closure) return Tensor();
  AutoGradMode enable(true);
  return closure();
}

void Optimizer::params_with_grad(const OptimizerParamGroup& group, std::vector<Tensor>& params,
                                 std::vector<Tensor>& grads) {
  for (const Tensor& p : group.params()) {
    Tensor g = p.grad();
    if (!g.defined()) continue;
    params.push_back(p);
    grads.push_back(g);
  }
}

}  // namespace ember::optim
