// The engine runs only the graph between the roots and the requested inputs (Note [Engine
// pruning] in autograd/engine.cpp): which formulas run, and what they are asked to compute.
#include <gtest/gtest.h>

#include "ember/autograd/engine.h"
#include "ember/autograd/task.h"
#include "ember/ember.h"

using namespace ember;

namespace {
// x * w with a post hook on its node recording which input gradients it computed.
struct MulGraph {
  Tensor x = ones({2}).requires_grad_();
  Tensor w = full({2}, 3.0, kFloat).requires_grad_();
  Tensor y = mul(x, w);
  std::vector<bool> computed;
  MulGraph() {
    y.grad_fn()->post_hooks.push_back(
        [this](const autograd::variable_list& outs, const autograd::variable_list&) {
          for (const Tensor& g : outs) computed.push_back(g.defined());
          return autograd::variable_list{};
        });
  }
};
}  // namespace

TEST(EnginePrune, GradComputesOnlyTheRequestedInputsGradient) {
  MulGraph g;
  auto r = autograd::grad({sum(g.y)}, {g.x}, {}, std::nullopt, false, false);
  EXPECT_EQ(g.computed, std::vector<bool>({true, false}));
  EXPECT_EQ(select(r[0], 0, 0).item<float>(), 3.0f);
  EXPECT_FALSE(g.w.grad().defined());
}

TEST(EnginePrune, FullBackwardComputesEverything) {
  MulGraph g;
  sum(g.y).backward();
  EXPECT_EQ(g.computed, std::vector<bool>({true, true}));
  EXPECT_EQ(select(g.x.grad(), 0, 0).item<float>(), 3.0f);
  EXPECT_EQ(select(g.w.grad(), 0, 0).item<float>(), 1.0f);
}

TEST(EnginePrune, BackwardInputsLeavesOtherLeavesAlone) {
  MulGraph g;
  autograd::backward({sum(g.y)}, {}, false, false, {g.w});
  EXPECT_EQ(g.computed, std::vector<bool>({false, true}));
  EXPECT_FALSE(g.x.grad().defined());
  EXPECT_EQ(select(g.w.grad(), 0, 0).item<float>(), 1.0f);
}

TEST(EnginePrune, OutsideABackwardEveryEdgeIsWanted) {
  MulGraph g;
  EXPECT_TRUE(autograd::task_should_compute_output(*g.y.grad_fn(), 0));
  EXPECT_TRUE(autograd::task_should_compute_output(*g.y.grad_fn(), 1));
  Tensor c = mul(g.x, ones({2}));  // the constant's edge is invalid
  EXPECT_FALSE(autograd::task_should_compute_output(*c.grad_fn(), 1));
}
