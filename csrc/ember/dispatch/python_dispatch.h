#pragma once
// Boxed op arguments and the per-op hook that hands them to Python's dispatch modes.
//
// Note [Python dispatch hook]
// torch's TorchDispatchMode sees every ATen overload its dispatcher runs, including those of
// C++ backward formulas. ember's dispatcher does the same through one hook: while a language
// binding has marked this thread as having a dispatch mode on (`set_active`), TypedOperator::call
// boxes the op's arguments into BoxedValues and calls the hook with the op's entry, the arguments
// and a continuation (`below`) that runs the op as if the hook were not there (the thread's mark
// off while it runs, as torch excludes its Python key). The hook returns the result boxed; an
// in-place or out= op returns the argument it wrote, as the kernel would.
// An op with an argument or result that has no boxed form (a Generator, a custom op's frame)
// runs un-hooked. The cost while no thread has a mode on is one relaxed load of a global count
// and a predicted branch (`maybe_active`); the thread-local mark is read only past it.
// The box overloads are defined in python_dispatch.cpp, so changing them rebuilds one file.
#include <array>
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

class Generator;
class OperatorEntry;

/// One boxed argument or result; monostate stands for None (and an undefined tensor).
using BoxedValue = std::variant<std::monostate, Tensor, std::vector<Tensor>,
                                std::vector<std::optional<Tensor>>, int64_t, double, bool, Scalar,
                                std::vector<int64_t>, std::vector<bool>, std::string, ScalarType>;
using BoxedList = std::vector<BoxedValue>;

namespace python_dispatch {

namespace detail {
// Threads with a mode on, process-wide: zero makes the whole check one predicted branch.
extern std::atomic<int> g_threads;
}  // namespace detail

/// False while no thread has a dispatch mode on: one relaxed load.
inline bool maybe_active() { return detail::g_threads.load(std::memory_order_relaxed) != 0; }
/// True while this thread has a dispatch mode on (and is not below the hook).
bool active();
/// Marks this thread as having a dispatch mode on, or not (the binding's mode push/pop).
void set_active(bool on);

/// This thread's mark off for the object's lifetime (the continuation runs below the hook).
class Suspend {
 public:
  Suspend() : was_(active()) {
    if (was_) set_active(false);
  }
  ~Suspend() {
    if (was_) set_active(true);
  }
  Suspend(const Suspend&) = delete;
  Suspend& operator=(const Suspend&) = delete;

 private:
  bool was_;
};

/// Runs the op below the hook and boxes its results into `out`.
using Below = void (*)(void* ctx, BoxedList& out);
/// The hook: `args` boxed in schema order; `returns_tuple` when the op returns several values;
/// fills `out` with the results (one per returned value).
using Hook = void (*)(const OperatorEntry& op, BoxedList& args, bool returns_tuple, Below below,
                      void* ctx, BoxedList& out);
void set_hook(Hook hook);
Hook hook();

/// Appends an argument's boxed form to `l`; false when it has none (the op runs un-hooked).
bool box(BoxedList& l, const Tensor& v);
bool box(BoxedList& l, const std::optional<Tensor>& v);
bool box(BoxedList& l, TensorList v);
bool box(BoxedList& l, const std::vector<Tensor>& v);
bool box(BoxedList& l, const std::vector<std::optional<Tensor>>& v);
bool box(BoxedList& l, const Scalar& v);
bool box(BoxedList& l, const std::optional<Scalar>& v);
bool box(BoxedList& l, int64_t v);
bool box(BoxedList& l, std::optional<int64_t> v);
bool box(BoxedList& l, IntArrayRef v);
bool box(BoxedList& l, std::optional<IntArrayRef> v);
bool box(BoxedList& l, double v);
bool box(BoxedList& l, std::optional<double> v);
bool box(BoxedList& l, bool v);
bool box(BoxedList& l, std::optional<bool> v);
bool box(BoxedList& l, const std::string& v);
bool box(BoxedList& l, std::string_view v);
bool box(BoxedList& l, const std::optional<std::string>& v);
bool box(BoxedList& l, ScalarType v);
bool box(BoxedList& l, std::optional<ScalarType> v);
bool box(BoxedList& l, const std::shared_ptr<Generator>& v);  // only the default (null) one
bool box_bools(BoxedList& l, const bool* v, size_t n);
template <size_t N>
bool box(BoxedList& l, const std::array<bool, N>& v) {
  return box_bools(l, v.data(), N);
}
template <class T>
bool box(BoxedList&, const T&) {
  return false;
}

/// The result `i` of a hooked op as a C++ value; raises naming the op when the mode returned
/// something else.
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, Tensor& v);
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, std::vector<Tensor>& v);
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, Scalar& v);
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, double& v);
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, int64_t& v);
void unbox(const OperatorEntry& op, const BoxedList& out, size_t i, bool& v);
// An op returning Tensor& must have written a Tensor& argument (its self or out=).
void check_written(const OperatorEntry& op, const Tensor* t);

template <class T>
constexpr bool kUnboxable =
    std::is_same_v<T, Tensor> || std::is_same_v<T, Tensor&> || std::is_same_v<T, Scalar> ||
    std::is_same_v<T, std::vector<Tensor>> || std::is_same_v<T, double> ||
    std::is_same_v<T, int64_t> || std::is_same_v<T, bool>;
/// Whether a result of type R can come back from the hook.
template <class R>
struct returns_boxable : std::bool_constant<kUnboxable<R> || std::is_void_v<R>> {};
template <class... Ts>
struct returns_boxable<std::tuple<Ts...>> : std::bool_constant<(kUnboxable<Ts> && ...)> {};

/// Boxes a result the continuation computed.
template <class R>
void box_result(BoxedList& out, const R& r) {
  if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](const auto&... e) { (box(out, e), ...); }, r);
  } else {
    box(out, r);
  }
}

/// Result element I of type T: the I-th written argument for Tensor&, else unboxed.
template <class T>
T result_at(const OperatorEntry& op, const BoxedList& out, size_t i, Tensor* const* written) {
  if constexpr (std::is_same_v<T, Tensor&>) {
    check_written(op, written[i]);
    return *written[i];
  } else {
    T v{};
    unbox(op, out, i, v);
    return v;
  }
}

template <class R, size_t... I>
R tuple_result(const OperatorEntry& op, const BoxedList& out, Tensor* const* written,
               std::index_sequence<I...>) {
  return R(result_at<std::tuple_element_t<I, R>>(op, out, I, written)...);
}

/// The hooked op's return value: from the mode's results, or the argument an in-place or out=
/// op wrote (`written`: its Tensor& arguments in order).
template <class R>
R make_result(const OperatorEntry& op, const BoxedList& out, Tensor* const* written) {
  if constexpr (std::is_void_v<R>) {
    return;
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    return tuple_result<R>(op, out, written, std::make_index_sequence<std::tuple_size_v<R>>());
  } else {
    return result_at<R>(op, out, 0, written);
  }
}

template <class T, class V>
void note_written(Tensor** written, size_t& n, V& v) {
  if constexpr (std::is_same_v<T, Tensor&>) written[n++] = &v;
}

}  // namespace python_dispatch
}  // namespace ember
