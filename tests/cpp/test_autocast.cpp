// The C++ autocast API (ember::autocast, libtorch's at::autocast): the Autocast dispatch key
// casts listed ops, autograd sees the casts, the cache and nesting behave as torch's.
#include <gtest/gtest.h>

#include "ember/ember.h"

using namespace ember;

namespace {

// Turns CPU autocast on for a scope, as a Python region does, and restores the state.
struct CpuAutocast {
  explicit CpuAutocast(ScalarType dtype = kBFloat16)
      : prev_(autocast::is_autocast_enabled(DeviceType::CPU)),
        prev_dtype_(autocast::get_autocast_dtype(DeviceType::CPU)) {
    autocast::set_autocast_enabled(DeviceType::CPU, true);
    autocast::set_autocast_dtype(DeviceType::CPU, dtype);
    autocast::increment_nesting();
  }
  ~CpuAutocast() {
    autocast::decrement_nesting();
    autocast::set_autocast_enabled(DeviceType::CPU, prev_);
    autocast::set_autocast_dtype(DeviceType::CPU, prev_dtype_);
  }
  bool prev_;
  ScalarType prev_dtype_;
};

TEST(Autocast, OffByDefault) {
  EXPECT_FALSE(autocast::is_autocast_enabled(DeviceType::CPU));
  EXPECT_EQ(autocast::get_autocast_dtype(DeviceType::CPU), kBFloat16);
  Tensor a = randn({4, 5}), b = randn({5, 3});
  EXPECT_EQ(mm(a, b).dtype(), kFloat);
}

TEST(Autocast, ListsPickTheDtype) {
  Tensor a = randn({4, 5}), b = randn({5, 3}), w = randn({6, 5});
  CpuAutocast region;
  EXPECT_EQ(mm(a, b).dtype(), kBFloat16);
  EXPECT_EQ(matmul(a, b).dtype(), kBFloat16);
  EXPECT_EQ(linear(a, w, std::nullopt).dtype(), kBFloat16);
  EXPECT_EQ(bmm(unsqueeze(a, 0), unsqueeze(b, 0)).dtype(), kBFloat16);
  // outside the lists: unchanged
  EXPECT_EQ(relu(a).dtype(), kFloat);
  EXPECT_EQ((a + a).dtype(), kFloat);
  // promote: the widest input
  std::vector<Tensor> mixed = {to_dtype(a, kBFloat16), a};
  EXPECT_EQ(cat(mixed, 0).dtype(), kFloat);
  {
    autocast::ExcludeGuard excluded;  // what an Autocast kernel runs under
    EXPECT_FALSE(autocast::is_active());
    EXPECT_EQ(mm(a, b).dtype(), kFloat);
  }
  EXPECT_TRUE(autocast::is_active());
}

TEST(Autocast, Float16Dtype) {
  CpuAutocast region(kHalf);
  EXPECT_EQ(mm(randn({2, 3}), randn({3, 2})).dtype(), kHalf);
}

TEST(Autocast, GradientsOfFloat32ParametersAreFloat32) {
  Tensor w = randn({6, 5}).requires_grad_();
  Tensor x = randn({4, 5});
  Tensor out;
  {
    CpuAutocast region;
    out = linear(x, w, std::nullopt);
  }
  EXPECT_EQ(out.dtype(), kBFloat16);
  sum(to_dtype(out, kFloat)).backward();
  ASSERT_TRUE(w.grad().defined());
  EXPECT_EQ(w.grad().dtype(), kFloat);
}

TEST(Autocast, CacheLivesForTheOutermostRegion) {
  Tensor w = randn({3, 3}).requires_grad_();
  const void* first = nullptr;
  {
    CpuAutocast outer;
    Tensor a = autocast::cached_cast(kBFloat16, w);
    first = a.data_ptr();
    EXPECT_EQ(autocast::cached_cast(kBFloat16, w).data_ptr(), first);
    { CpuAutocast inner; }
    EXPECT_EQ(autocast::cached_cast(kBFloat16, w).data_ptr(), first);
    Tensor plain = randn({3, 3});  // no grad: not cached
    EXPECT_NE(autocast::cached_cast(kBFloat16, plain).data_ptr(),
              autocast::cached_cast(kBFloat16, plain).data_ptr());
  }
  CpuAutocast again;
  Tensor a = autocast::cached_cast(kBFloat16, w);
  Tensor b = autocast::cached_cast(kBFloat16, w);
  EXPECT_EQ(a.data_ptr(), b.data_ptr());
}

TEST(Autocast, RunAppliesAPolicyToAComposite) {
  CpuAutocast region;
  Tensor a = to_dtype(randn({3, 3}), kBFloat16);
  Tensor r = autocast::run(
      autocast::CastPolicy::fp32, [](const Tensor& x) { return x * 2; }, a);
  EXPECT_EQ(r.dtype(), kFloat);
}

}  // namespace
