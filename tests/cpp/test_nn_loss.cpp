// Softmax family and losses through the C++ API: values against hand-computed references,
// gradients of the fused kernels, and error kinds.
#include <gtest/gtest.h>

#include <cmath>

#include "ember/ember.h"

using namespace ember;

namespace {
ErrorKind kind_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected an ember::Error";
  return ErrorKind::Runtime;
}
double at(const Tensor& t, int64_t i, int64_t j) {
  return select(select(t, 0, i), 0, j).item<double>();
}
}  // namespace

TEST(NnLossSoftmax, RowsSumToOneAlongEitherDim) {
  Tensor x = reshape(arange(0, 12, 1, kFloat), {3, 4});
  for (int64_t dim : {0, 1}) {
    Tensor s = sum(softmax(x, dim), {dim});
    for (int64_t i = 0; i < s.numel(); ++i) EXPECT_NEAR(select(s, 0, i).item<double>(), 1.0, 1e-6);
  }
  // log_softmax(x)[0, 0] = 0 - log(1 + e + e^2 + e^3).
  double lse = std::log(1 + std::exp(1.0) + std::exp(2.0) + std::exp(3.0));
  EXPECT_NEAR(at(log_softmax(x, 1), 0, 0), -lse, 1e-5);
  EXPECT_EQ(log_softmax(x, 1, kDouble).dtype(), kDouble);
}

TEST(NnLossCrossEntropy, FusedValueAndGradient) {
  Tensor x = reshape(arange(0, 6, 1, kDouble), {2, 3});
  x.requires_grad_();
  Tensor t = arange(1, 3, 1, kLong);  // targets 1, 2
  Tensor loss = cross_entropy(x, t);
  double lse = std::log(1 + std::exp(1.0) + std::exp(2.0));  // both rows: shift-invariant
  EXPECT_NEAR(loss.item<double>(), ((lse - 1) + (lse - 2)) / 2, 1e-12);
  loss.backward();
  // d/dx = (softmax - onehot) / N.
  EXPECT_NEAR(at(x.grad(), 0, 1), (std::exp(1.0 - lse) - 1) / 2, 1e-12);
  EXPECT_NEAR(at(x.grad(), 1, 0), std::exp(0.0 - lse) / 2, 1e-12);
}

TEST(NnLossNll, WeightsAndIgnoreIndex) {
  Tensor logp = log_softmax(reshape(arange(0, 6, 1, kDouble), {3, 2}), 1);
  Tensor t = full({3}, 1, kLong);
  Tensor last = select(t, 0, 2);
  fill_(last, -100);
  Tensor w = full({2}, 2.0, kDouble);
  Tensor mean_loss = nll_loss(logp, t, w, Reduction::Mean);
  Tensor sum_loss = nll_loss(logp, t, w, Reduction::Sum);
  EXPECT_NEAR(mean_loss.item<double>(), sum_loss.item<double>() / 4.0, 1e-12);
  EXPECT_EQ(nll_loss(logp, t, {}, Reduction::None).sizes().vec(), std::vector<int64_t>({3}));
}

TEST(NnLossErrors, KindsMatchPyTorch) {
  Tensor x = zeros({3, 4});
  EXPECT_EQ(kind_of([&] { cross_entropy(x, full({3}, 4, kLong)); }), ErrorKind::Index);
  EXPECT_EQ(kind_of([&] { nll_loss(x, zeros({2}, kLong)); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { binary_cross_entropy(x, zeros({4})); }), ErrorKind::Value);
  EXPECT_EQ(kind_of([&] { softmax(x, 2); }), ErrorKind::Index);
}

TEST(NnLossCtc, SingleLabelMatchesClosedForm) {
  // T = 2, C = 2 (blank 0), target "1": paths 1-1, 0-1, 1-0 -> p = p1 p1 + p0 p1 + p1 p0.
  Tensor lp = log(full({2, 1, 2}, 0.5, kDouble));
  Tensor loss = ctc_loss(lp, full({1, 1}, 1, kLong), full({1}, 2, kLong), full({1}, 1, kLong), 0,
                         Reduction::Sum);
  EXPECT_NEAR(loss.item<double>(), -std::log(0.75), 1e-12);
}
