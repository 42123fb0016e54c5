#pragma once
// The CPU fallback of the PrivateUse1 backend (Note [PrivateUse1] in core/allocator.h).
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/core/grad_mode.h"
#include "ember/core/tensor.h"

namespace ember {

/// Lets ops without a PrivateUse1 kernel run on the CPU (copies in and out); off by default, so
/// that a missing kernel raises NotImplementedError naming the op.
void set_privateuse1_cpu_fallback(bool on);
bool privateuse1_cpu_fallback();

namespace fallback_detail {
// A PrivateUse1 tensor's copy on the host (same geometry), or `t` itself.
Tensor to_host(const Tensor& t);
// A host tensor's copy on the PrivateUse1 device, or `t` itself when it is not on the CPU.
Tensor to_device(const Tensor& t);
// Copies `host`'s storage back into `dev`'s when `dev` is a PrivateUse1 tensor.
void write_back(const Tensor& dev, const Tensor& host);

// What an argument is held as during the call; `Conv::in` converts each tensor (to_host for
// the PrivateUse1 fallback, a CPU alias for the meta one).
template <class T, class Conv>
struct HeldAs {
  using type = std::decay_t<T>;
  static type in(const type& a) { return a; }
};
template <class T, class Conv>
requires std::is_same_v<std::decay_t<T>, Tensor>
struct HeldAs<T, Conv> {
  using type = Tensor;
  static Tensor in(const Tensor& t) { return Conv::in(t); }
};
template <class Conv>
struct HeldAs<const std::optional<Tensor>&, Conv> {
  using type = std::optional<Tensor>;
  static type in(const std::optional<Tensor>& t) {
    return t ? std::optional<Tensor>(Conv::in(*t)) : std::nullopt;
  }
};
template <class Conv>
struct HeldAs<std::optional<Tensor>, Conv> : HeldAs<const std::optional<Tensor>&, Conv> {};
template <class Conv>
struct HeldAs<TensorList, Conv> {
  using type = std::vector<Tensor>;
  static type in(TensorList ts) {
    type out;
    for (const Tensor& t : ts) out.push_back(Conv::in(t));
    return out;
  }
};
template <class Conv>
struct HeldAs<const std::vector<Tensor>&, Conv> : HeldAs<TensorList, Conv> {};
template <class Conv>
struct HeldAs<std::vector<Tensor>, Conv> : HeldAs<TensorList, Conv> {};
template <class Conv>
struct HeldAs<const std::vector<std::optional<Tensor>>&, Conv> {
  using type = std::vector<std::optional<Tensor>>;
  static type in(const std::vector<std::optional<Tensor>>& ts) {
    type out;
    for (const auto& t : ts) out.push_back(t ? std::optional<Tensor>(Conv::in(*t)) : std::nullopt);
    return out;
  }
};
struct ToHost {
  static Tensor in(const Tensor& t) { return to_host(t); }
};

// Applies `f` to every tensor of a kernel's result (a tensor, a list, a tuple of them).
template <class T, class F>
T map_tensors(T v, const F& f) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return f(v);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (Tensor& t : v) t = f(t);
    return v;
  } else if constexpr (requires { std::tuple_size<T>::value; }) {
    return std::apply([&](auto... xs) { return T(map_tensors(std::move(xs), f)...); },
                      std::move(v));
  } else {
    return v;
  }
}

template <class A, class After, class H>
void after_arg(const After& after, const std::remove_reference_t<A>& orig, const H& held) {
  if constexpr (std::is_same_v<A, Tensor&>) after(orig, held);
}

template <class A, class... Rest>
Tensor& first_mutable(A&& a, Rest&&... rest) {
  if constexpr (std::is_same_v<A, Tensor&>) return a;
  else return first_mutable(std::forward<Rest>(rest)...);
}

// Runs the CPU kernel `fn` without grad on the arguments as `Conv::in` converts them; then
// `after(arg, held)` for each mutable tensor argument, and `out` converts the results.
template <class R, class Conv, class... Args, class After, class Out>
R run_converted(void* fn, const After& after, const Out& out, Args... args) {
  std::tuple<typename HeldAs<Args, Conv>::type...> held(HeldAs<Args, Conv>::in(args)...);
  auto kernel = reinterpret_cast<R (*)(Args...)>(fn);
  AutoGradMode no_grad(false);
  auto run = [&] { return std::apply([&](auto&... h) -> R { return kernel(h...); }, held); };
  auto restore = [&] {
    std::apply([&](auto&... h) { (after_arg<Args>(after, args, h), ...); }, held);
  };
  if constexpr (std::is_void_v<R>) {
    run();
    restore();
  } else if constexpr (std::is_same_v<R, Tensor&>) {
    run();
    restore();
    return first_mutable(std::forward<Args>(args)...);
  } else {
    R r = run();
    restore();
    return map_tensors(std::move(r), out);
  }
}

// Runs the CPU kernel `fn` on host copies of the arguments; the results come back to the device.
template <class R, class... Args>
R cpu_fallback(void* fn, Args... args) {
  return run_converted<R, ToHost, Args...>(fn, write_back, to_device, std::forward<Args>(args)...);
}
}  // namespace fallback_detail

// Note [Meta fallback]
// Meta tensors (storage without data: Note [Meta storage] in core/storage.cpp) reach the Meta
// key; an op without a Meta kernel runs its CPU kernel on CPU aliases of the meta tensors, which
// read as zeros, and the results' geometry (sizes, strides, offset, dtype) is taken onto fresh
// meta storage. Every op is covered with the CPU kernel's own shape, dtype, stride and error
// rules. The cost: the kernel computes, and its output is allocated until it is converted, so a
// meta forward pass costs what a CPU pass over zeros would, in time and transient memory. Ops
// whose output shape depends on the data (nonzero, unique, ...) raise, as torch's do. In-place
// ops run for their checks only while the written tensor is small (kMetaCheckBytes); the pages
// they wrote are handed back after. Fills and random fills run nothing.
namespace meta_detail {
constexpr size_t kMetaCheckBytes = size_t(16) << 20;
struct Call {
  std::string_view op;
  std::vector<Storage> metas;  // the meta arguments' storages, for outputs that alias one
};
// Raises for ops the fallback cannot answer (data-dependent output shapes); true for ops that
// have nothing to check on meta (fills, random fills), which then run no kernel.
bool screen(std::string_view op);
// A meta tensor's CPU alias (same geometry over the same pages), a 0-d CPU tensor as it is;
// any other CPU tensor raises torch's device-mismatch error.
Tensor standin(const Tensor& t, std::string_view op);
// A CPU result as a meta tensor of the same geometry (on the argument's storage if it aliases
// one).
Tensor to_meta(const Tensor& t, const Call& c);
// After a kernel wrote into `held` (the alias of meta tensor `orig`): takes any new geometry onto
// `orig` and drops the written pages.
void written(const Tensor& orig, const Tensor& held);
// Whether an in-place call on `t` is too large to run for its checks.
bool too_large(const Tensor& t);
// copy_ on meta: checks broadcasting only; the source may be on any device.
void check_copy(const Tensor& self, const Tensor& src);
void collect(Call& c, const Tensor& t);

struct Alias {
  static thread_local std::string_view op;
  static Tensor in(const Tensor& t) { return standin(t, op); }
};

template <class T>
void collect_arg(Call& c, const T& a) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) collect(c, a);
  else if constexpr (std::is_same_v<D, std::optional<Tensor>>) {
    if (a) collect(c, *a);
  } else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::vector<Tensor>>) {
    for (const Tensor& t : a) collect(c, t);
  } else if constexpr (std::is_same_v<D, std::vector<std::optional<Tensor>>>) {
    for (const auto& t : a)
      if (t) collect(c, *t);
  }
}

template <class A>
bool mutable_too_large(const std::remove_reference_t<A>& a) {
  if constexpr (std::is_same_v<A, Tensor&>) return too_large(a);
  else return false;
}
}  // namespace meta_detail

// Runs the CPU kernel `fn` for an op with meta arguments (Note [Meta fallback]).
template <class R, class... Args>
R meta_fallback(std::string_view op, void* fn, Args... args) {
  using namespace meta_detail;
  constexpr bool in_place = std::is_same_v<R, Tensor&> || std::is_void_v<R>;
  using namespace fallback_detail;
  bool skip = screen(op);
  if constexpr (std::is_same_v<std::tuple<std::decay_t<Args>...>, std::tuple<Tensor, Tensor>>) {
    if (op == "copy_") {  // a cpu source is allowed: it writes nothing on meta
      std::apply([](const Tensor& self, const Tensor& src) { check_copy(self, src); },
                 std::forward_as_tuple(args...));
      skip = true;
    }
  }
  if constexpr (in_place) skip = skip || (mutable_too_large<Args>(args) || ...);
  Call c{op, {}};
  (collect_arg(c, args), ...);
  if (skip) {
    if constexpr (std::is_same_v<R, Tensor&>) return first_mutable(std::forward<Args>(args)...);
    else if constexpr (std::is_void_v<R>) return;
  }
  Alias::op = op;
  return run_converted<R, Alias, Args...>(
      fn, written, [&c](const Tensor& t) { return to_meta(t, c); }, std::forward<Args>(args)...);
}

}  // namespace ember
