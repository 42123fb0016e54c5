// The C++ nn frontend: registration order and names, state dicts, train/eval, layers against
// hand-computed references, Sequential, and a short optimisation that must reduce the loss.
#include <gtest/gtest.h>

#include <sstream>

#include "ember/ember.h"

using namespace ember;

namespace {
struct NetImpl : nn::Module {
  NetImpl() : Module("Net") {
    fc1 = register_module("fc1", nn::Linear(4, 3));
    bn = register_module("bn", nn::BatchNorm1d(3));
    fc2 = register_module("fc2", nn::Linear(nn::LinearOptions(3, 2).bias(false)));
    scale = register_parameter("scale", ones({1}));
  }
  Tensor forward(const Tensor& x) { return fc2(relu(bn(fc1(x)))) * scale; }
  nn::Linear fc1{nullptr};
  nn::BatchNorm1d bn{nullptr};
  nn::Linear fc2{nullptr};
  Tensor scale;
};
EMBER_MODULE(Net);

double value(const Tensor& t) { return t.item<double>(); }
}  // namespace

TEST(NnModule, NamesFollowPyTorchOrder) {
  Net net;
  std::vector<std::string> params = net->named_parameters().keys();
  EXPECT_EQ(params, (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "bn.weight",
                                              "bn.bias", "fc2.weight"}));
  std::vector<std::string> state = net->state_dict().keys();
  EXPECT_EQ(state, (std::vector<std::string>{"scale", "fc1.weight", "fc1.bias", "bn.weight",
                                             "bn.bias", "bn.running_mean", "bn.running_var",
                                             "bn.num_batches_tracked", "fc2.weight"}));
  EXPECT_EQ(net->modules().size(), 4u);
  for (const Tensor& p : net->parameters()) EXPECT_TRUE(p.requires_grad());
}

TEST(NnModule, LoadStateDictCopiesAndReportsMissingKeys) {
  Net a, b;
  b->load_state_dict(a->state_dict());
  EXPECT_TRUE(equal(a->fc1->weight, b->fc1->weight));
  auto partial = a->state_dict();
  OrderedDict<std::string, Tensor> missing;
  for (const auto& it : partial)
    if (it.key() != "fc2.weight") missing.insert(it.key(), it.value());
  try {
    b->load_state_dict(missing);
    FAIL() << "expected a missing-key error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Missing key(s) in state_dict: \"fc2.weight\""),
              std::string::npos);
  }
  b->load_state_dict(missing, /*strict=*/false);
}

TEST(NnModule, TrainEvalReachesChildrenAndBatchNormUsesRunningStats) {
  Net net;
  net->eval();
  EXPECT_FALSE(net->bn->is_training());
  Tensor x = randn({5, 4});
  Tensor before = clone(net->bn->running_mean);
  net->forward(x);
  EXPECT_TRUE(equal(before, net->bn->running_mean));  // eval does not update
  net->train();
  net->forward(x);
  EXPECT_FALSE(equal(before, net->bn->running_mean));
  EXPECT_EQ(net->bn->num_batches_tracked.item<int64_t>(), 1);
}

TEST(NnModule, LinearMatchesMatmulAndDefaultInitIsBounded) {
  nn::Linear fc(8, 3);
  double bound = 1 / std::sqrt(8.0);
  EXPECT_LE(value(amax(abs(fc->weight))), bound);
  EXPECT_LE(value(amax(abs(fc->bias))), bound);
  Tensor x = randn({2, 8});
  Tensor expected = matmul(x, transpose(fc->weight, 0, 1)) + fc->bias;
  EXPECT_TRUE(allclose(fc(x), expected, /*rtol=*/0, /*atol=*/1e-5));
}

TEST(NnModule, Conv2dSamePaddingKeepsSizeAndSequentialChains) {
  nn::Sequential seq(nn::Conv2d(nn::Conv2dOptions(2, 4, 3).padding(kSame)), nn::ReLU(),
                     nn::MaxPool2d(nn::MaxPool2dOptions(2)), nn::Flatten(),
                     nn::Linear(4 * 3 * 3, 5));
  EXPECT_EQ(seq->size(), 5u);
  Tensor out = seq->forward(randn({7, 2, 6, 6}));
  EXPECT_EQ(out.sizes().vec(), (std::vector<int64_t>{7, 5}));
  EXPECT_EQ((*seq)[-1]->name(), "Linear");
  std::ostringstream os;
  os << seq;
  EXPECT_NE(os.str().find("(1): ReLU()"), std::string::npos);
}

TEST(NnModule, EmptyHolderAndBadOptionsRaise) {
  nn::Linear empty{nullptr};
  EXPECT_TRUE(empty.is_empty());
  EXPECT_THROW(empty->forward(ones({1, 1})), Error);
  EXPECT_THROW(nn::Dropout(1.5), Error);
  EXPECT_THROW(nn::Conv2d(nn::Conv2dOptions(3, 4, 3).groups(2)), Error);
}

TEST(NnModule, AdamReducesACrossEntropyLoss) {
  manual_seed(0);
  Net net;
  optim::Adam opt(net->parameters(), optim::AdamOptions(1e-2));
  Tensor x = randn({32, 4});
  Tensor y = argmax(narrow(x, 1, 0, 2), 1);  // a learnable rule
  double first = 0, last = 0;
  for (int step = 0; step < 100; ++step) {
    opt.zero_grad();
    Tensor loss = nn::functional::cross_entropy(net->forward(x), y);
    loss.backward();
    opt.step();
    (step == 0 ? first : last) = value(loss);
  }
  EXPECT_LT(last, 0.5 * first);
}

TEST(NnModule, StateDictRoundTripsThroughACheckpoint) {
  Net a, b;
  std::string path = ::testing::TempDir() + "/ember_nn_state.ckpt";
  save(path, a->state_dict());
  b->load_state_dict(load(path).to_ordered_tensor_dict());
  for (const auto& it : a->state_dict()) EXPECT_TRUE(equal(it.value(), b->state_dict()[it.key()]));
}
