// Note [Small data blocks] (core/allocator.cpp): data blocks under a page come from slabs that
// hold data only, so tensor metadata (TensorImpl, StorageImpl) never shares a page with them, and
// they stay 64-byte aligned and reused.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <set>
#include <vector>

#include "ember/core/allocator.h"
#include "ember/ember.h"

using namespace ember;

namespace {

constexpr uintptr_t kPage = 4096;

uintptr_t page_of(const void* p) { return reinterpret_cast<uintptr_t>(p) / kPage; }

}  // namespace

TEST(SmallDataPages, MetadataNeverSharesAPageWithSmallData) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "AddressSanitizer builds take every block from glibc";
#else
  // 1x28x28 float32 samples (3136 bytes) and odd sizes under a page, made as a dataset is.
  std::vector<Tensor> items;
  for (int i = 0; i < 3000; ++i) items.push_back(empty({i % 3 ? 784 : 1 + (i * 7) % 1000}, kFloat));
  std::set<uintptr_t> data, meta;
  for (const Tensor& t : items) {
    const auto* begin = static_cast<const char*>(t.data_ptr());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(begin) % 64, 0u);
    for (uintptr_t p = page_of(begin); p <= page_of(begin + t.nbytes() - 1); ++p) data.insert(p);
    const auto* impl = reinterpret_cast<const char*>(t.impl());
    const auto* storage = reinterpret_cast<const char*>(t.storage().get());
    for (const char* m :
         {impl, impl + sizeof(TensorImpl) - 1, storage, storage + sizeof(StorageImpl) - 1})
      meta.insert(page_of(m));
  }
  for (uintptr_t p : meta) EXPECT_EQ(data.count(p), 0u) << "metadata on a data page";
#endif
}

TEST(SmallDataPages, BlocksAreReusedAndSurviveEmptyCacheAndFork) {
  std::vector<void*> blocks;
  for (int i = 0; i < 2000; ++i) blocks.push_back(cpu_alloc(size_t(1 + (i * 37) % 4000)));
  for (int i = 0; i < 2000; ++i) cpu_free(blocks[size_t(i)], size_t(1 + (i * 37) % 4000));
  cpu_empty_cache();  // small blocks go back to their slabs' free lists
  void* a = cpu_alloc(3136);
  EXPECT_NE(a, nullptr);
  static_cast<char*>(a)[3135] = 1;
  const pid_t pid = fork();
  if (pid == 0) {  // the child allocates and frees on the inherited state
    void* b = cpu_alloc(3136);
    cpu_free(b, 3136);
    _exit(b == nullptr ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  cpu_free(a, 3136);
}
