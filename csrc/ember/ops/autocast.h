#pragma once
// Autocast policies (Note [Autocast] in dispatch/autocast.h): how an op's floating tensor
// arguments are cast while autocast is active, as kernels of the Autocast dispatch key for
// dispatcher ops and as `autocast::run` at the entry of composites.
#include <optional>
#include <type_traits>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/dispatch/autocast.h"

namespace ember::autocast {

enum class CastPolicy {
  lower_precision_fp,  // the autocast dtype (linear, matmul, convolutions, ...)
  fp32,                // float32 (losses, linear algebra, ...)
  promote,             // the widest floating dtype among the arguments (cat, stack, ...)
};

namespace detail {
template <class T>
using bare = std::remove_cv_t<std::remove_reference_t<T>>;

inline bool eligible(const Tensor& t) {
  return t.defined() && t.is_floating_point() && t.dtype() != kDouble && t.device().is_cpu();
}
inline void widen(ScalarType& to, const Tensor& t) {
  if (eligible(t)) to = promote_types(to, t.dtype());
}
template <class T>
void widen_arg(ScalarType& to, const T& x) {
  using B = bare<T>;
  if constexpr (std::is_same_v<B, Tensor>) widen(to, x);
  else if constexpr (std::is_same_v<B, std::optional<Tensor>>) {
    if (x) widen(to, *x);
  } else if constexpr (std::is_same_v<B, TensorList> || std::is_same_v<B, std::vector<Tensor>>) {
    for (const Tensor& t : x) widen(to, t);
  }
}

// One argument cast to `to` (a tensor, optional tensor or tensor list); other arguments pass.
template <class T>
decltype(auto) cast_arg(ScalarType to, const T& x) {
  using B = bare<T>;
  if constexpr (std::is_same_v<B, Tensor>) return cached_cast(to, x);
  else if constexpr (std::is_same_v<B, std::optional<Tensor>>) {
    return x ? std::optional<Tensor>(cached_cast(to, *x)) : x;
  } else if constexpr (std::is_same_v<B, TensorList> || std::is_same_v<B, std::vector<Tensor>>) {
    std::vector<Tensor> out;
    out.reserve(x.size());
    for (const Tensor& t : x) out.push_back(cached_cast(to, t));
    return out;
  } else {
    return (const T&)x;
  }
}
}  // namespace detail

/// The dtype a policy casts to for these arguments.
template <class... Args>
ScalarType target_dtype(CastPolicy p, const Args&... args) {
  if (p == CastPolicy::fp32) return kFloat;
  ScalarType to = get_autocast_dtype(DeviceType::CPU);
  if (p == CastPolicy::promote) (detail::widen_arg(to, args), ...);
  return to;
}

/// Calls f with the arguments cast by the policy, with the Autocast key excluded: what a
/// composite's entry does while autocast is active.
template <class F, class... Args>
auto run(CastPolicy p, F&& f, const Args&... args) {
  const ScalarType to = target_dtype(p, args...);
  ExcludeGuard guard;
  return f(detail::cast_arg(to, args)...);
}

}  // namespace ember::autocast
