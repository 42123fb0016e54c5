#include "ember/core/parallel.h"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <string_view>
#include <thread>
#include <vector>

#include "ember/core/cpu_quota.h"
#include "ember/core/error.h"
#include "ember/core/grad_mode.h"
#include "ember/core/profiler.h"

namespace ember {

namespace {

thread_local bool t_in_parallel = false;

// Note [Pool wake-up]
// A worker blocked on a condition variable takes tens of microseconds to wake (a futex round trip
// through the scheduler), and so does a caller blocked until the workers finish: at 2 threads a
// 256^3 matmul (about 70 us of work) ran at 1.8x torch's time, whose OpenMP threads spin between
// regions. So both sides first spin on an atomic for kSpin, then block: back-to-back ops (a
// training step) never sleep, and an idle process stops using the CPUs after kSpin. Joining and
// leaving a region still happen under the mutex, which is cheap when nobody sleeps.
constexpr auto kSpin = std::chrono::microseconds(200);

// Spins until done() or kSpin passes; the caller then takes the mutex and waits as before.
template <class Done>
void spin_until(Done done) {
  const auto deadline = std::chrono::steady_clock::now() + kSpin;
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (done()) return;
#if defined(__x86_64__)
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= deadline) return;
  }
}

class ThreadPool {
 public:
  explicit ThreadPool(int n) { resize(n); }
  ~ThreadPool() { stop(); }

  // Read without locks by parallel_for while another thread may resize: hence atomic.
  int size() const { return size_.load(); }

  void resize(int n) {
    std::lock_guard<std::mutex> run_lock(run_mutex_);  // not while another thread runs a region
    stop();
    stopping_ = false;
    for (int i = 1; i < n; ++i) workers_.emplace_back([this] { loop(); });
    size_.store(int(workers_.size()) + 1);  // the caller works too
  }

  // Runs task(chunk) for chunk in [0, nchunks), the caller participating.
  void run(int64_t nchunks, const std::function<void(int64_t)>& task) {
    std::unique_lock<std::mutex> run_lock(run_mutex_);  // one parallel region at a time
    // A profile shows the workers' share of an op as ranges on their threads (Note [Profiler]).
    std::string_view op = profiler::enabled() ? profiler::current_op() : std::string_view();
    {
      std::lock_guard<std::mutex> g(m_);
      task_ = &task;
      op_ = op;
      nchunks_ = nchunks;
      next_.store(0);
      pending_.store(nchunks);
      error_ = nullptr;
      generation_.fetch_add(1);
    }
    cv_.notify_all();
    finish(work(task, nchunks));
    spin_until([&] { return pending_.load() == 0 && active_.load() == 0; });
    std::unique_lock<std::mutex> g(m_);
    // Workers that joined hold a pointer to `task`: wait for them to leave, not just the chunks.
    done_cv_.wait(g, [&] { return pending_ == 0 && active_ == 0; });
    task_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  int64_t work(const std::function<void(int64_t)>& task, int64_t nchunks) {
    t_in_parallel = true;
    int64_t i, done = 0;
    while ((i = next_.fetch_add(1)) < nchunks) {
      try {
        task(i);
      } catch (...) {
        std::lock_guard<std::mutex> g(m_);
        if (!error_) error_ = std::current_exception();
      }
      ++done;
    }
    t_in_parallel = false;
    return done;
  }

  void finish(int64_t done, bool worker = false) {
    std::lock_guard<std::mutex> g(m_);
    pending_ -= done;
    if (worker) --active_;
    if (pending_ == 0 && active_ == 0) done_cv_.notify_all();
  }

  void loop() {
    uint64_t seen = 0;
    for (;;) {
      const std::function<void(int64_t)>* task;
      int64_t nchunks;
      std::string_view op;
      spin_until([&] { return generation_.load() != seen || stopping_.load(); });
      {
        std::unique_lock<std::mutex> g(m_);
        cv_.wait(g, [&] { return stopping_ || (generation_ != seen && task_); });
        if (stopping_) return;
        seen = generation_;
        task = task_;
        nchunks = nchunks_;
        op = op_;
        ++active_;
      }
      int64_t done;
      {
        profiler::Range range;
        if (profiler::enabled()) [[unlikely]]
          range.begin(profiler::RangeKind::Worker, op);
        done = work(*task, nchunks);
      }
      finish(done, true);
    }
  }

  void stop() {
    {
      std::lock_guard<std::mutex> g(m_);
      stopping_.store(true);
    }
    cv_.notify_all();
    for (auto& t : workers_) t.join();
    workers_.clear();
  }

  std::vector<std::thread> workers_;
  std::atomic<int> size_{1};
  std::mutex m_, run_mutex_;
  std::condition_variable cv_, done_cv_;
  const std::function<void(int64_t)>* task_ = nullptr;
  int64_t nchunks_ = 0;
  std::string_view op_;  // the op that started the region, while a profile records
  std::atomic<int64_t> next_{0};
  // Written under m_; atomic so that spinners may read them without it.
  std::atomic<int64_t> pending_{0};
  std::atomic<int> active_{0};
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stopping_{false};
  std::exception_ptr error_;
};

// Leaked on purpose: threads outlive static destructors.
ThreadPool* g_pool = nullptr;

// A forked child (DataLoader workers) has none of the parent's threads and may have inherited a
// locked mutex: it abandons the copied pool and starts single-threaded, as PyTorch's workers do.
void reset_pool_in_child() { g_pool = new ThreadPool(1); }

ThreadPool& pool() {
  static bool init = [] {
    g_pool = new ThreadPool(cpu_quota::default_num_threads());
    pthread_atfork(nullptr, nullptr, reset_pool_in_child);
    return true;
  }();
  (void)init;
  return *g_pool;
}

}  // namespace

int get_num_threads() { return pool().size(); }

void set_num_threads(int n) {
  EMBER_CHECK(n > 0, "set_num_threads expects a positive integer; got ", n);
  if (n != pool().size()) pool().resize(n);
}

bool in_parallel_region() { return t_in_parallel; }

namespace {
// Sets this thread's grad and inference modes for a scope (a chunk run for another thread).
class CallerModes {
 public:
  CallerModes(bool grad, bool inference)
      : grad_(GradMode::is_enabled()), inference_(InferenceMode::is_enabled()) {
    GradMode::set_enabled(grad);
    InferenceMode::set_enabled(inference);
  }
  ~CallerModes() {
    GradMode::set_enabled(grad_);
    InferenceMode::set_enabled(inference_);
  }
  CallerModes(const CallerModes&) = delete;
  CallerModes& operator=(const CallerModes&) = delete;

 private:
  bool grad_, inference_;
};
}  // namespace

void parallel_for(int64_t begin, int64_t end, int64_t grain,
                  const std::function<void(int64_t, int64_t)>& f) {
  if (begin >= end) return;
  grain = std::max<int64_t>(grain, 1);
  int64_t n = end - begin;
  int64_t nchunks = (n + grain - 1) / grain;
  if (nchunks == 1 || t_in_parallel || pool().size() == 1) {
    // Same chunk boundaries as the parallel path, so results don't depend on the thread count.
    for (int64_t c = 0; c < nchunks; ++c)
      f(begin + c * grain, std::min(end, begin + (c + 1) * grain));
    return;
  }
  // Chunks run under the caller's grad and inference modes, as torch's parallel_for carries its
  // thread-local state: a kernel's view of an input that requires grad must not record history
  // from a pool thread (concurrent recording on one tensor raced on its autograd metadata).
  const bool grad = GradMode::is_enabled(), inference = InferenceMode::is_enabled();
  pool().run(nchunks, [&](int64_t c) {
    CallerModes modes(grad, inference);
    f(begin + c * grain, std::min(end, begin + (c + 1) * grain));
  });
}

}  // namespace ember
