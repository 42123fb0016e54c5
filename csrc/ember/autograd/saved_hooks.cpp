#include "ember/autograd/saved_hooks.h"

#include <vector>

#include "ember/core/error.h"

namespace ember::autograd::saved_hooks {

namespace {
struct State {
  std::vector<std::shared_ptr<SavedTensorHooks>> stack;
  std::optional<std::string> disabled;
};
State& state() {
  thread_local State s;
  return s;
}
// The top of this thread's stack: a trivially constructed thread-local, read without a guard.
thread_local SavedTensorHooks* t_top = nullptr;
}  // namespace

SavedTensorHooks* current() noexcept { return t_top; }

void push(std::shared_ptr<SavedTensorHooks> hooks) {
  State& s = state();
  if (s.disabled) EMBER_ERROR(ErrorKind::Runtime, *s.disabled);
  EMBER_CHECK(hooks != nullptr, "saved_tensors_hooks: expected hooks; got null");
  s.stack.push_back(std::move(hooks));
  t_top = s.stack.back().get();
}

void pop() {
  State& s = state();
  EMBER_CHECK(!s.stack.empty(), "saved_tensors_hooks: pop without a matching push");
  s.stack.pop_back();
  t_top = s.stack.empty() ? nullptr : s.stack.back().get();
}

void disable(const std::string& message) {
  State& s = state();
  if (!s.stack.empty()) EMBER_ERROR(ErrorKind::Runtime, message);
  s.disabled = message;
}

void enable() { state().disabled.reset(); }

std::optional<std::string> disabled_message() { return state().disabled; }

}  // namespace ember::autograd::saved_hooks
