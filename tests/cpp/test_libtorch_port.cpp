// A libtorch program ported by renaming the namespace (the README's porting recipe): modules via
// TORCH_MODULE, Slice indexing, method chains, printing, NoGradGuard, SGD options chaining and
// save/load. Expected values are computed by hand in the comments.
#include <gtest/gtest.h>

#include <cstdio>
#include <sstream>

#include "ember/ember.h"

namespace torch = ember;
using namespace torch::indexing;
namespace F = torch::nn::functional;

namespace {

struct RegressorImpl : torch::nn::Module {
  RegressorImpl() : fc(register_module("fc", torch::nn::Linear(1, 1))) {}
  torch::Tensor forward(const torch::Tensor& x) { return fc->forward(x); }
  torch::nn::Linear fc;
};
TORCH_MODULE(Regressor);

template <class T>
std::string str(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

TEST(LibtorchPort, TrainingLoopWithSliceIndexing) {
  // Column 0 holds x, column 1 holds y = 2x + 1.
  auto data = torch::tensor({1.0, 3.0, 2.0, 5.0, 3.0, 7.0, 4.0, 9.0}).reshape({4, 2});
  auto x = data.index({Slice(), Slice(None, 1)});
  auto y = data.index({Slice(), 1}).unsqueeze(1);
  EXPECT_EQ(x.sizes().vec(), std::vector<int64_t>({4, 1}));
  EXPECT_TRUE(y.squeeze().equal(torch::tensor({3.0, 5.0, 7.0, 9.0})));

  Regressor net;
  {
    torch::NoGradGuard no_grad;
    for (auto& p : net->named_parameters()) p.value().zero_();
  }
  torch::optim::SGD opt(net->parameters(), torch::optim::SGDOptions(0.01).momentum(0.0));
  opt.zero_grad();
  auto loss = F::mse_loss(net(x), y);
  // With w = b = 0 the loss is mean(y^2) = (9 + 25 + 49 + 81) / 4 = 41.
  EXPECT_FLOAT_EQ(loss.item<float>(), 41.0f);
  loss.backward();
  // dL/dw = -2 mean(x y) = -2 * 70 / 4 = -35, dL/db = -2 mean(y) = -12.
  EXPECT_NEAR(net->fc->weight.grad().item<float>(), -35.0f, 1e-5);
  EXPECT_NEAR(net->fc->bias.grad().item<float>(), -12.0f, 1e-5);
  opt.step();
  EXPECT_NEAR(net->fc->weight.item<float>(), 0.35f, 1e-6);
  EXPECT_NEAR(net->fc->bias.item<float>(), 0.12f, 1e-6);

  for (int step = 0; step < 3000; ++step) {
    opt.zero_grad();
    F::mse_loss(net(x), y).backward();
    opt.step();
  }
  EXPECT_NEAR(net->fc->weight.item<double>(), 2.0, 1e-3);
  EXPECT_NEAR(net->fc->bias.item<double>(), 1.0, 1e-3);

  torch::NoGradGuard no_grad;
  auto pred = net(x);
  EXPECT_FALSE(pred.requires_grad());
  EXPECT_TRUE(torch::allclose(pred, y, 1e-3, 1e-3));
  EXPECT_EQ(((pred - y).abs() < 0.01).sum().item<int64_t>(), 4);
}

TEST(LibtorchPort, SaveAndLoadModuleAndTensor) {
  Regressor a, b;
  std::string path = testing::TempDir() + "ember_port_module.pt";
  torch::save(a, path);
  torch::load(b, path);
  auto x = torch::arange(3, torch::kFloat).view({3, 1});
  EXPECT_TRUE(torch::equal(a(x), b(x)));
  std::remove(path.c_str());

  auto t = torch::randint(0, 10, {2, 3}, torch::kLong);
  torch::Tensor u;
  torch::save(t, path);
  torch::load(u, path);
  EXPECT_TRUE(t.equal(u));
  EXPECT_EQ(u.dtype(), torch::kInt64);
  std::remove(path.c_str());
}

TEST(LibtorchPort, PrintsLikeLibtorch) {
  EXPECT_EQ(str(torch::arange(6).reshape({2, 3})), " 0  1  2\n 3  4  5\n[ CPULongType{2,3} ]");
  EXPECT_EQ(str(torch::tensor({0.5, -1.25})), "  0.5000\n -1.2500\n[ CPUFloatType{2} ]");
  EXPECT_EQ(str(torch::full({}, 7, torch::kInt)), "7\n[ CPUIntType{} ]");
  EXPECT_EQ(str(torch::zeros({2, 1, 1})),
            "(1,.,.) = \n 0\n\n(2,.,.) = \n 0\n[ CPUFloatType{2,1,1} ]");
  EXPECT_EQ(str(torch::kFloat32), "Float");
}

TEST(LibtorchPort, MethodChainsAndOptions) {
  auto t = torch::arange(12, torch::TensorOptions().dtype(torch::kFloat32)).reshape({3, 4});
  // Row sums 6, 22, 38; row means 1.5, 5.5, 9.5.
  EXPECT_TRUE(t.sum(1).equal(torch::tensor({6.0, 22.0, 38.0})));
  EXPECT_TRUE(t.mean(1, true).equal(torch::tensor({1.5, 5.5, 9.5}).view({3, 1})));
  auto [values, indices] = t.max(0);
  EXPECT_TRUE(values.equal(torch::tensor({8.0, 9.0, 10.0, 11.0})));
  EXPECT_TRUE(indices.equal(torch::full({4}, 2, torch::kLong)));
  EXPECT_EQ(t.t().contiguous().view({-1}).index({1}).item<float>(), 4.0f);
  EXPECT_EQ((2.0 * t + 1).index({Slice(1, None), Slice(None, None, 3)}).sum().item<float>(),
            (9 + 15 + 17 + 23));
  auto w = torch::ones({2}, torch::dtype(torch::kDouble).requires_grad(true));
  (w * w).sum().backward();
  EXPECT_TRUE(w.grad().equal(torch::full({2}, 2.0, torch::kDouble)));
  EXPECT_EQ(t.options().dtype_, torch::kFloat);
  EXPECT_EQ(t.to(torch::kCPU).dtype(), torch::kFloat);
  auto probs = F::softmax(t, F::SoftmaxFuncOptions(1));
  EXPECT_TRUE(torch::allclose(probs.sum(1), torch::ones({3})));
  auto target = torch::tensor({3, 3, 3});
  auto ce = F::cross_entropy(t, target, F::CrossEntropyFuncOptions().reduction(torch::kSum));
  EXPECT_NEAR(ce.item<double>(), 3 * -t.log_softmax(1).index({0, 3}).item<double>(), 1e-5);
}

}  // namespace

TEST(LibtorchPort, ModuleToAndOptionGetters) {
  Regressor model;
  torch::Tensor weight = model->fc->weight;
  model->to(torch::Device(torch::kCPU), torch::kFloat64);
  // the handle the module holds is cast in place, as libtorch's Module::to does
  EXPECT_EQ(weight.dtype(), torch::kFloat64);
  EXPECT_EQ(model->fc->bias.dtype(), torch::kFloat64);
  auto y = model->forward(torch::ones({2, 1}, torch::TensorOptions().dtype(torch::kFloat64)));
  EXPECT_EQ(y.dtype(), torch::kFloat64);
  EXPECT_THROW(model->to(torch::Device(torch::kCUDA)), torch::Error);
  auto opts = torch::TensorOptions().dtype(torch::kInt64);
  EXPECT_EQ(opts.dtype(), torch::kInt64);
  EXPECT_TRUE(opts.device().is_cpu());
  EXPECT_EQ(torch::TensorOptions().dtype(), torch::kFloat32);  // the default dtype when unset
}
