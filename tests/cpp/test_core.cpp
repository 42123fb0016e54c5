// Core: promotion, views and storage sharing, strides, the dispatcher, the autograd engine.
#include <gtest/gtest.h>
#include <atomic>

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

namespace toy {
// A custom op declared outside the library, with a toy backend: the PrivateUse1 key gets a
// kernel registered from this file.
EMBER_DECLARE_OP(toy_double, "toy_double(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(toy_missing, "toy_missing(Tensor self) -> Tensor", Tensor(const Tensor&));
Tensor toy_double_cpu(const Tensor& x) { return mul(x, wrap_scalar(2)); }
Tensor toy_double_private(const Tensor& x) { return add(x, wrap_scalar(1000)); }
EMBER_REGISTER_KERNEL(toy_double, CPU, toy_double_cpu);
EMBER_REGISTER_KERNEL(toy_double, PrivateUse1, toy_double_private);
}  // namespace toy

TEST(Dispatcher, CustomOpAndToyBackend) {
  Tensor x = full({2}, 3.0);
  EXPECT_EQ(select(toy::toy_double.call(x), 0, 0).item<double>(), 6.0);
  EXPECT_EQ(select(toy::toy_double.redispatch(DispatchKey::PrivateUse1, x), 0, 0).item<double>(),
            1003.0);
  const OperatorEntry* e = Dispatcher::singleton().find("toy_double");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->schema(), "toy_double(Tensor self) -> Tensor");
  EXPECT_EQ(kind_of([&] { toy::toy_missing.call(x); }), ErrorKind::NotImplemented);
}

// Note [Op schemas]: the schema string is checked against the C++ signature at compile time.
static_assert(schema_detail::check<Tensor(const Tensor&, const Tensor&, const Scalar&)>(
    "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"));
static_assert(schema_detail::check<Tensor&(Tensor&, IntArrayRef, std::optional<int64_t>)>(
    "f_(Tensor(a!) self, int[2] size=[1, 2], int? dim=None) -> Tensor(a!)"));
static_assert(schema_detail::check<std::tuple<Tensor, Tensor>(const Tensor&, int64_t)>(
    "cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)"));
static_assert(schema_detail::check<Tensor(const Tensor&, const std::string&)>(
    "f(Tensor self, str mode=\"a,b\") -> Tensor"));
static_assert(!schema_detail::check<Tensor(const Tensor&)>("f(Tensor self, int dim) -> Tensor"));
static_assert(
    !schema_detail::check<Tensor(const Tensor&, double)>("f(Tensor self, int x) -> Tensor"));
static_assert(!schema_detail::check<Tensor&(Tensor&)>("f_(Tensor self) -> Tensor"));
static_assert(!schema_detail::check<Tensor(const Tensor&)>("f(Tensor self) -> (Tensor, Tensor)"));

TEST(Dispatcher, EveryOpHasAMatchingSchema) {
  size_t with_autograd = 0;
  for (const OperatorEntry* e : Dispatcher::singleton().entries()) {
    EXPECT_EQ(e->schema().substr(0, e->schema().find('(')), e->name());
    EXPECT_NE(e->schema().find(") -> "), std::string::npos) << e->schema();
    with_autograd += e->kernel(DispatchKey::Autograd) != nullptr;
  }
  EXPECT_GT(Dispatcher::singleton().entries().size(), 200u);
  EXPECT_GT(with_autograd, 100u);
  const OperatorEntry* add = Dispatcher::singleton().find("add.Tensor");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->schema(), "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor");
  EXPECT_NE(add->kernel(DispatchKey::CPU), nullptr);
  EXPECT_NE(add->kernel(DispatchKey::Autograd), nullptr);
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

// Pool threads run a parallel_for's chunks under the caller's grad and inference modes, so a
// kernel's views of an input that requires grad record nothing from a pool thread.
TEST(Parallel, ChunksRunUnderTheCallersGradModes) {
  ember::set_num_threads(2);
  for (bool inference : {false, true}) {
    ember::NoGradGuard no_grad;
    ember::InferenceMode::set_enabled(inference);
    std::atomic<int> wrong{0}, chunks{0};
    ember::parallel_for(0, 64, 1, [&](int64_t, int64_t) {
      if (ember::GradMode::is_enabled() || ember::InferenceMode::is_enabled() != inference) ++wrong;
      ++chunks;
    });
    ember::InferenceMode::set_enabled(false);
    EXPECT_EQ(chunks.load(), 64);
    EXPECT_EQ(wrong.load(), 0);
  }
  // and the pool threads are back in their own default afterwards
  std::atomic<int> enabled{0};
  ember::parallel_for(0, 64, 1,
                      [&](int64_t, int64_t) { enabled += ember::GradMode::is_enabled(); });
  EXPECT_EQ(enabled.load(), 64);
}
