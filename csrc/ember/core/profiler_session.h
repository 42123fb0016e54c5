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
  // torch's "Sequence number" (-1: none) and "Fwd thread id" (0 on forward ops): see
  // Note [Profiler sequence numbers].
  int64_t sequence_nr = -1;
  int64_t fwd_thread = 0;
};

/// What one thread recorded. `shapes` holds each op's arguments in order (Note [Profiler
/// inputs]): a tensor as (0, ndim, sizes..., strides..., dtype), an argument without a recorded
/// value as (1), a tensor list as (2, n) followed by its n entries, a number as (3, ValueKind,
/// bits), a number list as (4, ValueKind, n, bits...).
struct ThreadRecords {
  uint64_t tid = 0;
  std::vector<Record> records;
  std::vector<int64_t> shapes;
};

// Note [Profiler sequence numbers]
// torch links a forward op to the backward node it creates by a number: an op that enters the
// dispatcher with grad mode on (a user's call, or one a composite makes; never one a backend
// kernel makes, which in ember runs with grad mode off) records the sequence number the next
// autograd node will get, and the engine's two ranges of a node record that node's number with
// the profiler's number of the thread that created it ("Fwd thread id"; threads are numbered from
// 1 in the order they first record, as torch's RecordFunction numbers them). AccumulateGrad
// records none, as torch's (and ops skip its number). The autograd layer, above this one, hands the
// profiler its counter and reports the nodes created while a profile records.

/// Installs the function that returns the sequence number of the next autograd node.
void set_sequence_source(uint64_t (*next_sequence_nr)());
/// Reports a node created on the calling thread while a profile records.
void note_node(uint64_t sequence_nr);
/// Gives the user range `handle` of the calling thread an op's sequence number (an op written in
/// Python, whose range the recorder opens as a user range).
void mark_op_range(int64_t handle);
/// Reports that node `sequence_nr` is an AccumulateGrad: torch's take no number, so an op that
/// recorded it as the next node's records the number after it.
void note_accumulator(uint64_t sequence_nr);
/// Gives the range `handle` of the calling thread the node `sequence_nr` (an engine range).
void set_range_node(int64_t handle, uint64_t sequence_nr);

/// Starts recording; raises if a profile is already recording.
void start(bool record_shapes, bool profile_memory);
/// Stops recording and returns every thread's records of this profile.
std::vector<ThreadRecords> stop();
/// The profiler's clock (steady, ns).
int64_t now_ns();

}  // namespace ember::profiler
