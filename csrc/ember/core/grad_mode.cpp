#include "ember/core/grad_mode.h"

namespace ember {

namespace {
thread_local bool t_grad_enabled = true;
thread_local bool t_inference = false;
}  // namespace

bool GradMode::is_enabled() { return t_grad_enabled; }
void GradMode::set_enabled(bool enabled) { t_grad_enabled = enabled; }
bool InferenceMode::is_enabled() { return t_inference; }
void InferenceMode::set_enabled(bool enabled) { t_inference = enabled; }

}  // namespace ember
