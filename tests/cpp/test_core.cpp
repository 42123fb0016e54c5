// Core: promotion, views and storage sharing, strides, the dispatcher, the autograd engine.
#include <gtest/gtest.h>

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
}  // namespace

TEST(Promotion, TableMatchesPyTorch) {
  EXPECT_EQ(promote_types(kByte, kChar), kShort);
  EXPECT_EQ(promote_types(kInt, kFloat), kFloat);
  EXPECT_EQ(promote_types(kHalf, kBFloat16), kFloat);
  EXPECT_EQ(promote_types(kBool, kLong), kLong);
  EXPECT_EQ(promote_types(kDouble, kHalf), kDouble);
  EXPECT_EQ(promote_types(kByte, kLong), kLong);
}

TEST(Promotion, WrappedNumbersAndZeroDim) {
  Tensor f = ones({2}, kFloat), i8 = ones({2}, kChar);
  EXPECT_EQ(result_type({f, wrap_scalar(2.5)}), kFloat);
  EXPECT_EQ(result_type({i8, wrap_scalar(1000)}), kChar);
  EXPECT_EQ(result_type({i8, wrap_scalar(1.5)}), kFloat);
  EXPECT_EQ(result_type({i8, scalar_tensor(1, kDouble)}), kDouble);
  EXPECT_EQ(result_type({ones({2}, kBool), wrap_scalar(3)}), kLong);
}

TEST(Views, ShareStorageAndVersion) {
  Tensor a = arange(0, 6, 1, kFloat);
  Tensor v = view(a, {2, 3});
  Tensor tr = transpose(v, 0, 1);
  EXPECT_EQ(tr.strides()[0], 1);
  EXPECT_EQ(tr.strides()[1], 3);
  EXPECT_FALSE(tr.is_contiguous());
  Tensor row = select(v, 0, 1);
  EXPECT_EQ(row.storage_offset(), 3);
  uint32_t before = a._version();
  fill_(row, 7);
  EXPECT_EQ(a._version(), before + 1);
  EXPECT_EQ(select(a, 0, 4).item<double>(), 7.0);
  Tensor sl = slice(a, 0, 1, std::nullopt, 2);
  EXPECT_EQ(sl.size(0), 3);
  EXPECT_EQ(sl.stride(0), 2);
  Tensor e = expand(unsqueeze(select(v, 0, 0), 0), {4, 3});
  EXPECT_EQ(e.strides()[0], 0);
}

TEST(Views, ReshapeCopiesOnlyWhenNeeded) {
  Tensor a = zeros({2, 3});
  EXPECT_EQ(reshape(a, {3, 2}).data_ptr(), a.data_ptr());
  Tensor t = transpose(a, 0, 1);
  EXPECT_NE(reshape(t, {6}).data_ptr(), a.data_ptr());
  EXPECT_EQ(kind_of([&] { view(t, {6}); }), ErrorKind::Runtime);
  EXPECT_EQ(kind_of([&] { select(a, 2, 0); }), ErrorKind::Index);
}

TEST(Kernels, StridedAndBroadcastInputs) {
  Tensor a = reshape(arange(0, 6, 1, kFloat), {2, 3});
  Tensor b = transpose(reshape(arange(0, 6, 1, kFloat), {3, 2}), 0, 1);
  Tensor c = add(a, b);
  // a[i][j] = 3i + j, b[i][j] = 2j + i.
  for (int64_t i = 0; i < 2; ++i)
    for (int64_t j = 0; j < 3; ++j)
      EXPECT_EQ(select(select(c, 0, i), 0, j).item<double>(), double(3 * i + j + 2 * j + i));
  Tensor s = sum(mul(a, wrap_scalar(2)), {0}, false, std::nullopt);
  EXPECT_EQ(select(s, 0, 2).item<double>(), 2.0 * (2 + 5));
}

TEST(Reductions, DeterministicAcrossThreadCounts) {
  Tensor x = sin(arange(0, 200000, 1, kFloat));
  set_num_threads(1);
  double one = sum(x).item<double>();
  set_num_threads(2);
  double two = sum(x).item<double>();
  EXPECT_EQ(one, two);
}

namespace {
// A toy backend: the PrivateUse1 key gets a kernel for a custom op registered from this file.
Tensor toy_double_cpu(const Tensor& x) { return mul(x, wrap_scalar(2)); }
Tensor toy_double_private(const Tensor& x) { return add(x, wrap_scalar(1000)); }
EMBER_REGISTER_KERNEL("toy_double", CPU, toy_double_cpu);
EMBER_REGISTER_KERNEL("toy_double", PrivateUse1, toy_double_private);
}  // namespace

TEST(Dispatcher, CustomOpAndToyBackend) {
  static const TypedOperator<Tensor(const Tensor&)> op("toy_double");
  Tensor x = full({2}, 3.0);
  EXPECT_EQ(select(op.call(x), 0, 0).item<double>(), 6.0);
  EXPECT_EQ(select(op.redispatch(DispatchKey::PrivateUse1, x), 0, 0).item<double>(), 1003.0);
  auto names = Dispatcher::singleton().op_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "toy_double"), names.end());
  static const TypedOperator<Tensor(const Tensor&)> missing("toy_missing");
  EXPECT_EQ(kind_of([&] { missing.call(x); }), ErrorKind::NotImplemented);
}

TEST(Autograd, ChainRuleAndAccumulation) {
  Tensor x = full({3}, 2.0).requires_grad_();
  Tensor y = sum(mul(exp(x), x));  // d/dx = e^x (x + 1)
  y.backward();
  EXPECT_NEAR(select(x.grad(), 0, 0).item<double>(), std::exp(2.0) * 3, 1e-4);
  sum(x).backward();
  EXPECT_NEAR(select(x.grad(), 0, 0).item<double>(), std::exp(2.0) * 3 + 1, 1e-4);
  EXPECT_EQ(y.grad_fn()->name(), "SumBackward0");
}

TEST(Autograd, BroadcastGradReducedAndSecondOrder) {
  Tensor b = ones({3}, kDouble).requires_grad_();
  Tensor a = ones({2, 3}, kDouble);
  sum(mul(a, b)).backward();
  EXPECT_EQ(b.grad().sizes().vec(), std::vector<int64_t>({3}));
  EXPECT_EQ(select(b.grad(), 0, 0).item<double>(), 2.0);

  Tensor x = full({1}, 3.0, kDouble).requires_grad_();
  Tensor y = sum(pow(x, wrap_scalar(3)));
  auto g = autograd::grad({y}, {x}, {}, std::nullopt, true, false);
  auto gg = autograd::grad({sum(g[0])}, {x}, {}, std::nullopt, false, false);
  EXPECT_NEAR(gg[0].item<double>(), 18.0, 1e-9);  // d2/dx2 x^3 = 6x
}

TEST(Autograd, InPlaceOnSavedTensorIsDetected) {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = mul(x, wrap_scalar(2));
  Tensor z = sin(y);
  add_(y, wrap_scalar(1));  // y is saved by sin
  EXPECT_EQ(kind_of([&] { sum(z).backward(); }), ErrorKind::Runtime);
  EXPECT_EQ(kind_of([&] { add_(x, wrap_scalar(1)); }), ErrorKind::Runtime);
}

TEST(Autograd, FreedGraphRaises) {
  Tensor x = ones({2}).requires_grad_();
  Tensor y = sum(exp(x));
  y.backward();
  EXPECT_EQ(kind_of([&] { y.backward(); }), ErrorKind::Runtime);
}
