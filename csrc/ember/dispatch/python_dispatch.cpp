// Boxing for the Python dispatch hook (Note [Python dispatch hook] in python_dispatch.h).
#include "ember/dispatch/python_dispatch.h"

#include "ember/dispatch/dispatcher.h"

namespace ember::python_dispatch {

namespace detail {
std::atomic<int> g_threads{0};
}  // namespace detail

namespace {
thread_local bool t_active = false;
std::atomic<Hook> g_hook{nullptr};

bool none(BoxedList& l) {
  l.emplace_back(std::monostate{});
  return true;
}
template <class T>
bool put(BoxedList& l, T v) {
  l.emplace_back(std::in_place_type<T>, std::move(v));
  return true;
}
}  // namespace

bool active() { return t_active; }

void set_active(bool on) {
  if (on == t_active) return;
  t_active = on;
  detail::g_threads.fetch_add(on ? 1 : -1, std::memory_order_relaxed);
}

void set_hook(Hook h) { g_hook.store(h); }
Hook hook() { return g_hook.load(); }

bool box(BoxedList& l, const Tensor& v) { return v.defined() ? put(l, v) : none(l); }
bool box(BoxedList& l, const std::optional<Tensor>& v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, TensorList v) { return put(l, std::vector<Tensor>(v.begin(), v.end())); }
bool box(BoxedList& l, const std::vector<Tensor>& v) { return put(l, v); }
bool box(BoxedList& l, const std::vector<std::optional<Tensor>>& v) { return put(l, v); }
bool box(BoxedList& l, const Scalar& v) { return put(l, v); }
bool box(BoxedList& l, const std::optional<Scalar>& v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, int64_t v) { return put(l, v); }
bool box(BoxedList& l, std::optional<int64_t> v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, IntArrayRef v) { return put(l, std::vector<int64_t>(v.begin(), v.end())); }
bool box(BoxedList& l, std::optional<IntArrayRef> v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, double v) { return put(l, v); }
bool box(BoxedList& l, std::optional<double> v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, bool v) { return put(l, v); }
bool box(BoxedList& l, std::optional<bool> v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, const std::string& v) { return put(l, v); }
bool box(BoxedList& l, std::string_view v) { return put(l, std::string(v)); }
bool box(BoxedList& l, const std::optional<std::string>& v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, ScalarType v) { return put(l, v); }
bool box(BoxedList& l, std::optional<ScalarType> v) { return v ? box(l, *v) : none(l); }
bool box(BoxedList& l, const std::shared_ptr<Generator>& v) { return !v && none(l); }
bool box_bools(BoxedList& l, const bool* v, size_t n) {
  return put(l, std::vector<bool>(v, v + n));
}

namespace {
[[noreturn]] void wrong_result(const OperatorEntry& op, size_t i, const char* want) {
  EMBER_ERROR(ErrorKind::Type, op.name(), ": a TorchDispatchMode returned result ", i,
              " that is not a ", want, " as the operator's schema says");
}
template <class T>
const T& get(const OperatorEntry& op, const BoxedList& out, size_t i, const char* want) {
  if (i >= out.size() || !std::holds_alternative<T>(out[i])) wrong_result(op, i, want);
  return std::get<T>(out[i]);
}
}  // namespace

void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, Tensor& v) {
  if (i < out.size() && std::holds_alternative<std::monostate>(out[i])) {
    v = Tensor();  // an optional result left out (convolution_backward's masked gradients)
    return;
  }
  v = get<Tensor>(op, out, i, "Tensor");
}
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, std::vector<Tensor>& v) {
  v = get<std::vector<Tensor>>(op, out, i, "list of Tensors");
}
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, Scalar& v) {
  if (i < out.size() && std::holds_alternative<Scalar>(out[i])) v = std::get<Scalar>(out[i]);
  else if (i < out.size() && std::holds_alternative<double>(out[i])) v = std::get<double>(out[i]);
  else if (i < out.size() && std::holds_alternative<bool>(out[i])) v = std::get<bool>(out[i]);
  else v = get<int64_t>(op, out, i, "number");
}
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, double& v) {
  if (i < out.size() && std::holds_alternative<int64_t>(out[i]))
    v = double(std::get<int64_t>(out[i]));
  else v = get<double>(op, out, i, "float");
}
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, int64_t& v) {
  v = get<int64_t>(op, out, i, "int");
}
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, bool& v) {
  v = get<bool>(op, out, i, "bool");
}
void check_written(const OperatorEntry& op, const Tensor* t) {
  EMBER_CHECK(t, op.name(), ": returns a written tensor but has no Tensor& argument");
}

}  // namespace ember::python_dispatch
