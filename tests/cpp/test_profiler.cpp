// The profiler's recording side (Note [Profiler]): every dispatcher op recorded once, nested in
// the ranges around it, on the thread that ran it; shapes and allocations when asked for.
#include <gtest/gtest.h>

#include <string>
#include <thread>

#include "ember/core/profiler_session.h"
#include "ember/ember.h"

using namespace ember;

namespace {
std::vector<profiler::Record> records_named(const profiler::ThreadRecords& t, std::string name) {
  std::vector<profiler::Record> out;
  for (const auto& r : t.records)
    if (r.name == name) out.push_back(r);
  return out;
}
}  // namespace

TEST(Profiler, RecordsOpsOnceInsideUserRanges) {
  Tensor a = ones({4}), b = ones({4});
  EXPECT_FALSE(profiler::enabled());
  profiler::start(/*record_shapes=*/true, /*profile_memory=*/false);
  int64_t h = profiler::begin_range(profiler::RangeKind::User, "outer");
  Tensor c = add(a, b);
  profiler::end_range(h);
  auto threads = profiler::stop();
  EXPECT_FALSE(profiler::enabled());
  ASSERT_EQ(threads.size(), 1u);
  const auto& t = threads[0];
  auto outer = records_named(t, "outer");
  auto adds = records_named(t, "add.Tensor");
  ASSERT_EQ(outer.size(), 1u);
  ASSERT_EQ(adds.size(), 1u);
  EXPECT_EQ(t.records[size_t(adds[0].parent)].name, "outer");
  EXPECT_LE(outer[0].start_ns, adds[0].start_ns);
  EXPECT_LE(adds[0].end_ns, outer[0].end_ns);
  // (0, ndim 1, size 4, stride 1, Float) twice for the tensors, (3, Int, 1) for alpha
  // (Note [Profiler inputs]).
  std::vector<int64_t> shapes(t.shapes.begin() + adds[0].shapes_begin,
                              t.shapes.begin() + adds[0].shapes_end);
  const int64_t f = int64_t(ScalarType::Float), i = int64_t(profiler::ValueKind::Int);
  EXPECT_EQ(shapes, (std::vector<int64_t>{0, 1, 4, 1, f, 0, 1, 4, 1, f, 3, i, 1}));
}

TEST(Profiler, AutogradKernelAndBackendAreOneRange) {
  Tensor a = ones({3}).requires_grad_();
  profiler::start(false, false);
  Tensor c = a * a;
  auto threads = profiler::stop();
  ASSERT_EQ(threads.size(), 1u);
  EXPECT_EQ(records_named(threads[0], "mul.Tensor").size(), 1u);
}

TEST(Profiler, OtherThreadsAndAllocationsAreRecorded) {
  profiler::start(false, true);
  std::thread th([] { Tensor x = ones({1000}) + ones({1000}); });
  th.join();
  Tensor y = ones({10});
  auto threads = profiler::stop();
  ASSERT_EQ(threads.size(), 2u);
  EXPECT_NE(threads[0].tid, threads[1].tid);
  int64_t allocated = 0;
  for (const auto& t : threads)
    for (const auto& r : t.records)
      if (r.memory && r.bytes > 0) allocated += r.bytes;
  EXPECT_GE(allocated, int64_t(3 * 1000 * sizeof(float) + 10 * sizeof(float)));
}

TEST(Profiler, NothingIsRecordedWithoutAProfile) {
  Tensor a = ones({2}) + ones({2});
  profiler::start(false, false);
  auto threads = profiler::stop();
  EXPECT_TRUE(threads.empty());
  EXPECT_EQ(profiler::begin_range(profiler::RangeKind::User, "x"), -1);
}
