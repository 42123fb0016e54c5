#pragma once
// The CPU fallback of the PrivateUse1 backend (Note [PrivateUse1] in core/allocator.h).
#include <optional>
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

// What an argument is held as during the call.
template <class T>
struct Held {
  using type = std::decay_t<T>;
  static type in(const type& a) { return a; }
};
template <class T>
requires std::is_same_v<std::decay_t<T>, Tensor>
struct Held<T> {
  using type = Tensor;
  static Tensor in(const Tensor& t) { return to_host(t); }
};
template <>
struct Held<const std::optional<Tensor>&> {
  using type = std::optional<Tensor>;
  static type in(const std::optional<Tensor>& t) {
    return t ? std::optional<Tensor>(to_host(*t)) : std::nullopt;
  }
};
template <>
struct Held<std::optional<Tensor>> : Held<const std::optional<Tensor>&> {};
inline std::vector<Tensor> hosts(TensorList ts) {
  std::vector<Tensor> out;
  for (const Tensor& t : ts) out.push_back(to_host(t));
  return out;
}
template <>
struct Held<TensorList> {
  using type = std::vector<Tensor>;
  static type in(TensorList ts) { return hosts(ts); }
};
template <>
struct Held<const std::vector<Tensor>&> : Held<TensorList> {};
template <>
struct Held<std::vector<Tensor>> : Held<TensorList> {};
template <>
struct Held<const std::vector<std::optional<Tensor>>&> {
  using type = std::vector<std::optional<Tensor>>;
  static type in(const std::vector<std::optional<Tensor>>& ts) {
    type out;
    for (const auto& t : ts) out.push_back(t ? std::optional<Tensor>(to_host(*t)) : std::nullopt);
    return out;
  }
};

template <class T>
T back(T v) {
  if constexpr (std::is_same_v<T, Tensor>) {
    return to_device(v);
  } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
    for (Tensor& t : v) t = to_device(t);
    return v;
  } else if constexpr (requires { std::tuple_size<T>::value; }) {
    return std::apply([](auto... xs) { return T(back(std::move(xs))...); }, std::move(v));
  } else {
    return v;
  }
}

template <class A>
void write_back_arg(const std::remove_reference_t<A>& orig, const typename Held<A>::type& held) {
  if constexpr (std::is_same_v<A, Tensor&>) write_back(orig, held);
}

template <class A, class... Rest>
Tensor& first_mutable(A&& a, Rest&&... rest) {
  if constexpr (std::is_same_v<A, Tensor&>) return a;
  else return first_mutable(std::forward<Rest>(rest)...);
}

// Runs the CPU kernel `fn` on host copies of the arguments; the results come back to the device.
template <class R, class... Args>
R cpu_fallback(void* fn, Args... args) {
  std::tuple<typename Held<Args>::type...> held(Held<Args>::in(args)...);
  auto kernel = reinterpret_cast<R (*)(Args...)>(fn);
  AutoGradMode no_grad(false);
  auto run = [&] { return std::apply([&](auto&... h) -> R { return kernel(h...); }, held); };
  auto restore = [&] {
    std::apply([&](auto&... h) { (write_back_arg<Args>(args, h), ...); }, held);
  };
  if constexpr (std::is_void_v<R>) {
    run();
    restore();
  } else if constexpr (std::is_same_v<R, Tensor&>) {
    run();
    restore();
    return first_mutable(std::forward<Args>(args)...);
  } else {
    R out = run();
    restore();
    return back(std::move(out));
  }
}
}  // namespace fallback_detail

}  // namespace ember
