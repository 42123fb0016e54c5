#pragma once
// ember::optim::Optimizer: param groups with per-group options and per-parameter state, in the
// shape of libtorch's torch::optim::Optimizer, so C++ users port by renaming the namespace.
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "ember/core/arg.h"
#include "ember/core/tensor.h"

namespace ember::optim {

/// Base of every optimizer's options; the learning rate is the one option all of them share.
class OptimizerOptions {
 public:
  virtual ~OptimizerOptions() = default;
  /// A copy of the options with their dynamic type.
  virtual std::unique_ptr<OptimizerOptions> clone() const = 0;
  virtual double get_lr() const = 0;
  virtual void set_lr(double lr) = 0;
};

/// Implements clone() for options type Derived.
template <class Derived>
class OptimizerCloneableOptions : public OptimizerOptions {
 public:
  std::unique_ptr<OptimizerOptions> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

/// Base of the per-parameter state (momentum buffers, moment estimates, ...).
class OptimizerParamState {
 public:
  virtual ~OptimizerParamState() = default;
  virtual std::unique_ptr<OptimizerParamState> clone() const = 0;
};

/// Implements clone() for state type Derived.
template <class Derived>
class OptimizerCloneableParamState : public OptimizerParamState {
 public:
  std::unique_ptr<OptimizerParamState> clone() const override {
    return std::make_unique<Derived>(static_cast<const Derived&>(*this));
  }
};

/// Parameters optimized with one set of options; without options the optimizer's defaults apply.
class OptimizerParamGroup {
 public:
  OptimizerParamGroup(std::vector<Tensor> params) : params_(std::move(params)) {}
  OptimizerParamGroup(std::vector<Tensor> params, std::unique_ptr<OptimizerOptions> options)
      : params_(std::move(params)), options_(std::move(options)) {}
  OptimizerParamGroup(const OptimizerParamGroup& other);
  OptimizerParamGroup& operator=(const OptimizerParamGroup& other);
  OptimizerParamGroup(OptimizerParamGroup&&) = default;
  OptimizerParamGroup& operator=(OptimizerParamGroup&&) = default;

  bool has_options() const { return options_ != nullptr; }
  /// The group's options; raises if it has none.
  OptimizerOptions& options();
  const OptimizerOptions& options() const;
  void set_options(std::unique_ptr<OptimizerOptions> options) { options_ = std::move(options); }
  std::vector<Tensor>& params() { return params_; }
  const std::vector<Tensor>& params() const { return params_; }

 private:
  std::vector<Tensor> params_;
  std::unique_ptr<OptimizerOptions> options_;
};

/// Base class of the optimizers: groups, defaults and state keyed by the parameter's TensorImpl.
class Optimizer {
 public:
  using LossClosure = std::function<Tensor()>;

  Optimizer(std::vector<OptimizerParamGroup> param_groups,
            std::unique_ptr<OptimizerOptions> defaults);
  virtual ~Optimizer() = default;
  Optimizer(const Optimizer&) = delete;
  Optimizer& operator=(const Optimizer&) = delete;

  /// Updates the parameters once; `closure` (run with grad enabled) returns the recomputed loss.
  virtual Tensor step(LossClosure closure = nullptr) = 0;
  /// Adds a group (without options it takes the defaults); a param may be in one group only.
  void add_param_group(const OptimizerParamGroup& param_group);
  /// Resets the gradients of all parameters (to undefined by default, like torch).
  void zero_grad(bool set_to_none = true);

  std::vector<OptimizerParamGroup>& param_groups() noexcept { return param_groups_; }
  const std::vector<OptimizerParamGroup>& param_groups() const noexcept { return param_groups_; }
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>>& state() noexcept {
    return state_;
  }
  OptimizerOptions& defaults() noexcept { return *defaults_; }
  const OptimizerOptions& defaults() const noexcept { return *defaults_; }
  /// Number of parameters over all groups.
  size_t size() const noexcept;

 protected:
  /// Runs the closure with grad enabled (an undefined tensor when there is none).
  static Tensor run_closure(const LossClosure& closure);
  /// The state of `param` as State, created by `make` on first use.
  template <class State, class Make>
  State& state_for(const Tensor& param, Make make) {
    auto& slot = state_[param.impl()];
    if (!slot) slot = make();
    return static_cast<State&>(*slot);
  }
  /// The parameters of `group` that have a gradient, and those gradients.
  static void params_with_grad(const OptimizerParamGroup& group, std::vector<Tensor>& params,
                               std::vector<Tensor>& grads);

  std::vector<OptimizerParamGroup> param_groups_;
  std::unordered_map<void*, std::unique_ptr<OptimizerParamState>> state_;
  std::unique_ptr<OptimizerOptions> defaults_;
};

}  // namespace ember::optim
