#pragma once
// Derivatives from formulas alone. See Note [Derivatives].
//
// Note [Derivatives]
// An op's derivative is one line beside its forward:
//   EMBER_DERIVATIVE(op::mul, "MulBackward0", (self, other), grad * other, grad * self);
// names the op's declaration (Note [Op schemas]), torch's backward node name, a name for every
// argument of the op in order, and one formula per tensor argument (Tensor or Tensor?) in order,
// written in public ops over `grad` (the output's gradient), `result` (the output) and the
// argument names; `not_differentiable` marks a tensor argument without a gradient. From that
// the helper writes the Autograd kernel and registers it: redispatch to the backend, record the
// node, save only the tensors the formulas of the needed gradients name (Note [Saving for needed
// grads]), keep the other arguments by value, and compute only the needed gradients. It covers
// ops with one tensor output; ops with several outputs or a backward kernel of their own write
// their node by hand. EMBER_INPLACE_DERIVATIVE(op::mul_, op::mul) gives an in-place op the
// derivative of its out-of-place twin (Note [In-place under autograd]).
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "ember/autograd/node.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/inplace.h"

namespace ember {
/// The formula of a tensor argument that has no gradient (an index, a mask).
inline Tensor not_differentiable() { return Tensor(); }
/// grad * alpha, without a multiplication when alpha is 1 (add, sub, index_add, ...).
Tensor times_alpha(const Tensor& grad, const Scalar& alpha);
}  // namespace ember

namespace ember::derivative_detail {

template <class T>
constexpr bool is_tensor_arg = std::is_same_v<std::decay_t<T>, Tensor> ||
                               std::is_same_v<std::decay_t<T>, std::optional<Tensor>>;

// What the node keeps of a non-tensor argument: an owning copy.
template <class T>
struct Kept {
  using type = std::decay_t<T>;
};
template <>
struct Kept<IntArrayRef> {
  using type = DimVector;
};
template <>
struct Kept<std::string_view> {
  using type = std::string;
};
template <class T>
using kept_t = std::conditional_t<is_tensor_arg<T>, std::monostate, typename Kept<T>::type>;

// Splits "(a, b, c)" into its names at compile time.
template <size_t N>
constexpr std::array<std::string_view, N> split_names(std::string_view list) {
  std::array<std::string_view, N> out{};
  list = list.substr(1, list.size() - 2);
  for (size_t i = 0; i < N; ++i) {
    size_t comma = list.find(',');
    std::string_view name = list.substr(0, comma);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    while (!name.empty() && name.back() == ' ') name.remove_suffix(1);
    out[i] = name;
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
  }
  return out;
}

// True if `formula` names `<name><suffix>` as a word ("self", or "self_sizes" with "_sizes").
constexpr bool formula_uses(std::string_view formula, std::string_view name,
                            std::string_view suffix = {}) {
  auto word = [](char c) { return (c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9'); };
  for (size_t i = formula.find(name); i != std::string_view::npos; i = formula.find(name, i + 1)) {
    size_t end = i + name.size() + suffix.size();
    if ((i == 0 || !word(formula[i - 1])) && formula.substr(i + name.size()).starts_with(suffix) &&
        (end >= formula.size() || !word(formula[end])))
      return true;
  }
  return false;
}

inline Tensor as_tensor(const Tensor& t) { return t; }
inline Tensor as_tensor(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

/// The Autograd kernel of `Decl` with the formulas of `D` (written by EMBER_DERIVATIVE).
template <class Decl, class D, class Sig = typename Decl::Signature>
struct Autograd;
template <class Decl, class D, class... Args>
struct Autograd<Decl, D, Tensor(Args...)> {
  static constexpr size_t kArgs = sizeof...(Args);
  static constexpr std::array<bool, kArgs> kIsTensor{is_tensor_arg<Args>...};
  static constexpr size_t kTensors = (size_t(is_tensor_arg<Args>) + ... + 0);
  static_assert(D::kFormulas.size() == kTensors,
                "EMBER_DERIVATIVE needs one formula per tensor argument");
  static constexpr auto kNames = split_names<kArgs>(D::kNames);

  // Tensor argument j gets an edge unless its formula is not_differentiable().
  static constexpr auto kDiff = [] {
    std::array<bool, kTensors> d{};
    for (size_t j = 0; j < kTensors; ++j) d[j] = D::kFormulas[j] != "not_differentiable()";
    return d;
  }();
  // kEdge[j]: the edge of tensor argument j (if differentiable); kSlot[i]: the saved slot of
  // argument i (if a tensor); kEdges: the number of edges.
  static constexpr auto kEdge = [] {
    std::array<size_t, kTensors + 1> e{};
    for (size_t j = 0; j < kTensors; ++j) e[j + 1] = e[j] + kDiff[j];
    return e;
  }();
  static constexpr size_t kEdges = kEdge[kTensors];
  static constexpr auto kSlot = [] {
    std::array<size_t, kArgs> s{};
    for (size_t i = 0, j = 0; i < kArgs; ++i) s[i] = kIsTensor[i] ? j++ : 0;
    return s;
  }();

  // kReads[f][j]: formula f names tensor argument j (j == kTensors: the result).
  static constexpr auto kReads = [] {
    std::array<std::array<bool, kTensors + 1>, kTensors> r{};
    for (size_t f = 0; f < kTensors; ++f) {
      size_t j = 0;
      for (size_t i = 0; i < kArgs; ++i)
        if (kIsTensor[i]) r[f][j++] = formula_uses(D::kFormulas[f], kNames[i]);
      r[f][kTensors] = formula_uses(D::kFormulas[f], "result");
    }
    return r;
  }();

  // kSizeReads[j]: some formula names `<tensor argument j>_sizes`.
  static constexpr auto kSizeReads = [] {
    std::array<bool, kTensors> r{};
    for (size_t f = 0; f < kTensors; ++f) {
      size_t j = 0;
      for (size_t i = 0; i < kArgs; ++i) {
        if (!kIsTensor[i]) continue;
        r[j] = r[j] || formula_uses(D::kFormulas[f], kNames[i], "_sizes");
        ++j;
      }
    }
    return r;
  }();
  static constexpr bool kAnySizes = [] {
    for (bool b : kSizeReads)
      if (b) return true;
    return false;
  }();
  using Sizes = std::array<DimVector, kAnySizes ? kTensors : 0>;

  static Tensor run(Args... args) {
    Tensor out = Decl{}.redispatch(backend_of(args...), args...);
    std::array<Tensor, kTensors> inputs;
    size_t j = 0;
    ((is_tensor_arg<Args> ? void(inputs[j++] = tensor_of(args)) : void()), ...);
    std::tuple<kept_t<Args>...> kept{keep<Args>(args)...};
    Sizes sizes;
    if constexpr (kAnySizes)
      for (size_t t = 0; t < kTensors; ++t)
        if (kSizeReads[t]) sizes[t] = DimVector(inputs[t].sizes());
    auto node = autograd::record(D::kNode, edges_of(inputs), {out},
                                 [kept = std::move(kept), sizes = std::move(sizes)](
                                     autograd::FunctionNode& n, const autograd::variable_list& g) {
                                   std::array<bool, kTensors> need{};
                                   for (size_t t = 0; t < kTensors; ++t)
                                     need[t] = kDiff[t] && n.needs_input_grad(kEdge[t]);
                                   autograd::variable_list all =
                                       bound_backward(n, need.data(), g[0], kept, sizes,
                                                      std::index_sequence_for<Args...>{});
                                   autograd::variable_list grads;
                                   grads.reserve(kEdges);
                                   for (size_t t = 0; t < kTensors; ++t)
                                     if (kDiff[t]) grads.push_back(std::move(all[t]));
                                   return grads;
                                 });
    if (node) save(*node, inputs, out);
    return out;
  }

 private:
  // The inputs that get an edge: all of them (no copy) unless some are not differentiable.
  static decltype(auto) edges_of(const std::array<Tensor, kTensors>& inputs) {
    if constexpr (kEdges == kTensors) {
      return (inputs);
    } else {
      std::array<Tensor, kEdges> edges;
      for (size_t t = 0; t < kTensors; ++t)
        if (kDiff[t]) edges[kEdge[t]] = inputs[t];
      return edges;
    }
  }
  template <class T>
  static Tensor tensor_of(const T& v) {
    if constexpr (is_tensor_arg<T>) return as_tensor(v);
    else return Tensor();
  }
  template <class T>
  static kept_t<T> keep(const T& v) {
    if constexpr (is_tensor_arg<T>) return {};
    else return kept_t<T>(v);
  }

  static void save(autograd::FunctionNode& node, const std::array<Tensor, kTensors>& inputs,
                   const Tensor& out) {
    auto needed_reads = [&](size_t j) {
      for (size_t f = 0; f < kTensors; ++f)
        if (kReads[f][j] && kDiff[f] && node.needs_input_grad(kEdge[f])) return true;
      return false;
    };
    for (size_t j = 0; j < kTensors; ++j) node.save(needed_reads(j) ? inputs[j] : Tensor());
    node.save(needed_reads(kTensors) ? out : Tensor(), true);
  }

  // Calls D::backward with every forward argument: saved tensors unpacked, the rest as kept.
  template <size_t... I>
  static autograd::variable_list bound_backward(autograd::FunctionNode& n, const bool* need,
                                                const Tensor& grad,
                                                const std::tuple<kept_t<Args>...>& kept,
                                                const Sizes& sizes, std::index_sequence<I...>) {
    std::array<IntArrayRef, kArgs> arg_sizes{};
    if constexpr (kAnySizes)
      for (size_t i = 0; i < kArgs; ++i)
        if (kIsTensor[i]) arg_sizes[i] = sizes[kSlot[i]];
    return D::backward(need, grad, n.saved(kTensors), arg_sizes,
                       bound<Args>(n, kSlot[I], std::get<I>(kept))...);
  }
  template <class T>
  static decltype(auto) bound(autograd::FunctionNode& n, size_t slot, const kept_t<T>& kept) {
    if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) {
      return n.saved(slot);
    } else if constexpr (is_tensor_arg<T>) {
      Tensor t = n.saved(slot);
      return t.defined() ? std::optional<Tensor>(t) : std::optional<Tensor>();
    } else {
      return (const kept_t<T>&)kept;
    }
  }
};

/// The Autograd kernel of an in-place op: its out-of-place twin, written back into self.
template <class InplaceDecl, class Decl, class Sig = typename InplaceDecl::Signature>
struct InplaceAutograd;
template <class InplaceDecl, class Decl, class... Rest>
struct InplaceAutograd<InplaceDecl, Decl, Tensor&(Tensor&, Rest...)> {
  static Tensor& run(Tensor& self, Rest... rest) {
    return apply_inplace(self, [&](const Tensor& s) { return Decl{}.call(s, rest...); });
  }
};

}  // namespace ember::derivative_detail

// Preprocessor helpers: each formula as text, and each as a gradient computed only when needed.
#define EMBER_DERIV_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, N, ...) N
#define EMBER_DERIV_NARGS(...) EMBER_DERIV_NARGS_(__VA_ARGS__, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define EMBER_DERIV_GRAD(i, f) (need[i] ? ::ember::Tensor(f) : ::ember::Tensor())
#define EMBER_DERIV_EACH_1(M, a) M(0, a)
#define EMBER_DERIV_EACH_2(M, a, b) EMBER_DERIV_EACH_1(M, a), M(1, b)
#define EMBER_DERIV_EACH_3(M, a, b, c) EMBER_DERIV_EACH_2(M, a, b), M(2, c)
#define EMBER_DERIV_EACH_4(M, a, b, c, d) EMBER_DERIV_EACH_3(M, a, b, c), M(3, d)
#define EMBER_DERIV_EACH_5(M, a, b, c, d, e) EMBER_DERIV_EACH_4(M, a, b, c, d), M(4, e)
#define EMBER_DERIV_EACH_6(M, a, b, c, d, e, f) EMBER_DERIV_EACH_5(M, a, b, c, d, e), M(5, f)
#define EMBER_DERIV_EACH_7(M, a, b, c, d, e, f, g) EMBER_DERIV_EACH_6(M, a, b, c, d, e, f), M(6, g)
#define EMBER_DERIV_EACH_8(M, a, b, c, d, e, f, g, h) \
  EMBER_DERIV_EACH_7(M, a, b, c, d, e, f, g), M(7, h)
#define EMBER_DERIV_EACH_9(M, a, b, c, d, e, f, g, h, i) \
  EMBER_DERIV_EACH_8(M, a, b, c, d, e, f, g, h), M(8, i)
#define EMBER_DERIV_EACH(M, ...) \
  EMBER_CONCAT(EMBER_DERIV_EACH_, EMBER_DERIV_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define EMBER_DERIV_TEXT(i, f) std::string_view(#f)
#define EMBER_DERIV_SIZES_NAME(i, name) name##_sizes
#define EMBER_DERIV_UNPAREN_(...) __VA_ARGS__
#define EMBER_DERIV_UNPAREN(x) EMBER_DERIV_UNPAREN_ x

/// Defines and registers the Autograd kernel of `decl` from its formulas; see Note [Derivatives].
#define EMBER_DERIVATIVE(decl, node, names, ...) \
  EMBER_DERIVATIVE_(EMBER_CONCAT(ember_derivative_, __COUNTER__), decl, node, names, __VA_ARGS__)
#define EMBER_DERIVATIVE_(D, decl, node, names, ...)                                             \
  namespace {                                                                                    \
  struct D {                                                                                     \
    static constexpr const char* kNode = node;                                                   \
    static constexpr std::string_view kNames = #names;                                           \
    static constexpr std::array kFormulas{EMBER_DERIV_EACH(EMBER_DERIV_TEXT, __VA_ARGS__)};      \
    template <class... Bound>                                                                    \
    static ::ember::autograd::variable_list backward(const bool* need,                           \
                                                     const ::ember::Tensor& grad,                \
                                                     const ::ember::Tensor& result,              \
                                                     const auto& sizes, const Bound&... bound) { \
      (void)grad;                                                                                \
      (void)result;                                                                              \
      [[maybe_unused]] const auto& [EMBER_DERIV_UNPAREN(names)] = std::tie(bound...);            \
      [[maybe_unused]] const auto& [EMBER_DERIV_EACH(EMBER_DERIV_SIZES_NAME,                     \
                                                     EMBER_DERIV_UNPAREN(names))] = sizes;       \
      return {EMBER_DERIV_EACH(EMBER_DERIV_GRAD, __VA_ARGS__)};                                  \
    }                                                                                            \
  };                                                                                             \
  EMBER_REGISTER_KERNEL(                                                                         \
      decl, Autograd,                                                                            \
      (&::ember::derivative_detail::Autograd<std::decay_t<decltype(decl)>, D>::run));            \
  }

/// Registers the in-place op `inplace` with the derivative of its out-of-place twin `decl`.
#define EMBER_INPLACE_DERIVATIVE(inplace, decl)                                      \
  EMBER_REGISTER_KERNEL(                                                             \
      inplace, Autograd,                                                             \
      (&::ember::derivative_detail::InplaceAutograd<std::decay_t<decltype(inplace)>, \
                                                    std::decay_t<decltype(decl)>>::run))
