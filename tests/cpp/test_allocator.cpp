// The caching CPU allocator: reuse by size class, what a miss gives back, alignment, out-of-memory
// errors, fork safety.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>

#include "ember/core/allocator.h"
#include "ember/ember.h"

using namespace ember;

TEST(Allocator, BlocksAreAlignedAndReusedBySizeClass) {
  void* a = cpu_alloc(1000000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 64, 0u);
  cpu_free(a, 1000000);
#if !defined(__SANITIZE_ADDRESS__)
  // 1,000,000 and 1,000,100 bytes share a size class; the freed block comes back.
  void* b = cpu_alloc(1000100);
  EXPECT_EQ(a, b);
  cpu_free(b, 1000100);
  EXPECT_GE(cpu_allocator_stats().cached_bytes, 1000100u);
#endif
  cpu_empty_cache();
  EXPECT_EQ(cpu_allocator_stats().cached_bytes, 0u);
}

TEST(Allocator, TensorsOfOneStepReuseTheirBlocks) {
  cpu_empty_cache();
  for (int step = 0; step < 3; ++step) {
    Tensor x = ones({256, 256});
    Tensor y = add(x, x);
    EXPECT_EQ(sum(y).item<double>(), 2.0 * 256 * 256);
  }
#if !defined(__SANITIZE_ADDRESS__)
  EXPECT_GE(cpu_allocator_stats().hits, 4u);
#endif
}

#if !defined(__SANITIZE_ADDRESS__)
TEST(Allocator, MissKeepsRecentlyFreedBlocks) {
  cpu_empty_cache();
  void* a = cpu_alloc(1000000);
  cpu_free(a, 1000000);
  void* c = cpu_alloc(3000000);  // another size class: a miss, and `a` is not stale
  const uint64_t hits = cpu_allocator_stats().hits;
  void* b = cpu_alloc(1000000);
  EXPECT_EQ(cpu_allocator_stats().hits, hits + 1);
  EXPECT_EQ(a, b);
  cpu_free(b, 1000000);
  cpu_free(c, 3000000);
  cpu_empty_cache();
}

TEST(Allocator, MissGivesBackStaleBlocks) {
  cpu_empty_cache();
  void* held = cpu_alloc(8000000);  // in use: the cache holds less, so only staleness evicts
  cpu_free(cpu_alloc(1000000), 1000000);
  for (uint64_t i = 0; i < kCpuCacheStaleAllocs; ++i) cpu_free(cpu_alloc(64), 64);
  const size_t before = cpu_allocator_stats().cached_bytes;
  EXPECT_GE(before, 1000000u);
  void* c = cpu_alloc(3000000);  // a miss: the unused 1 MB block goes back to the system
  EXPECT_LE(cpu_allocator_stats().cached_bytes, before - 1000000);
  cpu_free(c, 3000000);
  cpu_free(held, 8000000);
  cpu_empty_cache();
}

TEST(Allocator, MissGivesBackWhatExceedsTheLiveBytes) {
  cpu_empty_cache();
  void* held = cpu_alloc(1000000);
  void* blocks[4];
  for (void*& b : blocks) b = cpu_alloc(2000000);
  for (void* b : blocks) cpu_free(b, 2000000);
  // 8 MB cached against 1 MB in use: a miss gives back (recent) blocks worth its 3 MB.
  const size_t before = cpu_allocator_stats().cached_bytes;
  void* c = cpu_alloc(3000000);
  EXPECT_LE(cpu_allocator_stats().cached_bytes, before - 3000000);
  cpu_free(c, 3000000);
  cpu_free(held, 1000000);
  cpu_empty_cache();
}

// Steps that free their gradients (zero_grad's default) and activations at different points
// reach a steady state without a single miss: the cache holds exactly what a step needs.
TEST(Allocator, TrainingStepsStopMissing) {
  cpu_empty_cache();
  Tensor x = randn({128, 784});
  Tensor w1 = (randn({256, 784}) * 0.05).requires_grad_();
  Tensor w2 = (randn({10, 256}) * 0.05).requires_grad_();
  auto step = [&] {
    w1.set_grad(Tensor());
    w2.set_grad(Tensor());
    Tensor h = relu(matmul(x, w1.t()));
    Tensor out = matmul(h, w2.t());
    sum(out * out).backward();
  };
  for (int i = 0; i < 3; ++i) step();
  const uint64_t misses = cpu_allocator_stats().misses;
  for (int i = 0; i < 5; ++i) step();
  EXPECT_EQ(cpu_allocator_stats().misses, misses);
}
#endif

TEST(Allocator, ImpossibleSizeRaisesOutOfMemory) {
  try {
    cpu_alloc(size_t(1) << 50);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("tried to allocate 1125899906842624 bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(cpu_alloc(SIZE_MAX - 10), Error);
}

TEST(Allocator, ForkedChildAllocates) {
  void* held = cpu_alloc(4096);
  pid_t pid = fork();
  if (pid == 0) {
    void* p = cpu_alloc(4096);
    cpu_free(p, 4096);
    _exit(sum(ones({100})).item<double>() == 100.0 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  cpu_free(held, 4096);
}
