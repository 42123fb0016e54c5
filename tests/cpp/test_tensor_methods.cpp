// Tensor's libtorch-style methods (Note [Tensor methods]): each equals its free function, the
// in-place forms write through const handles, and errors keep the free function's kind.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;
using namespace ember::indexing;

namespace {

template <class F>
ErrorKind error_kind(F f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "expected an ember::Error";
  return ErrorKind::NotImplemented;
}

// 0..11 as a 3x4 float matrix plus 0.5, so that no entry is 0 (log, div stay finite).
Tensor grid() { return arange(12, kFloat).reshape({3, 4}) + 0.5; }

TEST(TensorMethods, UnaryAndArithmeticMatchFreeFunctions) {
  Tensor a = grid(), b = grid().flip({1});
  EXPECT_TRUE(a.exp().equal(exp(a)));
  EXPECT_TRUE(a.log().equal(log(a)));
  EXPECT_TRUE(a.sqrt().equal(sqrt(a)));
  EXPECT_TRUE(a.sigmoid().equal(sigmoid(a)));
  EXPECT_TRUE(a.tanh().equal(tanh(a)));
  EXPECT_TRUE((-a).relu().equal(relu(-a)));
  EXPECT_TRUE(a.neg().abs().equal(a));
  EXPECT_TRUE(a.pow(2).allclose(mul(a, a)));
  EXPECT_TRUE(a.add(b, 2).equal(add(a, b, 2)));
  EXPECT_TRUE(a.sub(1).equal(a - 1));
  EXPECT_TRUE(a.mul(b).equal(a * b));
  EXPECT_TRUE(a.div(b).equal(a / b));
  EXPECT_TRUE((1.0 / a).allclose(reciprocal(a)));
  EXPECT_TRUE(a.clamp(1, 5).equal(clamp(a, wrap_scalar(1), wrap_scalar(5))));
  EXPECT_TRUE(a.clamp_min(3).equal(a.clamp(3)));
  EXPECT_TRUE(a.clamp_max(3).equal(a.clamp(std::nullopt, 3)));
}

TEST(TensorMethods, InPlaceThroughConstHandles) {
  const Tensor a = grid();
  a.add_(1, 2).mul_(2);  // (x + 2) * 2
  EXPECT_TRUE(a.equal((grid() + 2) * 2));
  Tensor b = grid();
  b += 1;
  b -= grid();
  b *= 3;
  b /= 3;
  EXPECT_TRUE(b.equal(ones({3, 4})));
  b.zero_().index_put_({Slice(), 0}, 7);
  EXPECT_EQ(b.sum().item<float>(), 21.0f);
  b.fill_(2).clamp_max_(1);
  EXPECT_TRUE(b.equal(ones({3, 4})));
  b.masked_fill_(b > 0, -1.0);
  EXPECT_EQ(b.sum().item<float>(), -12.0f);
}

TEST(TensorMethods, Reductions) {
  Tensor a = grid();
  EXPECT_TRUE(a.sum().equal(sum(a)));
  EXPECT_TRUE(a.sum({0}, true).equal(sum(a, {0}, true)));
  EXPECT_TRUE(a.mean(1).equal(mean(a, {1})));
  EXPECT_TRUE(a.prod(1).equal(prod(a, 1)));
  EXPECT_EQ(a.max().item<float>(), 11.5f);
  EXPECT_EQ(a.min().item<float>(), 0.5f);
  auto [v, i] = a.min(1, true);
  EXPECT_TRUE(v.equal(a.index({Slice(), Slice(0, 1)})));
  EXPECT_TRUE(i.equal(zeros({3, 1}, kLong)));
  EXPECT_EQ(a.argmax().item<int64_t>(), 11);
  EXPECT_TRUE(a.argmin(0).equal(zeros({4}, kLong)));
  // Unbiased variance of 0.5, 1.5, 2.5, 3.5 is 5/3; the biased one is 5/4.
  // As in libtorch, a lone `1` or `{1}` converts to `bool unbiased`: dims go in an IntArrayRef.
  EXPECT_TRUE(a.var(IntArrayRef{1}).allclose(full({3}, 5.0 / 3)));
  EXPECT_TRUE(a.var({1}, false).allclose(full({3}, 1.25)));
  EXPECT_TRUE(a.var({1}).allclose(a.var()));
  EXPECT_TRUE(a.std().allclose(ember::std(a)));
  EXPECT_TRUE(a.norm().allclose(norm(a)));
  EXPECT_TRUE(a.logsumexp({1}).allclose(logsumexp(a, {1})));
  EXPECT_TRUE((a > 0).all().item<bool>());
  EXPECT_TRUE((a > 11).any().item<bool>());
  EXPECT_FALSE((a > 11).all(1).any().item<bool>());
}

TEST(TensorMethods, ShapeAndIndexing) {
  Tensor a = grid();
  EXPECT_TRUE(a.view({4, 3}).equal(view(a, {4, 3})));
  EXPECT_TRUE(a.flatten().equal(a.reshape({-1})));
  EXPECT_EQ(a.unsqueeze(0).squeeze(0).sizes().vec(), a.sizes().vec());
  EXPECT_TRUE(a.permute({1, 0}).equal(a.t()));
  EXPECT_TRUE(a.transpose(0, 1).contiguous().equal(a.t()));
  EXPECT_EQ(a.index({0}).expand({2, 4}).sizes().vec(), std::vector<int64_t>({2, 4}));
  EXPECT_EQ(a.repeat({2, 1}).size(0), 6);
  EXPECT_TRUE(a.narrow(1, 1, 2).equal(a.index({Slice(), Slice(1, 3)})));
  EXPECT_TRUE(a.select(0, 2).equal(a.index({2})));
  EXPECT_TRUE(a.slice(1, 0, None, 2).equal(a.index({Ellipsis, Slice(None, None, 2)})));
  EXPECT_EQ(a.chunk(2, 1).size(), 2u);
  EXPECT_EQ(a.split({1, 2}).at(1).size(0), 2);
  EXPECT_EQ(a.unbind(1).size(), 4u);
  EXPECT_EQ(a.index({None, 1}).sizes().vec(), std::vector<int64_t>({1, 4}));
  Tensor idx = tensor({2, 0});
  EXPECT_TRUE(a.index_select(0, idx).equal(a.index({idx})));
  EXPECT_TRUE(a.gather(1, zeros({3, 1}, kLong)).equal(a.index({Slice(), Slice(0, 1)})));
  EXPECT_EQ(a.masked_select(a > 10).numel(), 2);
  EXPECT_TRUE(a.matmul(a.t()).allclose(a.mm(a.t())));
  EXPECT_TRUE(a.softmax(1).allclose(softmax(a, 1)));
  EXPECT_TRUE(a.to(kLong).equal(to_dtype(a, kLong)));
  EXPECT_EQ(a.to(kDouble).dtype(), kDouble);
  EXPECT_EQ((a == a).dtype(), kBool);
  EXPECT_EQ((a != a).sum().item<int64_t>(), 0);
  EXPECT_EQ(a.sum().item().toFloat(), 72.0f);
  EXPECT_EQ(a.argmax().item().toLong(), 11);
  EXPECT_TRUE(a.is_cpu() && !a.is_cuda());
  EXPECT_TRUE(a.data().equal(a));
}

TEST(TensorMethods, ErrorsKeepTheirKind) {
  Tensor a = grid();
  EXPECT_EQ(error_kind([&] { a.view({5}); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { a.index({3}); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { a.select(2, 0); }), ErrorKind::Index);
  EXPECT_EQ(error_kind([&] { a.to(Device(kCUDA)); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { a.isclose(a.to(kDouble)); }), ErrorKind::Runtime);
  EXPECT_EQ(error_kind([&] { a.mm(a); }), ErrorKind::Runtime);
}

TEST(TensorMethods, Factories) {
  EXPECT_EQ(randint(5, {3}).dtype(), kLong);
  EXPECT_EQ(randint(0, 5, {3}, kInt).dtype(), kInt);
  EXPECT_TRUE(rand({2}, requires_grad()).requires_grad());
  EXPECT_EQ(tensor({1, 2, 3}).dtype(), kLong);
  EXPECT_EQ(tensor({1.0, 2.0}).dtype(), kFloat);
  float buf[] = {1, 2, 3, 4};
  Tensor blob = from_blob(buf, {2, 2});
  buf[3] = 9;  // no copy
  EXPECT_EQ(blob.index({1, 1}).item<float>(), 9.0f);
  EXPECT_TRUE(
      isclose(tensor({1.0, double(NAN)}), tensor({1.0 + 1e-9, double(NAN)}), 1e-5, 1e-8, true)
          .all()
          .item<bool>());
  EXPECT_FALSE(allclose(tensor({double(INFINITY)}), tensor({1.0})));
  EXPECT_FALSE(equal(zeros({2}), zeros({1, 2})));
}

}  // namespace
