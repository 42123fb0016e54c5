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
// grads]), keep the other arguments by value, and compute only the needed gradients.
// - The node name may be an expression over the arguments:
//   `dim.empty() ? "SumBackward0" : "SumBackward1"`.
// - `<arg>_sizes` and `<arg>_strides` are an input's geometry, kept at forward time without
//   saving the input (mm reads mat2's layout; mat2 is saved only if self needs a gradient).
// - EMBER_DERIVATIVE_OUTPUTS(decl, node, (args), (outs), formulas...) is for an op that returns
//   a tuple: `outs` names its outputs, formulas read them (`indices`) and their gradients
//   (`grad_<out>`; `grad` is the first output's). An output whose gradient no formula names gets
//   no grad_fn (indices); a gradient of an unused output arrives undefined.
// - EMBER_DERIVATIVE_GROUPED(decl, node, (args), (outs), (wrt), formula) takes one formula that
//   returns the gradients of the tensor arguments `wrt` at once, as a tuple or a variable_list
//   in wrt's order (conv2d's, the normalizations' and the RNN layer's backward kernels);
//   `need[k]` says whether wrt's k-th gradient is needed. It saves what the formula names.
// Ops over a list of tensors (cat, index, index_put) use EMBER_DERIVATIVE_LIST (Note [List
// derivatives] in ops/derivative_list.h); in-place writes that rebase history (copy_) still write
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
#include "ember/autograd/task.h"
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

// True if `formula` names `<prefix><name><suffix>` as a word ("self", "self_sizes" with suffix
// "_sizes", "grad_values" with prefix "grad_").
constexpr bool formula_uses(std::string_view formula, std::string_view name,
                            std::string_view suffix = {}, std::string_view prefix = {}) {
  auto word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (c >= '0' && c <= '9');
  };
  for (size_t i = formula.find(name); i != std::string_view::npos; i = formula.find(name, i + 1)) {
    if (i < prefix.size() || formula.substr(i - prefix.size(), prefix.size()) != prefix) continue;
    size_t begin = i - prefix.size(), end = i + name.size() + suffix.size();
    if ((begin == 0 || !word(formula[begin - 1])) &&
        formula.substr(i + name.size()).starts_with(suffix) &&
        (end >= formula.size() || !word(formula[end])))
      return true;
  }
  return false;
}

inline Tensor as_tensor(const Tensor& t) { return t; }
// The result of a grouped formula (Note [Derivatives]) as a list of gradients.
inline autograd::variable_list as_list(autograd::variable_list v) { return v; }
template <class... T>
autograd::variable_list as_list(const std::tuple<T...>& t) {
  return std::apply([](const auto&... x) { return autograd::variable_list{Tensor(x)...}; }, t);
}
inline Tensor as_tensor(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

template <class R>
struct OutputCount : std::integral_constant<size_t, 1> {};
template <class... T>
struct OutputCount<std::tuple<T...>> : std::integral_constant<size_t, sizeof...(T)> {};

// Output K of an op's result (R is Tensor or a tuple of Tensors).
template <size_t K, class R>
const Tensor& output_of(const R& r) {
  if constexpr (std::is_same_v<R, Tensor>) return r;
  else return std::get<K>(r);
}

// An aggregate tuple of what a node keeps: built in place from the arguments, and trivially
// copyable when its members are.
template <class... T>
struct Pack {};
template <class H>
struct Pack<H> {
  [[no_unique_address]] H head;
};
template <class H, class H2, class... T>
struct Pack<H, H2, T...> {
  [[no_unique_address]] H head;
  [[no_unique_address]] Pack<H2, T...> tail;
};
template <size_t I, class P>
constexpr const auto& pack_get(const P& p) {
  if constexpr (I == 0) return p.head;
  else return pack_get<I - 1>(p.tail);
}

// The non-tensor arguments a node keeps: an owning copy of each one some formula of D names
// (kIsInput[i]: argument i is a tensor, or a list of them, which the node saves instead). Both
// EMBER_DERIVATIVE's and EMBER_DERIVATIVE_LIST's nodes hold one (Note [Derivative slots]).
template <class D, auto kIsInput, class... Args>
struct KeptArgs {
  static constexpr size_t kArgs = sizeof...(Args);
  static constexpr auto kNames = split_names<kArgs>(D::kNames);
  static constexpr auto kKeep = [] {
    std::array<bool, kArgs> k{};
    for (size_t i = 0; i < kArgs; ++i)
      for (std::string_view f : D::kFormulas)
        k[i] = k[i] || (!kIsInput[i] && formula_uses(f, kNames[i]));
    return k;
  }();
  template <size_t I>
  using arg_t = std::tuple_element_t<I, std::tuple<Args...>>;
  template <size_t I>
  using kept_at = std::conditional_t<kKeep[I], kept_t<arg_t<I>>, std::monostate>;
  template <class Seq>
  struct Of;
  template <size_t... I>
  struct Of<std::index_sequence<I...>> {
    using type = Pack<kept_at<I>...>;
  };
  using Type = typename Of<std::index_sequence_for<Args...>>::type;

  // Built in place from the arguments (aggregate initialization of the nested Pack).
  template <size_t... I>
  static Type make(std::index_sequence<I...>, const Args&... args) {
    return Type{keep<I>(args)...};
  }
  template <size_t I>
  static const kept_at<I>& get(const Type& kept) {
    return pack_get<I>(kept);
  }

 private:
  template <size_t I, class T>
  static kept_at<I> keep(const T& v) {
    if constexpr (kKeep[I]) return kept_at<I>(v);
    else return {};
  }
};

/// The Autograd kernel of `Decl` with the formulas of `D` (written by EMBER_DERIVATIVE and its
/// variants). R is Tensor or a tuple of Tensors (Note [Derivatives]).
// Everything a formula does not name is decided away at compile time (Note [Derivative
// slots]): the node saves only the tensors some formula names, keeps only the other arguments
// and the geometry some formula names, and holds them itself (one allocation per call).
template <class Decl, class D, class Sig = typename Decl::Signature>
struct Autograd;
template <class Decl, class D, class R, class... Args>
struct Autograd<Decl, D, R(Args...)> {
  static constexpr size_t kArgs = sizeof...(Args);
  static constexpr size_t kOuts = OutputCount<R>::value;
  static constexpr std::array<bool, kArgs> kIsTensor{is_tensor_arg<Args>...};
  static constexpr size_t kTensors = (size_t(is_tensor_arg<Args>) + ... + 0);
  static constexpr size_t kFormulas = D::kFormulas.size();
  static_assert(D::kGrouped ? kFormulas == 1 : kFormulas == kTensors,
                "EMBER_DERIVATIVE needs one formula per tensor argument");
  static constexpr auto kNames = split_names<kArgs>(D::kNames);
  static constexpr auto kOutNames = split_names<kOuts>(D::kOutNames);
  static constexpr auto kWrt = split_names<D::kWrtCount>(D::kWrt);

  // Tensor argument j gets an edge unless its formula is not_differentiable() (or, for a grouped
  // formula, unless `wrt` leaves it out).
  static constexpr auto kDiff = [] {
    std::array<bool, kTensors> d{};
    for (size_t i = 0, j = 0; i < kArgs; ++i) {
      if (!kIsTensor[i]) continue;
      if constexpr (D::kGrouped) {
        for (std::string_view w : kWrt) d[j] = d[j] || w == kNames[i];
      } else {
        d[j] = D::kFormulas[j] != "not_differentiable()";
      }
      ++j;
    }
    return d;
  }();
  // kEdge[j]: the edge of tensor argument j (if differentiable); kTensorOf[i]: the tensor index
  // of argument i (if a tensor); kEdges: the number of edges.
  static constexpr auto kEdge = [] {
    std::array<size_t, kTensors + 1> e{};
    for (size_t j = 0; j < kTensors; ++j) e[j + 1] = e[j] + kDiff[j];
    return e;
  }();
  static constexpr size_t kEdges = kEdge[kTensors];
  static_assert(!D::kGrouped || D::kWrtCount == kEdges,
                "EMBER_DERIVATIVE_GROUPED: `wrt` names tensor arguments, in argument order");
  static constexpr auto kTensorOf = [] {
    std::array<size_t, kArgs> s{};
    for (size_t i = 0, j = 0; i < kArgs; ++i) s[i] = kIsTensor[i] ? j++ : 0;
    return s;
  }();

  // kReads[f][j]: formula f names tensor argument j (j >= kTensors: output j - kTensors).
  static constexpr size_t kSlots = kTensors + kOuts;
  static constexpr auto kReads = [] {
    std::array<std::array<bool, kSlots>, kFormulas> r{};
    for (size_t f = 0; f < kFormulas; ++f) {
      size_t j = 0;
      for (size_t i = 0; i < kArgs; ++i)
        if (kIsTensor[i]) r[f][j++] = formula_uses(D::kFormulas[f], kNames[i]);
      for (size_t k = 0; k < kOuts; ++k)
        r[f][kTensors + k] = formula_uses(D::kFormulas[f], kOutNames[k]);
    }
    return r;
  }();
  // Note [Derivative slots]
  // kSaved[j]: some formula names tensor j (argument, then output), so the node has a saved slot
  // for it, kSlot[j]; whether the slot holds the tensor or a placeholder is decided per call by
  // the gradients needed (Note [Saving for needed grads]). A tensor no formula names gets no slot.
  static constexpr auto kSaved = [] {
    std::array<bool, kSlots> s{};
    for (size_t f = 0; f < kFormulas; ++f)
      for (size_t j = 0; j < kSlots; ++j) s[j] = s[j] || kReads[f][j];
    return s;
  }();
  static constexpr auto kSlot = [] {
    std::array<size_t, kSlots + 1> s{};
    for (size_t j = 0; j < kSlots; ++j) s[j + 1] = s[j] + kSaved[j];
    return s;
  }();
  static constexpr size_t kSaves = kSlot[kSlots];

  // kOutDiff[k]: some formula names output k's gradient (`grad_<name>`, or `grad` for output 0),
  // so output k gets this node as its grad_fn.
  static constexpr auto kOutDiff = [] {
    std::array<bool, kOuts> d{};
    for (std::string_view f : D::kFormulas)
      for (size_t k = 0; k < kOuts; ++k)
        d[k] = d[k] || formula_uses(f, kOutNames[k], {}, "grad_") ||
               (k == 0 && formula_uses(f, "grad"));
    bool none = true;
    for (bool b : d) none = none && !b;
    d[0] = d[0] || none;  // a formula that reads no gradient (a constant) still differentiates
    return d;
  }();
  static constexpr size_t kRecorded = [] {
    size_t n = 0;
    for (size_t k = 0; k < kOuts; ++k)
      if (kOutDiff[k]) n = k + 1;
    return n;
  }();
  // The recorded outputs are a prefix of all of them (no output before the last recorded one is
  // left out): the node attaches to the outputs as they are, without a copy.
  static constexpr bool kRecordedPrefix = [] {
    for (size_t k = 0; k < kRecorded; ++k)
      if (!kOutDiff[k]) return false;
    return true;
  }();

  // Geometry: kGeometryAt[j] / kGeometryAt[kTensors + j] is the index in DerivNode::geometry of
  // `<tensor j>_sizes` / `_strides`, or kNone where no formula names it.
  static constexpr size_t kNone = size_t(-1);
  static constexpr auto geometry_index() {
    std::array<size_t, 2 * kTensors> at{};
    size_t n = 0;
    for (size_t s = 0; s < 2; ++s) {
      for (size_t i = 0, j = 0; i < kArgs; ++i) {
        if (!kIsTensor[i]) continue;
        bool named = false;
        for (std::string_view f : D::kFormulas)
          named = named || formula_uses(f, kNames[i], s == 0 ? "_sizes" : "_strides");
        at[s * kTensors + j] = named ? n++ : kNone;
        ++j;
      }
    }
    return std::pair{at, n};
  }
  static constexpr auto kGeometryAt = geometry_index().first;
  static constexpr size_t kGeometries = geometry_index().second;

  // The non-tensor arguments some formula names, kept by value.
  using Kept = KeptArgs<D, kIsTensor, Args...>;
  template <size_t I>
  using arg_t = typename Kept::template arg_t<I>;

  // The node: a FunctionNode holding what the formulas keep, with no closure of its own.
  struct DerivNode final : autograd::FunctionNode {
    template <size_t... I>
    DerivNode(const char* name, std::index_sequence<I...> seq, const Args&... args)
        : FunctionNode(name, &DerivNode::call), kept(Kept::make(seq, args...)) {}
    static autograd::variable_list call(FunctionNode& n, const autograd::variable_list& g) {
      return backward(static_cast<DerivNode&>(n), g);
    }
    typename Kept::Type kept;
    std::array<DimVector, kGeometries> geometry;
  };

  static R run(Args... args) {
    R out = Decl{}.redispatch(backend_of(args...), args...);
    std::array<Tensor, kTensors> inputs;
    size_t j = 0;
    ((is_tensor_arg<Args> ? void(inputs[j++] = tensor_of(args)) : void()), ...);
    // What autograd::record does, with the node allocated once with its kept arguments.
    const auto& edges = edges_of(inputs);
    if (!autograd::any_requires_grad(edges)) return out;
    auto node =
        std::make_shared<DerivNode>(D::node(args...), std::index_sequence_for<Args...>{}, args...);
    if constexpr (kGeometries > 0) {
      for (size_t t = 0; t < kTensors; ++t) {
        if (!inputs[t].defined()) continue;
        if (kGeometryAt[t] != kNone) node->geometry[kGeometryAt[t]] = inputs[t].sizes();
        if (kGeometryAt[kTensors + t] != kNone)
          node->geometry[kGeometryAt[kTensors + t]] = inputs[t].strides();
      }
    }
    autograd::collect_next_edges(*node, edges);
    node->num_outputs = uint32_t(std::max<size_t>(1, kRecorded));
    [&]<size_t... K>(std::index_sequence<K...>) { (attach(node, output_of<K>(out), K), ...); }
    (std::make_index_sequence<kRecorded>{});
    save(*node, inputs, out);
    return out;
  }

 private:
  static void attach(const std::shared_ptr<DerivNode>& node, const Tensor& t, size_t k) {
    // Integer and bool outputs (indices, comparisons) never carry gradients.
    if (kOutDiff[k] && t.defined() && is_differentiable_type(t.dtype()))
      autograd::set_history(t, node, uint32_t(k));
  }
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

  // True if a gradient this node will compute reads slot j.
  static bool needed(const autograd::FunctionNode& node, size_t j) {
    for (size_t f = 0; f < kFormulas; ++f) {
      if (!kReads[f][j]) continue;
      if constexpr (D::kGrouped) {
        for (size_t e = 0; e < kEdges; ++e)
          if (node.needs_input_grad(e)) return true;
      } else if (kDiff[f] && node.needs_input_grad(kEdge[f])) {
        return true;
      }
    }
    return false;
  }
  static void save(autograd::FunctionNode& node, const std::array<Tensor, kTensors>& inputs,
                   const R& out) {
    for (size_t j = 0; j < kTensors; ++j)
      if (kSaved[j]) node.save(needed(node, j) ? inputs[j] : Tensor());
    [&]<size_t... K>(std::index_sequence<K...>) {
      ((kSaved[kTensors + K]
            ? void(
                  node.save(needed(node, kTensors + K) ? output_of<K>(out) : Tensor(), kOutDiff[K]))
            : void()),
       ...);
    }
    (std::make_index_sequence<kOuts>{});
  }

  static autograd::variable_list backward(DerivNode& n, const autograd::variable_list& g) {
    std::array<Tensor, kOuts> grads;
    for (size_t k = 0; k < kOuts && k < g.size(); ++k) grads[k] = g[k];
    std::array<Tensor, kOuts> saved_outs;
    for (size_t k = 0; k < kOuts; ++k)
      if (kSaved[kTensors + k]) saved_outs[k] = n.saved(kSlot[kTensors + k]);
    if constexpr (D::kGrouped) {
      std::array<bool, kEdges> need{};
      for (size_t e = 0; e < kEdges; ++e) need[e] = autograd::task_should_compute_output(n, e);
      autograd::variable_list all(
          bound_backward(n, need, grads, saved_outs, std::index_sequence_for<Args...>{}));
      all.resize(kEdges);
      for (size_t e = 0; e < kEdges; ++e)
        if (!need[e]) all[e] = Tensor();
      return all;
    } else {
      std::array<bool, kTensors> need{};
      for (size_t t = 0; t < kTensors; ++t)
        need[t] = kDiff[t] && autograd::task_should_compute_output(n, kEdge[t]);
      autograd::variable_list all =
          bound_backward(n, need, grads, saved_outs, std::index_sequence_for<Args...>{});
      if constexpr (kEdges == kTensors) {
        return all;
      } else {
        autograd::variable_list edge_grads;
        edge_grads.reserve(kEdges);
        for (size_t t = 0; t < kTensors; ++t)
          if (kDiff[t]) edge_grads.push_back(std::move(all[t]));
        return edge_grads;
      }
    }
  }

  // Calls D::backward with every forward argument: saved tensors unpacked, the rest as kept.
  template <class Need, size_t... I>
  static autograd::variable_list bound_backward(DerivNode& n, const Need& need,
                                                const std::array<Tensor, kOuts>& grads,
                                                const std::array<Tensor, kOuts>& outs,
                                                std::index_sequence<I...>) {
    std::array<IntArrayRef, kArgs> arg_sizes{}, arg_strides{};
    for (size_t i = 0; i < kArgs; ++i) {
      if (!kIsTensor[i]) continue;
      size_t s = kGeometryAt[kTensorOf[i]], st = kGeometryAt[kTensors + kTensorOf[i]];
      if (s != kNone) arg_sizes[i] = n.geometry[s];
      if (st != kNone) arg_strides[i] = n.geometry[st];
    }
    return D::backward(need, grads, outs, arg_sizes, arg_strides, bound<I>(n)...);
  }
  template <size_t I>
  static decltype(auto) bound(DerivNode& n) {
    using T = arg_t<I>;
    constexpr size_t j = kTensorOf[I];
    if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) {
      if constexpr (kSaved[j]) return n.saved(kSlot[j]);
      else return Tensor();
    } else if constexpr (is_tensor_arg<T>) {
      if constexpr (kSaved[j]) {
        Tensor t = n.saved(kSlot[j]);
        return t.defined() ? std::optional<Tensor>(t) : std::optional<Tensor>();
      } else {
        return std::optional<Tensor>();
      }
    } else {
      return Kept::template get<I>(n.kept);
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

#define EMBER_DERIV_GRAD_NAME(i, name) grad_##name
#define EMBER_DERIV_STRIDES_NAME(i, name) name##_strides

/// Defines and registers the Autograd kernel of `decl` from its formulas; see Note [Derivatives].
#define EMBER_DERIVATIVE(decl, node, names, ...)                                               \
  EMBER_DERIVATIVE_(EMBER_CONCAT(ember_derivative_, __COUNTER__), decl, node, names, (result), \
                    false, (), 0, EMBER_DERIV_PER_INPUT(__VA_ARGS__), __VA_ARGS__)
/// The same for an op that returns a tuple: `outs` names its outputs; formulas may name them
/// and their gradients (`grad_<output>`; `grad` is the first output's).
#define EMBER_DERIVATIVE_OUTPUTS(decl, node, names, outs, ...)                                    \
  EMBER_DERIVATIVE_(EMBER_CONCAT(ember_derivative_, __COUNTER__), decl, node, names, outs, false, \
                    (), 0, EMBER_DERIV_PER_INPUT(__VA_ARGS__), __VA_ARGS__)
/// One formula that returns the gradients of the tensor arguments `wrt` at once (a tuple or a
/// variable_list, in the order of `wrt`); `need[k]` says whether the k-th one is needed.
#define EMBER_DERIVATIVE_GROUPED(decl, node, names, outs, wrt, formula)                          \
  EMBER_DERIVATIVE_(EMBER_CONCAT(ember_derivative_, __COUNTER__), decl, node, names, outs, true, \
                    wrt, EMBER_DERIV_NARGS(EMBER_DERIV_UNPAREN(wrt)),                            \
                    ::ember::derivative_detail::as_list(formula), formula)
#define EMBER_DERIV_PER_INPUT(...) \
  ::ember::autograd::variable_list { EMBER_DERIV_EACH(EMBER_DERIV_GRAD, __VA_ARGS__) }
#define EMBER_DERIVATIVE_(D, decl, node_name, names, outs, grouped, wrt, wrt_count, body, ...)     \
  namespace {                                                                                      \
  struct D {                                                                                       \
    static constexpr std::string_view kNames = #names;                                             \
    static constexpr std::string_view kOutNames = #outs;                                           \
    static constexpr std::string_view kWrt = #wrt;                                                 \
    static constexpr size_t kWrtCount = wrt_count;                                                 \
    static constexpr bool kGrouped = grouped;                                                      \
    static constexpr std::array kFormulas{EMBER_DERIV_EACH(EMBER_DERIV_TEXT, __VA_ARGS__)};        \
    template <class... A>                                                                          \
    static const char* node(const A&... args) {                                                    \
      [[maybe_unused]] const auto& [EMBER_DERIV_UNPAREN(names)] = std::tie(args...);               \
      return node_name;                                                                            \
    }                                                                                              \
    template <class Need, class Outs, class... Bound>                                              \
    static ::ember::autograd::variable_list backward(const Need& need, const Outs& grads,          \
                                                     const Outs& outputs, const auto& sizes,       \
                                                     const auto& strides, const Bound&... bound) { \
      [[maybe_unused]] const ::ember::Tensor& grad = grads[0];                                     \
      [[maybe_unused]] const auto& [EMBER_DERIV_EACH(EMBER_DERIV_GRAD_NAME,                        \
                                                     EMBER_DERIV_UNPAREN(outs))] = grads;          \
      [[maybe_unused]] const auto& [EMBER_DERIV_UNPAREN(outs)] = outputs;                          \
      [[maybe_unused]] const auto& [EMBER_DERIV_UNPAREN(names)] = std::tie(bound...);              \
      [[maybe_unused]] const auto& [EMBER_DERIV_EACH(EMBER_DERIV_SIZES_NAME,                       \
                                                     EMBER_DERIV_UNPAREN(names))] = sizes;         \
      [[maybe_unused]] const auto& [EMBER_DERIV_EACH(EMBER_DERIV_STRIDES_NAME,                     \
                                                     EMBER_DERIV_UNPAREN(names))] = strides;       \
      (void)need;                                                                                  \
      return body;                                                                                 \
    }                                                                                              \
  };                                                                                               \
  EMBER_REGISTER_KERNEL(                                                                           \
      decl, Autograd,                                                                              \
      (&::ember::derivative_detail::Autograd<std::decay_t<decltype(decl)>, D>::run));              \
  }

/// Registers the in-place op `inplace` with the derivative of its out-of-place twin `decl`.
#define EMBER_INPLACE_DERIVATIVE(inplace, decl)                                      \
  EMBER_REGISTER_KERNEL(                                                             \
      inplace, Autograd,                                                             \
      (&::ember::derivative_detail::InplaceAutograd<std::decay_t<decltype(inplace)>, \
                                                    std::decay_t<decltype(decl)>>::run))
