// ember::optim: SGD and Adam on a quadratic (convergence and one step against hand computation),
// param groups, zero_grad and state, through the same fused kernels as ember.optim.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "ember/ember.h"

using namespace ember;

namespace {

// A leaf tensor with the given values, requiring grad.
Tensor param(const std::vector<double>& v, ScalarType dtype = kDouble) {
  Tensor t = empty({int64_t(v.size())}, dtype);
  for (size_t i = 0; i < v.size(); ++i) {
    if (dtype == kDouble) t.data_ptr<double>()[i] = v[i];
    else t.data_ptr<float>()[i] = float(v[i]);
  }
  t.requires_grad_(true);
  return t;
}

double at(const Tensor& t, int64_t i) {
  return t.dtype() == kDouble ? t.data_ptr<double>()[i] : t.data_ptr<float>()[i];
}

// loss = sum((p - target)^2) with target = [1, -2, 3]; its minimum is at the target.
Tensor quadratic_loss(const Tensor& p) {
  Tensor target = param({1.0, -2.0, 3.0}, p.dtype()).detach();
  Tensor d = p - target;
  return sum(d * d);
}

template <class Opt>
double train(Opt& opt, const Tensor& p, int steps) {
  for (int i = 0; i < steps; ++i) {
    opt.zero_grad();
    quadratic_loss(p).backward();
    opt.step();
  }
  double err = 0;
  const double target[] = {1.0, -2.0, 3.0};
  for (int64_t i = 0; i < 3; ++i) err = std::max(err, std::abs(at(p, i) - target[i]));
  return err;
}

}  // namespace

TEST(OptimSGD, ConvergesOnQuadratic) {
  Tensor p = param({0.0, 0.0, 0.0}, kFloat);
  optim::SGD opt({p}, optim::SGDOptions(0.05).momentum(0.9).nesterov(true));
  EXPECT_LT(train(opt, p, 200), 1e-4);
}

TEST(OptimSGD, OneStepMatchesHandComputation) {
  Tensor p = param({1.0, 2.0});
  optim::SGD opt({p}, optim::SGDOptions(0.1).momentum(0.9).weight_decay(0.5));
  const double g[] = {0.5, -1.0};
  double x[] = {1.0, 2.0}, buf[2];
  for (int step = 0; step < 2; ++step) {
    p.set_grad(param({g[0], g[1]}).detach());
    opt.step();
    for (int i = 0; i < 2; ++i) {
      double d = g[i] + 0.5 * x[i];
      buf[i] = step == 0 ? d : 0.9 * buf[i] + d;
      x[i] -= 0.1 * buf[i];
    }
  }
  for (int i = 0; i < 2; ++i) EXPECT_NEAR(at(p, i), x[i], 1e-14);
  auto& state = static_cast<optim::SGDParamState&>(*opt.state().at(p.impl()));
  EXPECT_NEAR(at(state.momentum_buffer(), 1), buf[1], 1e-14);
}

TEST(OptimAdam, ConvergesOnQuadratic) {
  Tensor p = param({0.0, 0.0, 0.0});
  optim::Adam opt({p}, optim::AdamOptions(0.1).betas({0.9, 0.99}).amsgrad(true));
  EXPECT_LT(train(opt, p, 500), 1e-3);
}

TEST(OptimAdam, OneStepMatchesHandComputation) {
  Tensor p = param({1.0, -2.0});
  optim::Adam opt({p}, optim::AdamOptions(0.01).betas({0.8, 0.9}).weight_decay(0.1));
  p.set_grad(param({0.3, -0.7}).detach());
  opt.step();
  const double x0[] = {1.0, -2.0}, g0[] = {0.3, -0.7};
  for (int i = 0; i < 2; ++i) {
    double g = g0[i] + 0.1 * x0[i];
    double m = 0.2 * g, v = 0.1 * g * g;
    double denom = std::sqrt(v) / std::sqrt(1 - 0.9) + 1e-8;
    EXPECT_NEAR(at(p, i), x0[i] - 0.01 / (1 - 0.8) * m / denom, 1e-12);
  }
  auto& state = static_cast<optim::AdamParamState&>(*opt.state().at(p.impl()));
  EXPECT_EQ(state.step().item<double>(), 1.0);
}

TEST(OptimAdamW, DecouplesWeightDecay) {
  Tensor p = param({2.0});
  optim::AdamW opt({p}, optim::AdamWOptions(0.1));
  EXPECT_EQ(static_cast<optim::AdamWOptions&>(opt.defaults()).weight_decay(), 1e-2);
  p.set_grad(param({0.0}).detach());
  opt.step();
  // A zero gradient leaves only the decay p *= 1 - lr * wd.
  EXPECT_NEAR(at(p, 0), 2.0 * (1 - 0.1 * 1e-2), 1e-12);
}

TEST(OptimRMSpropAdagrad, Converge) {
  Tensor p = param({0.0, 0.0, 0.0});
  optim::RMSprop rms({p}, optim::RMSpropOptions(0.01).centered(true).momentum(0.5));
  EXPECT_LT(train(rms, p, 1000), 1e-2);
  Tensor q = param({0.0, 0.0, 0.0});
  optim::Adagrad ada({q}, optim::AdagradOptions(0.5));
  EXPECT_LT(train(ada, q, 1000), 1e-3);
}

TEST(OptimOptimizer, GroupsZeroGradAndErrors) {
  Tensor a = param({1.0}), b = param({1.0}), c = param({1.0});
  std::vector<optim::OptimizerParamGroup> groups;
  groups.emplace_back(std::vector<Tensor>{a});
  groups.emplace_back(std::vector<Tensor>{b}, std::make_unique<optim::SGDOptions>(1.0));
  optim::SGD opt(groups, optim::SGDOptions(0.1));
  opt.add_param_group(optim::OptimizerParamGroup({c}));
  EXPECT_EQ(opt.size(), 3u);
  EXPECT_EQ(opt.param_groups()[0].options().get_lr(), 0.1);
  EXPECT_EQ(opt.param_groups()[1].options().get_lr(), 1.0);
  for (const Tensor& t : {a, b}) t.set_grad(param({1.0}).detach());
  opt.step();  // c has no grad: skipped
  EXPECT_NEAR(at(a, 0), 0.9, 1e-15);
  EXPECT_NEAR(at(b, 0), 0.0, 1e-15);
  EXPECT_EQ(at(c, 0), 1.0);
  opt.zero_grad(false);
  EXPECT_EQ(at(a.grad(), 0), 0.0);
  opt.zero_grad();
  EXPECT_FALSE(a.grad().defined());
  opt.param_groups()[0].options().set_lr(0.5);
  EXPECT_EQ(static_cast<optim::SGDOptions&>(opt.param_groups()[0].options()).lr(), 0.5);
  EXPECT_THROW(opt.add_param_group(optim::OptimizerParamGroup({a})), Error);
  EXPECT_THROW(optim::SGD({a}, optim::SGDOptions(-1.0)), Error);
  EXPECT_THROW(optim::SGD({a}, optim::SGDOptions(0.1).nesterov(true)), Error);
  EXPECT_THROW(optim::Adam({a}, optim::AdamOptions(0.1).betas({1.0, 0.9})), Error);
}
