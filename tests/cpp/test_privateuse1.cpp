// A backend outside ember on the PrivateUse1 key (Note [PrivateUse1] in core/allocator.h): a
// tiny allocator that tags its blocks, and float kernels for add, mul and mm registered with the
// macro ember's own kernels use.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "ember/ember.h"
#include "ember/schema/binary.h"
#include "ember/schema/linalg.h"

using namespace ember;

namespace {

int g_live_blocks = 0;
int g_kernel_calls = 0;

void* toy_alloc(size_t n) {
  ++g_live_blocks;
  return std::malloc(n ? n : 1);
}
void toy_free(void* p, size_t) {
  --g_live_blocks;
  std::free(p);
}
void toy_copy(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }

void register_toy_backend() {
  PrivateUse1Allocator a;
  a.alloc = toy_alloc;
  a.free = toy_free;
  a.copy_to_device = toy_copy;
  a.copy_to_host = toy_copy;
  register_privateuse1_allocator(a);
}

Tensor toy_empty_like(const Tensor& t) {
  return empty(t.sizes(), kFloat, Device(DeviceType::PrivateUse1, 0));
}
const float* fdata(const Tensor& t) {
  EMBER_CHECK(t.is_contiguous() && t.dtype() == kFloat, "toy backend: contiguous float only");
  return static_cast<const float*>(t.data_ptr());
}

Tensor toy_add(const Tensor& a, const Tensor& b, const Scalar& alpha) {
  ++g_kernel_calls;
  Tensor out = toy_empty_like(a);
  float s = float(alpha.to<double>());
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < a.numel(); ++i) o[i] = fdata(a)[i] + s * fdata(b)[i];
  return out;
}
Tensor toy_mul(const Tensor& a, const Tensor& b) {
  ++g_kernel_calls;
  Tensor out = toy_empty_like(a);
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < a.numel(); ++i) o[i] = fdata(a)[i] * fdata(b)[i];
  return out;
}
Tensor toy_mm(const Tensor& a, const Tensor& b) {
  ++g_kernel_calls;
  int64_t n = a.size(0), k = a.size(1), m = b.size(1);
  Tensor out = empty({n, m}, kFloat, Device(DeviceType::PrivateUse1, 0));
  float* o = static_cast<float*>(out.data_ptr());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < m; ++j) {
      float acc = 0;
      for (int64_t p = 0; p < k; ++p) acc += fdata(a)[i * k + p] * fdata(b)[p * m + j];
      o[i * m + j] = acc;
    }
  return out;
}
EMBER_REGISTER_KERNEL(op::add, PrivateUse1, toy_add);
EMBER_REGISTER_KERNEL(op::mul, PrivateUse1, toy_mul);
EMBER_REGISTER_KERNEL(op::mm, PrivateUse1, toy_mm);

Tensor on_toy(std::vector<float> values, std::vector<int64_t> sizes) {
  Tensor t = empty(sizes, kFloat, Device(DeviceType::PrivateUse1));
  copy_bytes(t.data_ptr(), t.device(), values.data(), Device(), values.size() * sizeof(float));
  return t;
}
std::vector<float> to_vector(const Tensor& t) {
  std::vector<float> out(size_t(t.numel()));
  copy_bytes(out.data(), Device(), t.data_ptr(), t.device(), out.size() * sizeof(float));
  return out;
}

}  // namespace

TEST(PrivateUse1, AllocatorAndKernels) {
  register_toy_backend();
  int before = g_live_blocks;
  {
    Tensor a = on_toy({1, 2, 3, 4}, {2, 2});
    Tensor b = on_toy({10, 20, 30, 40}, {2, 2});
    EXPECT_EQ(g_live_blocks, before + 2);  // the storage comes from the backend's allocator
    EXPECT_EQ(a.device().type, DeviceType::PrivateUse1);
    EXPECT_EQ(a.device().str(), "privateuseone:0");
    int calls = g_kernel_calls;
    EXPECT_EQ(to_vector(add(a, b)), (std::vector<float>{11, 22, 33, 44}));
    EXPECT_EQ(to_vector(mul(a, b)), (std::vector<float>{10, 40, 90, 160}));
    EXPECT_EQ(to_vector(mm(a, b)), (std::vector<float>{70, 100, 150, 220}));
    EXPECT_EQ(g_kernel_calls, calls + 3);
    EXPECT_EQ(add(a, b).device().type, DeviceType::PrivateUse1);
  }
  EXPECT_EQ(g_live_blocks, before);  // and goes back to it
}

TEST(PrivateUse1, MissingKernelRaisesUnlessTheBackendOptsIntoTheCpuFallback) {
  register_toy_backend();
  Tensor a = on_toy({1, -2, 3, -4}, {2, 2});
  try {
    (void)relu(a);
    ADD_FAILURE() << "expected NotImplemented";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::NotImplemented);
    EXPECT_NE(std::string(e.what()).find("relu"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("PrivateUse1"), std::string::npos);
  }
  set_privateuse1_cpu_fallback(true);
  Tensor r = relu(a);
  EXPECT_EQ(r.device().type, DeviceType::PrivateUse1);
  EXPECT_EQ(to_vector(r), (std::vector<float>{1, 0, 3, 0}));
  Tensor c = on_toy({1, 2, 3, 4}, {2, 2});
  c.mul_(wrap_scalar(2));  // an in-place op through the fallback writes the device's memory
  EXPECT_EQ(to_vector(c), (std::vector<float>{2, 4, 6, 8}));
  set_privateuse1_cpu_fallback(false);
}

namespace toyns {
// A custom op declared outside ember with a namespace, as torch's TORCH_LIBRARY ops are named:
// the registry (and so ember.ops.toyns.triple in Python) lists it under "toyns::triple".
EMBER_DECLARE_OP(triple, "toyns::triple(Tensor self) -> Tensor", Tensor(const Tensor&));
Tensor triple_cpu(const Tensor& x) { return mul(x, wrap_scalar(3)); }
EMBER_REGISTER_KERNEL(triple, CPU, triple_cpu);
}  // namespace toyns

TEST(PrivateUse1, NamespacedCustomOpIsInTheRegistry) {
  const OperatorEntry* e = Dispatcher::singleton().find("toyns::triple");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->schema(), "toyns::triple(Tensor self) -> Tensor");
  EXPECT_EQ(select(toyns::triple.call(full({2}, 2.0)), 0, 0).item<double>(), 6.0);
}
