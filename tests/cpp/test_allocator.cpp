// The caching CPU allocator: reuse by size class, alignment, out-of-memory errors, fork safety.
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

TEST(Allocator, ImpossibleSizeRaisesOutOfMemory) {
  try {
    cpu_alloc(size_t(1) << 50);
    FAIL() << "expected an out-of-memory error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Runtime);
    EXPECT_NE(std::string(e.what()).find("tried to allocate 1125899906842624 bytes"), std::string::npos)
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
