// Per-thread buffers of timed ranges (Note [Profiler] in profiler.h).
#include "ember/core/profiler.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>

#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/core/profiler_session.h"

namespace ember::profiler {

namespace detail {
std::atomic<uint8_t> g_state{0};
}  // namespace detail

namespace {

// The profile's number: a buffer stamped with an older one holds stale records and is cleared
// on its thread's next write. Handles carry it, so a range opened under one profile is never
// closed into another.
std::atomic<uint32_t> g_generation{0};
std::atomic<int64_t> g_total_allocated{0};

struct Buffer {
  std::mutex m;
  uint64_t tid = 0;
  uint32_t generation = 0;
  bool dead = false;  // its thread has exited (under the registry's mutex)
  std::vector<Record> records;
  std::vector<int64_t> open;  // indices of the open ranges, innermost last
  std::vector<int64_t> shapes;

  // Under m: drops another profile's records.
  void sync(uint32_t gen) {
    if (generation == gen) return;
    generation = gen;
    records.clear();
    open.clear();
    shapes.clear();
  }
};

struct Registry {
  std::mutex m;
  std::vector<std::shared_ptr<Buffer>> buffers;
  std::mutex names_m;
  std::unordered_set<std::string> names;  // copied range names, until the next start()
  std::mutex nodes_m;
  // Of the nodes created while recording: each one's thread, and the AccumulateGrads.
  std::unordered_map<uint64_t, int64_t> node_threads;
  std::unordered_set<uint64_t> accumulators;
};
Registry& registry() {
  static Registry* r = new Registry;  // leaked: threads may record during static destruction
  return *r;
}

struct Holder {
  std::shared_ptr<Buffer> buf;
  ~Holder() {
    if (!buf) return;
    std::lock_guard<std::mutex> g(registry().m);
    buf->dead = true;
  }
};
thread_local Holder t_holder;

Buffer& buffer() {
  if (!t_holder.buf) [[unlikely]] {
    auto b = std::make_shared<Buffer>();
    b->tid = uint64_t(::syscall(SYS_gettid));
    std::lock_guard<std::mutex> g(registry().m);
    registry().buffers.push_back(b);
    t_holder.buf = std::move(b);
  }
  return *t_holder.buf;
}

std::string_view intern(std::string_view name) {
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.names_m);
  return *r.names.emplace(name).first;
}

int64_t make_handle(uint32_t gen, size_t index) { return (int64_t(gen) << 32) | int64_t(index); }

// Note [Profiler sequence numbers] in profiler_session.h.
std::atomic<uint64_t (*)()> g_sequence_source{nullptr};

int64_t thread_number() {
  static std::atomic<int64_t> next{1};
  thread_local const int64_t n = next.fetch_add(1, std::memory_order_relaxed);
  return n;
}

}  // namespace

void set_sequence_source(uint64_t (*next_sequence_nr)()) {
  g_sequence_source.store(next_sequence_nr, std::memory_order_release);
}

void note_node(uint64_t sequence_nr) {
  if (!enabled()) return;
  int64_t t = thread_number();
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.nodes_m);
  r.node_threads[sequence_nr] = t;
}

void mark_op_range(int64_t handle) {
  if (handle < 0 || !GradMode::is_enabled()) return;
  auto source = g_sequence_source.load(std::memory_order_acquire);
  if (!source) return;
  int64_t sequence_nr = int64_t(source());
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (b.generation != uint32_t(handle >> 32)) return;
  size_t index = size_t(handle & 0xffffffff);
  if (index < b.records.size()) b.records[index].sequence_nr = sequence_nr;
}

void note_accumulator(uint64_t sequence_nr) {
  if (!enabled()) return;
  auto& r = registry();
  std::lock_guard<std::mutex> g(r.nodes_m);
  r.accumulators.insert(sequence_nr);
}

void set_range_node(int64_t handle, uint64_t sequence_nr) {
  if (handle < 0) return;
  int64_t fwd = thread_number();  // a node made before the profile: the thread that runs it
  {
    auto& r = registry();
    std::lock_guard<std::mutex> g(r.nodes_m);
    auto it = r.node_threads.find(sequence_nr);
    if (it != r.node_threads.end()) fwd = it->second;
  }
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (b.generation != uint32_t(handle >> 32)) return;
  size_t index = size_t(handle & 0xffffffff);
  if (index >= b.records.size()) return;
  b.records[index].sequence_nr = int64_t(sequence_nr);
  b.records[index].fwd_thread = fwd;
}

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t begin_range(RangeKind kind, std::string_view name) {
  int64_t t = now_ns();
  int64_t sequence_nr = -1;
  if (kind == RangeKind::Op && GradMode::is_enabled())
    if (auto source = g_sequence_source.load(std::memory_order_acquire))
      sequence_nr = int64_t(source());
  thread_number();  // numbered from its first record, as torch's RecordFunction numbers threads
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (!enabled()) return -1;
  uint32_t gen = g_generation.load(std::memory_order_acquire);
  b.sync(gen);
  if (kind == RangeKind::Op && !b.open.empty()) {
    const Record& top = b.records[size_t(b.open.back())];
    if (top.kind == RangeKind::Op && top.name.data() == name.data()) return -1;
  }
  Record r;
  r.name = (kind == RangeKind::Op || kind == RangeKind::Worker) ? name : intern(name);
  r.kind = kind;
  r.start_ns = t;
  r.parent = b.open.empty() ? -1 : b.open.back();
  r.shapes_begin = r.shapes_end = int64_t(b.shapes.size());
  r.sequence_nr = sequence_nr;
  b.records.push_back(r);
  b.open.push_back(int64_t(b.records.size() - 1));
  return make_handle(gen, b.records.size() - 1);
}

void end_range(int64_t handle) {
  if (handle < 0) return;
  int64_t t = now_ns();
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (b.generation != uint32_t(handle >> 32)) return;
  int64_t index = handle & 0xffffffff;
  if (size_t(index) >= b.records.size() || b.records[size_t(index)].end_ns >= 0) return;
  // Ranges left open inside this one (an exception unwound past them) close with it.
  while (!b.open.empty()) {
    int64_t top = b.open.back();
    b.open.pop_back();
    b.records[size_t(top)].end_ns = t;
    if (top == index) break;
  }
}

namespace {
// Appends to the shapes of range `handle`, which must be the last record of this thread.
template <class F>
void append_shapes(int64_t handle, F&& f) {
  if (handle < 0) return;
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (b.generation != uint32_t(handle >> 32)) return;
  size_t index = size_t(handle & 0xffffffff);
  if (index + 1 != b.records.size()) return;
  f(b.shapes);
  b.records[index].shapes_end = int64_t(b.shapes.size());
}
}  // namespace

void add_input_tensor(int64_t handle, IntArrayRef sizes, IntArrayRef strides, int8_t dtype) {
  append_shapes(handle, [&](std::vector<int64_t>& s) {
    s.push_back(0);
    s.push_back(int64_t(sizes.size()));
    s.insert(s.end(), sizes.begin(), sizes.end());
    s.insert(s.end(), strides.begin(), strides.end());
    s.push_back(dtype);
  });
}

void add_input_other(int64_t handle) {
  append_shapes(handle, [](std::vector<int64_t>& s) { s.push_back(1); });
}

void add_input_list(int64_t handle, int64_t n) {
  append_shapes(handle, [&](std::vector<int64_t>& s) {
    s.push_back(2);
    s.push_back(n);
  });
}

void add_input_value(int64_t handle, ValueKind kind, int64_t bits) {
  append_shapes(handle, [&](std::vector<int64_t>& s) {
    s.push_back(3);
    s.push_back(int64_t(kind));
    s.push_back(bits);
  });
}

void add_input_values(int64_t handle, ValueKind kind, const int64_t* bits, int64_t n) {
  append_shapes(handle, [&](std::vector<int64_t>& s) {
    s.push_back(4);
    s.push_back(int64_t(kind));
    s.push_back(n);
    s.insert(s.end(), bits, bits + n);
  });
}

void record_memory(const void* ptr, int64_t bytes) {
  if (!(detail::g_state.load(std::memory_order_relaxed) & kMemory)) return;
  int64_t total = g_total_allocated.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  int64_t t = now_ns();
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (!enabled()) return;
  b.sync(g_generation.load(std::memory_order_acquire));
  Record r;
  r.memory = true;
  r.start_ns = r.end_ns = t;
  r.parent = b.open.empty() ? -1 : b.open.back();
  r.bytes = bytes;
  r.addr = uint64_t(reinterpret_cast<uintptr_t>(ptr));
  r.total_allocated = total;
  r.shapes_begin = r.shapes_end = int64_t(b.shapes.size());
  b.records.push_back(r);
}

std::string_view current_op() {
  Buffer& b = buffer();
  std::lock_guard<std::mutex> g(b.m);
  if (b.generation != g_generation.load(std::memory_order_acquire)) return {};
  for (auto it = b.open.rbegin(); it != b.open.rend(); ++it) {
    const Record& r = b.records[size_t(*it)];
    if (r.kind == RangeKind::Op) return r.name;
  }
  return {};
}

void start(bool record_shapes, bool profile_memory) {
  auto& r = registry();
  {
    std::lock_guard<std::mutex> g(r.m);
    EMBER_CHECK(!enabled(),
                "profiler: a profile is already recording; stop it before starting another");
    // Buffers of threads that have exited hold nothing this profile needs.
    std::erase_if(r.buffers, [](const std::shared_ptr<Buffer>& b) { return b->dead; });
  }
  {
    std::lock_guard<std::mutex> g(r.names_m);
    r.names.clear();
  }
  {
    std::lock_guard<std::mutex> g(r.nodes_m);
    r.node_threads.clear();
    r.accumulators.clear();
  }
  g_total_allocated.store(0);
  g_generation.fetch_add(1, std::memory_order_acq_rel);
  uint8_t state = kOn;
  if (record_shapes) state |= kShapes;
  if (profile_memory) state |= kMemory;
  detail::g_state.store(state, std::memory_order_release);
}

std::vector<ThreadRecords> stop() {
  detail::g_state.store(0, std::memory_order_release);
  std::unordered_set<uint64_t> accumulators;
  {
    std::lock_guard<std::mutex> g(registry().nodes_m);
    registry().node_threads.clear();
    accumulators.swap(registry().accumulators);
  }
  int64_t t = now_ns();
  uint32_t gen = g_generation.load(std::memory_order_acquire);
  std::vector<std::shared_ptr<Buffer>> buffers;
  {
    std::lock_guard<std::mutex> g(registry().m);
    buffers = registry().buffers;
  }
  std::vector<ThreadRecords> out;
  for (auto& b : buffers) {
    std::lock_guard<std::mutex> g(b->m);
    if (b->generation != gen || b->records.empty()) continue;
    ThreadRecords tr;
    tr.tid = b->tid;
    tr.records = std::move(b->records);
    tr.shapes = std::move(b->shapes);
    for (Record& rec : tr.records) {
      if (rec.end_ns < 0) rec.end_ns = t;
      if (rec.kind != RangeKind::Autograd)  // an op's number, not a node's
        while (rec.sequence_nr >= 0 && accumulators.count(uint64_t(rec.sequence_nr)))
          ++rec.sequence_nr;
    }
    b->records.clear();
    b->shapes.clear();
    b->open.clear();
    out.push_back(std::move(tr));
  }
  return out;
}

}  // namespace ember::profiler
