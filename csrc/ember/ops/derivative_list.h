#pragma once
// Derivatives of ops over lists of tensors, from formulas alone. See Note [List derivatives].
//
// Note [List derivatives]
// EMBER_DERIVATIVE_LIST is EMBER_DERIVATIVE (Note [Derivatives] in ops/derivative.h) for an op
// with a list argument, whose number of edges and saved tensors is known only per call:
//   EMBER_DERIVATIVE_LIST(op::cat, "CatBackward0", (tensors, dim),
//                         cat_backward(grad, tensors_sizes, dim));
// names the op, torch's node name, every argument, and one formula per tensor or list argument.
// - A `Tensor[]` argument gets one edge per element; its formula returns a variable_list with
//   one gradient per element (undefined for none).
// - A `Tensor?[]` argument (the indices of index/index_put) is not differentiable; a formula that
//   names it gets it back from saved tensors (version-checked like any saved tensor), with its
//   empty entries where they were.
// - `<arg>_sizes` is an input's sizes (IntArrayRef) or a list's elements' sizes
//   (std::vector<DimVector>), kept without saving the tensors.
// As with EMBER_DERIVATIVE, only what a formula names is kept, a tensor is saved only when a
// gradient that reads it will be computed (Note [Saving for needed grads]), only the needed
// gradients are computed, and non-tensor arguments the formulas name are kept by value.
#include <tuple>
#include <utility>
#include <vector>

#include "ember/ops/derivative.h"

namespace ember::derivative_detail {

template <class T>
constexpr bool is_optional_list_arg =
    std::is_same_v<std::decay_t<T>, std::vector<std::optional<Tensor>>>;
template <class T>
constexpr bool is_list_arg =
    std::is_same_v<std::decay_t<T>, TensorList> ||
    std::is_same_v<std::decay_t<T>, std::vector<Tensor>> || is_optional_list_arg<T>;
template <class T>
constexpr bool is_input_arg = is_tensor_arg<T> || is_list_arg<T>;

// The elements of a tensor or list argument (an empty optional as an undefined tensor).
template <class T>
void append_elements(const T& v, std::vector<Tensor>& out) {
  if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) {
    out.push_back(v);
  } else if constexpr (is_tensor_arg<T>) {
    out.push_back(as_tensor(v));
  } else if constexpr (is_optional_list_arg<T>) {
    for (const auto& t : v) out.push_back(t ? *t : Tensor());
  } else {
    for (const Tensor& t : v) out.push_back(t);
  }
}

// One formula's gradients: a list argument's, or a tensor argument's as a list of one.
inline autograd::variable_list grads_of(autograd::variable_list v) { return v; }
inline autograd::variable_list grads_of(const Tensor& t) { return {t}; }

/// The Autograd kernel of `Decl`, an op returning one tensor with list arguments, with the
/// formulas of `D` (written by EMBER_DERIVATIVE_LIST).
template <class Decl, class D, class Sig = typename Decl::Signature>
struct ListAutograd;
template <class Decl, class D, class... Args>
struct ListAutograd<Decl, D, Tensor(Args...)> {
  static constexpr size_t kArgs = sizeof...(Args);
  static constexpr std::array<bool, kArgs> kIsInput{is_input_arg<Args>...};
  static constexpr std::array<bool, kArgs> kIsOptionalList{is_optional_list_arg<Args>...};
  static constexpr size_t kInputs = (size_t(is_input_arg<Args>) + ... + 0);
  static constexpr size_t kFormulas = D::kFormulas.size();
  static_assert(kFormulas == kInputs,
                "EMBER_DERIVATIVE_LIST needs one formula per tensor or list argument");
  static constexpr auto kNames = split_names<kArgs>(D::kNames);
  static constexpr auto kInputOf = [] {
    std::array<size_t, kArgs> s{};
    for (size_t i = 0, j = 0; i < kArgs; ++i) s[i] = kIsInput[i] ? j++ : 0;
    return s;
  }();
  static constexpr auto kInputName = [] {
    std::array<std::string_view, kInputs> n{};
    for (size_t i = 0; i < kArgs; ++i)
      if (kIsInput[i]) n[kInputOf[i]] = kNames[i];
    return n;
  }();
  static constexpr auto kOptionalList = [] {
    std::array<bool, kInputs> o{};
    for (size_t i = 0; i < kArgs; ++i)
      if (kIsInput[i]) o[kInputOf[i]] = kIsOptionalList[i];
    return o;
  }();
  // kDiff[j]: input j gets edges; kReads[f][j]: formula f names input j (j == kInputs: result);
  // kSizes[j]: some formula names `<input j>_sizes`.
  static constexpr auto kDiff = [] {
    std::array<bool, kInputs> d{};
    for (size_t j = 0; j < kInputs; ++j) d[j] = D::kFormulas[j] != "not_differentiable()";
    return d;
  }();
  static constexpr auto kReads = [] {
    std::array<std::array<bool, kInputs + 1>, kFormulas> r{};
    for (size_t f = 0; f < kFormulas; ++f) {
      for (size_t j = 0; j < kInputs; ++j) r[f][j] = formula_uses(D::kFormulas[f], kInputName[j]);
      r[f][kInputs] = formula_uses(D::kFormulas[f], "result");
    }
    return r;
  }();
  static constexpr auto kSaved = [] {
    std::array<bool, kInputs + 1> s{};
    for (size_t f = 0; f < kFormulas; ++f)
      for (size_t j = 0; j <= kInputs; ++j) s[j] = s[j] || kReads[f][j];
    return s;
  }();
  static constexpr auto kSizes = [] {
    std::array<bool, kInputs> s{};
    for (size_t j = 0; j < kInputs; ++j)
      for (std::string_view f : D::kFormulas)
        s[j] = s[j] || formula_uses(f, kInputName[j], "_sizes");
    return s;
  }();
  using Kept = KeptArgs<D, kIsInput, Args...>;
  template <size_t I>
  using arg_t = typename Kept::template arg_t<I>;

  // The node: what the formulas keep, and per input the number of its elements, where its saved
  // tensors start, which of an optional list's entries were given, and its sizes if named.
  struct ListNode final : autograd::FunctionNode {
    template <size_t... I>
    ListNode(const char* name, std::index_sequence<I...> seq, const Args&... args)
        : FunctionNode(name, &ListNode::call), kept(Kept::make(seq, args...)) {}
    static autograd::variable_list call(FunctionNode& n, const autograd::variable_list& g) {
      return backward(static_cast<ListNode&>(n), g);
    }
    typename Kept::Type kept;
    std::array<size_t, kInputs> count{};
    std::array<size_t, kInputs + 1> slot{};
    std::array<std::vector<char>, kInputs> given;
    std::array<std::vector<DimVector>, kInputs> sizes;
  };

  static Tensor run(Args... args) {
    Tensor out = Decl{}.redispatch(backend_of(args...), args...);
    std::array<std::vector<Tensor>, kInputs> in;
    size_t j = 0;
    auto gather = [&](const auto& a) {
      if constexpr (is_input_arg<decltype(a)>) append_elements(a, in[j++]);
    };
    (gather(args), ...);
    std::vector<Tensor> edges;
    for (size_t k = 0; k < kInputs; ++k)
      if (kDiff[k]) edges.insert(edges.end(), in[k].begin(), in[k].end());
    if (!autograd::any_requires_grad(TensorList(edges))) return out;
    auto node =
        std::make_shared<ListNode>(D::node(args...), std::index_sequence_for<Args...>{}, args...);
    for (size_t k = 0; k < kInputs; ++k) {
      node->count[k] = in[k].size();
      if (kOptionalList[k])
        for (const Tensor& t : in[k]) node->given[k].push_back(t.defined());
      if (kSizes[k])
        for (const Tensor& t : in[k])
          node->sizes[k].push_back(t.defined() ? DimVector(t.sizes()) : DimVector());
    }
    autograd::collect_next_edges(*node, TensorList(edges));
    node->num_outputs = 1;
    // Integer and bool outputs never carry gradients.
    if (out.defined() && is_differentiable_type(out.dtype())) autograd::set_history(out, node, 0);
    // One slot per element (an optional list: per given entry), so slots line up on unpacking.
    for (size_t k = 0; k < kInputs; ++k) {
      node->slot[k] = node->num_saved();
      if (!kSaved[k]) continue;
      const bool need = needed(*node, k);
      for (const Tensor& t : in[k])
        if (!kOptionalList[k] || t.defined()) node->save(need ? t : Tensor());
    }
    node->slot[kInputs] = node->num_saved();
    if (kSaved[kInputs]) node->save(needed(*node, kInputs) ? out : Tensor(), true);
    return out;
  }

 private:
  // The first edge of input k (edges run over the differentiable inputs' elements in order).
  static size_t first_edge(const ListNode& n, size_t k) {
    size_t e = 0;
    for (size_t i = 0; i < k; ++i)
      if (kDiff[i]) e += n.count[i];
    return e;
  }
  static bool input_needed(const ListNode& n, size_t f) {
    if (!kDiff[f]) return false;
    for (size_t e = first_edge(n, f), end = e + n.count[f]; e < end; ++e)
      if (n.needs_input_grad(e)) return true;
    return false;
  }
  // True if a gradient this node will compute reads input j (j == kInputs: the result).
  static bool needed(const ListNode& n, size_t j) {
    for (size_t f = 0; f < kFormulas; ++f)
      if (kReads[f][j] && input_needed(n, f)) return true;
    return false;
  }

  static autograd::variable_list backward(ListNode& n, const autograd::variable_list& g) {
    std::array<bool, kInputs> need{};
    for (size_t f = 0; f < kInputs; ++f) {
      if (!kDiff[f]) continue;
      for (size_t e = first_edge(n, f), end = e + n.count[f]; e < end; ++e)
        need[f] = need[f] || autograd::task_should_compute_output(n, e);
    }
    std::array<Tensor, 1> grads{g.empty() ? Tensor() : g[0]};
    std::array<Tensor, 1> outs{kSaved[kInputs] ? n.saved(n.slot[kInputs]) : Tensor()};
    std::vector<autograd::variable_list> per_input =
        bound_backward(n, need, grads, outs, std::index_sequence_for<Args...>{});
    autograd::variable_list edge_grads;
    for (size_t f = 0; f < kInputs; ++f) {
      if (!kDiff[f]) continue;
      autograd::variable_list& gs = per_input[f];
      gs.resize(n.count[f]);
      for (Tensor& t : gs) edge_grads.push_back(need[f] ? std::move(t) : Tensor());
    }
    return edge_grads;
  }

  template <size_t... I>
  static std::vector<autograd::variable_list> bound_backward(ListNode& n,
                                                             const std::array<bool, kInputs>& need,
                                                             const std::array<Tensor, 1>& grads,
                                                             const std::array<Tensor, 1>& outs,
                                                             std::index_sequence<I...>) {
    std::tuple<decltype(sizes_of<I>(n))...> sizes(sizes_of<I>(n)...);
    return D::backward(need, grads, outs, sizes, bound<I>(n)...);
  }
  // What `<arg>_sizes` reads for argument I.
  template <size_t I>
  static decltype(auto) sizes_of(const ListNode& n) {
    using T = arg_t<I>;
    if constexpr (is_list_arg<T>) {
      return (n.sizes[kInputOf[I]]);  // const std::vector<DimVector>&
    } else if constexpr (is_tensor_arg<T>) {
      const auto& s = n.sizes[kInputOf[I]];
      return s.empty() ? IntArrayRef() : IntArrayRef(s[0]);
    } else {
      return std::monostate{};
    }
  }
  // Argument I as a formula sees it: saved tensors unpacked, the rest as kept.
  template <size_t I>
  static auto bound(ListNode& n) {
    using T = arg_t<I>;
    constexpr size_t k = kInputOf[I];
    if constexpr (is_optional_list_arg<T>) {
      std::vector<std::optional<Tensor>> v;
      size_t s = n.slot[k];
      for (char given : n.given[k])
        v.push_back(given && kSaved[k] ? std::optional<Tensor>(n.saved(s++)) : std::nullopt);
      return v;
    } else if constexpr (is_list_arg<T>) {
      std::vector<Tensor> v;
      if constexpr (kSaved[k])
        for (size_t s = n.slot[k]; s < n.slot[k + 1]; ++s) v.push_back(n.saved(s));
      return v;
    } else if constexpr (std::is_same_v<std::decay_t<T>, Tensor>) {
      if constexpr (kSaved[k]) return n.saved(n.slot[k]);
      else return Tensor();
    } else if constexpr (is_tensor_arg<T>) {
      if constexpr (kSaved[k]) {
        Tensor t = n.slot[k] < n.slot[k + 1] ? n.saved(n.slot[k]) : Tensor();
        return t.defined() ? std::optional<Tensor>(t) : std::optional<Tensor>();
      } else {
        return std::optional<Tensor>();
      }
    } else {
      return Kept::template get<I>(n.kept);
    }
  }
};

}  // namespace ember::derivative_detail

#define EMBER_DERIV_LIST_GRAD(i, f) \
  (need[i] ? ::ember::derivative_detail::grads_of(f) : ::ember::autograd::variable_list())

/// Defines and registers the Autograd kernel of `decl`, an op with a list argument, from its
/// formulas; see Note [List derivatives].
#define EMBER_DERIVATIVE_LIST(decl, node, names, ...)                                     \
  EMBER_DERIVATIVE_LIST_(EMBER_CONCAT(ember_derivative_, __COUNTER__), decl, node, names, \
                         __VA_ARGS__)
#define EMBER_DERIVATIVE_LIST_(D, decl, node_name, names, ...)                              \
  namespace {                                                                               \
  struct D {                                                                                \
    static constexpr std::string_view kNames = #names;                                      \
    static constexpr std::array kFormulas{EMBER_DERIV_EACH(EMBER_DERIV_TEXT, __VA_ARGS__)}; \
    template <class... A>                                                                   \
    static const char* node(const A&... args) {                                             \
      [[maybe_unused]] const auto& [EMBER_DERIV_UNPAREN(names)] = std::tie(args...);        \
      return node_name;                                                                     \
    }                                                                                       \
    template <class Need, class Outs, class Sizes, class... Bound>                          \
    static std::vector<::ember::autograd::variable_list> backward(const Need& need,         \
                                                                  const Outs& grads,        \
                                                                  const Outs& outputs,      \
                                                                  const Sizes& sizes,       \
                                                                  const Bound&... bound) {  \
      [[maybe_unused]] const ::ember::Tensor& grad = grads[0];                              \
      [[maybe_unused]] const ::ember::Tensor& result = outputs[0];                          \
      [[maybe_unused]] const auto& [EMBER_DERIV_UNPAREN(names)] = std::tie(bound...);       \
      [[maybe_unused]] const auto& [EMBER_DERIV_EACH(EMBER_DERIV_SIZES_NAME,                \
                                                     EMBER_DERIV_UNPAREN(names))] = sizes;  \
      return {EMBER_DERIV_EACH(EMBER_DERIV_LIST_GRAD, __VA_ARGS__)};                        \
    }                                                                                       \
  };                                                                                        \
  EMBER_REGISTER_KERNEL(                                                                    \
      decl, Autograd,                                                                       \
      (&::ember::derivative_detail::ListAutograd<std::decay_t<decltype(decl)>, D>::run));   \
  }
