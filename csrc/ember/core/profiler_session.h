#pragma once
// Starting and stopping a profile and reading what it recorded (Note [Profiler] in
// core/profiler.h). Only the collector (the Python binding) includes this.
#include <cstdint>
#include <string_view>
#include <vector>

#include "ember/core/profiler.h"

namespace ember::profiler {

/// One record of a thread: a range, or (memory) an allocation or free at `start_ns`.
struct Record {
  std::string_view name;  // valid until the next start()
  RangeKind kind = RangeKind::Op;
  bool memory = false;
  int64_t start_ns = 0;
  int64_t end_ns = -1;  // -1 while open; stop() closes open ranges at its time
  int64_t parent = -1;  // index of the enclosing range in the thread's records
  int64_t bytes = 0;    // memory: > 0 allocated, < 0 freed
  uint64_t addr = 0;
  int64_t total_allocated = 0;               // memory: bytes allocated during the profile, net
  int64_t shapes_begin = 0, shapes_end = 0;  // into ThreadRecords::shapes
};

/// What one thread recorded. `shapes` holds each op's arguments in order: a tensor as
/// (0, ndim, sizes...), another argument as (1), a list as (2, n) followed by its n entries.
struct ThreadRecords {
  uint64_t tid = 0;
  std::vector<Record> records;
  std::vector<int64_t> shapes;
};

/// Starts recording; raises if a profile is already recording.
void start(bool record_shapes, bool profile_memory);
/// Stops recording and returns every thread's records of this profile.
std::vector<ThreadRecords> stop();
/// The profiler's clock (steady, ns).
int64_t now_ns();

}  // namespace ember::profiler
