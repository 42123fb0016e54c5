#include "ember/autograd/anomaly.h"

#include <atomic>
#include <iostream>
#include <map>
#include <mutex>

namespace ember::autograd::anomaly {

namespace {
constexpr size_t kMaxRecorded = 1 << 20;
std::atomic<bool> g_enabled{false};
std::atomic<bool> g_check_nan{true};
std::atomic<StackFn> g_stack{nullptr};
std::atomic<WarnFn> g_warn{nullptr};
std::mutex g_mutex;
std::map<uint64_t, std::string>& stacks() {
  static auto* m = new std::map<uint64_t, std::string>();
  return *m;
}
}  // namespace

bool enabled() { return g_enabled.load(std::memory_order_relaxed); }
bool check_nan() { return g_check_nan.load(std::memory_order_relaxed); }

void set_enabled(bool on, bool nan) {
  g_enabled.store(on);
  g_check_nan.store(nan);
  if (!on) {
    std::lock_guard<std::mutex> lock(g_mutex);
    stacks().clear();
  }
}

void set_hooks(StackFn stack, WarnFn warn) {
  g_stack.store(stack);
  g_warn.store(warn);
}

void record(uint64_t sequence_nr) {
  StackFn fn = g_stack.load();
  if (!fn) return;
  std::string s = fn();
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& m = stacks();
  if (m.size() >= kMaxRecorded) m.erase(m.begin());
  m[sequence_nr] = std::move(s);
}

std::string stack_of(uint64_t sequence_nr) {
  std::lock_guard<std::mutex> lock(g_mutex);
  auto& m = stacks();
  auto it = m.find(sequence_nr);
  return it == m.end() ? std::string() : it->second;
}

void warn_error_in(const std::string& node_name, uint64_t sequence_nr) {
  std::string s = stack_of(sequence_nr);
  std::string msg;
  if (s.empty())
    msg = "Error detected in " + node_name +
          ". No forward pass information available. Enable detect anomaly during forward pass "
          "for more information.";
  else
    msg = "Error detected in " + node_name +
          ". Traceback of forward call that caused the error:\n" + s;
  WarnFn warn = g_warn.load();
  if (warn) warn(msg);
  else std::cerr << "Warning: " << msg << std::endl;
}

}  // namespace ember::autograd::anomaly
