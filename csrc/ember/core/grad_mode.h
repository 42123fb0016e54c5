#pragma once
// Thread-local switches for recording the graph (no_grad, enable_grad, inference_mode). They live
// in core, below the dispatcher that reads them, as c10::GradMode does in PyTorch.

namespace ember {

/// Whether ops record autograd history on this thread.
struct GradMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// Whether inference mode is on for this thread (implies grad mode off).
struct InferenceMode {
  static bool is_enabled();
  static void set_enabled(bool enabled);
};

/// RAII: sets grad mode and restores the previous value (`torch::NoGradGuard` is this with false).
class AutoGradMode {
 public:
  explicit AutoGradMode(bool enabled) : prev_(GradMode::is_enabled()) {
    GradMode::set_enabled(enabled);
  }
  ~AutoGradMode() { GradMode::set_enabled(prev_); }
  AutoGradMode(const AutoGradMode&) = delete;
  AutoGradMode& operator=(const AutoGradMode&) = delete;

 private:
  bool prev_;
};

/// RAII guard that disables gradient recording.
struct NoGradGuard : AutoGradMode {
  NoGradGuard() : AutoGradMode(false) {}
};

}  // namespace ember
