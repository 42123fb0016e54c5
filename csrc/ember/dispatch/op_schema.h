#pragma once
// Operator declarations: one typed constant per dispatcher operator. See Note [Op schemas].
//
// Note [Op schemas]
// Every operator the dispatcher routes is declared once, in its family header under schema/, as
// a constant of its own type:
//   EMBER_DECLARE_OP(add, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
//                    Tensor(const Tensor&, const Tensor&, const Scalar&));
// The constant carries the schema string in torch's grammar (its name is the text before '('),
// and the C++ signature of every kernel of the op. Callers (`op::add.call(a, b, 1)`), kernels
// (`EMBER_REGISTER_KERNEL(op::add, CPU, add_kernel)`) and the registry all name the constant, so a
// misspelt op is a compile error, a kernel of another signature fails a static_assert, and the
// schema string itself is checked against the signature at compile time (argument and return
// types, in the order written). The registry therefore lists every op with a schema that matches
// the code: what graph capture, ember.ops and custom ops build on.
// A schema follows torch's where ember's op has torch's arguments (an `int[]` may stand for
// torch's `int[1]?`, a `float` for its `Scalar`). Where ember's kernel takes other arguments than
// torch's op of that name, the op is ember's own variant and says so with the overload name
// `ember` (`_softmax.ember(Tensor self, int dim) -> Tensor`, the fused activations
// `gelu.ember(Tensor self, float p0, float p1, float p2)`); ember's private ops (`_rnn_layer`)
// use names torch does not have.
#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

class Generator;

namespace schema_detail {

// The schema spelling of a C++ argument type; an unlisted type is a compile error.
template <class T>
struct arg_type;
#define EMBER_SCHEMA_TYPE(cpp, text)                \
  template <>                                       \
  struct arg_type<cpp> {                            \
    static constexpr std::string_view value = text; \
  }
EMBER_SCHEMA_TYPE(const Tensor&, "Tensor");
EMBER_SCHEMA_TYPE(Tensor, "Tensor");
EMBER_SCHEMA_TYPE(Tensor&, "Tensor!");
EMBER_SCHEMA_TYPE(const std::optional<Tensor>&, "Tensor?");
EMBER_SCHEMA_TYPE(std::optional<Tensor>, "Tensor?");
EMBER_SCHEMA_TYPE(TensorList, "Tensor[]");
EMBER_SCHEMA_TYPE(const std::vector<Tensor>&, "Tensor[]");
EMBER_SCHEMA_TYPE(std::vector<Tensor>, "Tensor[]");
EMBER_SCHEMA_TYPE(const std::vector<std::optional<Tensor>>&, "Tensor?[]");
EMBER_SCHEMA_TYPE(const Scalar&, "Scalar");
EMBER_SCHEMA_TYPE(Scalar, "Scalar");
EMBER_SCHEMA_TYPE(const std::optional<Scalar>&, "Scalar?");
EMBER_SCHEMA_TYPE(int64_t, "int");
EMBER_SCHEMA_TYPE(std::optional<int64_t>, "int?");
EMBER_SCHEMA_TYPE(IntArrayRef, "int[]");
EMBER_SCHEMA_TYPE(std::optional<IntArrayRef>, "int[]?");
EMBER_SCHEMA_TYPE(double, "float");
EMBER_SCHEMA_TYPE(std::optional<double>, "float?");
EMBER_SCHEMA_TYPE(bool, "bool");
EMBER_SCHEMA_TYPE(std::optional<bool>, "bool?");
EMBER_SCHEMA_TYPE(const std::string&, "str");
EMBER_SCHEMA_TYPE(std::string_view, "str");
EMBER_SCHEMA_TYPE(std::optional<std::string>, "str?");
EMBER_SCHEMA_TYPE(const std::optional<std::string>&, "str?");
EMBER_SCHEMA_TYPE(ScalarType, "ScalarType");
EMBER_SCHEMA_TYPE(std::optional<ScalarType>, "ScalarType?");
EMBER_SCHEMA_TYPE(const std::shared_ptr<Generator>&, "Generator?");
#undef EMBER_SCHEMA_TYPE
template <size_t N>
struct arg_type<std::array<bool, N>> {
  static constexpr std::string_view value = "bool[]";
};

// The schema spellings of a C++ return type: one per returned value.
template <class R>
struct return_types {
  static constexpr std::array<std::string_view, 1> value{arg_type<R>::value};
};
template <>
struct return_types<void> {
  static constexpr std::array<std::string_view, 0> value{};
};
template <class... Ts>
struct return_types<std::tuple<Ts...>> {
  static constexpr std::array<std::string_view, sizeof...(Ts)> value{arg_type<Ts>::value...};
};

constexpr std::string_view trim(std::string_view s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
  while (!s.empty() && s.back() == ' ') s.remove_suffix(1);
  return s;
}

// The type of one "Type name=default" item, normalized: alias sets are dropped but a write
// ('!') is kept ("Tensor(a!)" -> "Tensor!"), list sizes are dropped ("int[2]" -> "int[]") and
// SymInt reads as int.
struct Normalized {
  char text[24] = {};
  size_t size = 0;
  constexpr bool operator==(std::string_view s) const { return std::string_view(text, size) == s; }
};
constexpr Normalized normalize(std::string_view item) {
  item = trim(item);
  size_t end = item.find(' ');
  std::string_view type = item.substr(0, end);
  Normalized out;
  auto put = [&](char c) {
    if (out.size < sizeof(out.text)) out.text[out.size++] = c;
  };
  if (type.starts_with("SymInt")) {
    for (char c : std::string_view("int")) put(c);
    type.remove_prefix(6);
  }
  bool writes = false;
  for (size_t i = 0; i < type.size(); ++i) {
    char c = type[i];
    if (c == '(') {  // an alias set, e.g. (a!) or (a)
      for (++i; i < type.size() && type[i] != ')'; ++i) writes = writes || type[i] == '!';
      continue;
    }
    if (c == '[') {  // a list, maybe sized
      put('[');
      while (i + 1 < type.size() && type[i + 1] != ']') ++i;
      continue;
    }
    put(c);
  }
  if (writes) {  // "Tensor(a!)" -> "Tensor!", "Tensor(a!)[]" does not occur
    put('!');
  }
  return out;
}

// Splits `s` at top-level commas (outside (), [] and quotes) and calls f on each piece.
template <class F>
constexpr void split_items(std::string_view s, F f) {
  int depth = 0;
  size_t start = 0;
  bool quoted = false;
  for (size_t i = 0; i <= s.size(); ++i) {
    char c = i < s.size() ? s[i] : ',';
    if (c == '"' || c == '\'') quoted = !quoted;
    if (quoted) continue;
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (c == ',' && depth == 0) {
      std::string_view item = trim(s.substr(start, i - start));
      if (!item.empty()) f(item);
      start = i + 1;
    }
  }
}

/// The op name of a schema: the text before '(' ("add.Tensor").
constexpr std::string_view schema_name(std::string_view schema) {
  return schema.substr(0, schema.find('('));
}

/// True if `schema`'s arguments and returns are spelled as the C++ signature's types.
template <size_t NA, size_t NR>
constexpr bool schema_matches(std::string_view schema, const std::array<std::string_view, NA>& args,
                              const std::array<std::string_view, NR>& rets) {
  size_t open = schema.find('('), arrow = schema.rfind("->");
  if (open == std::string_view::npos || arrow == std::string_view::npos) return false;
  size_t close = schema.rfind(')', arrow);
  if (close == std::string_view::npos || close < open) return false;
  bool ok = true;
  size_t n = 0;
  split_items(schema.substr(open + 1, close - open - 1), [&](std::string_view item) {
    if (item == "*") return;
    ok = ok && n < NA && normalize(item) == args[n];
    ++n;
  });
  if (!ok || n != NA) return false;
  std::string_view r = trim(schema.substr(arrow + 2));
  n = 0;
  if (r.starts_with('(') && r.ends_with(')')) r = r.substr(1, r.size() - 2);
  split_items(r, [&](std::string_view item) {
    ok = ok && n < NR && normalize(item) == rets[n];
    ++n;
  });
  return ok && n == NR;
}

template <class Sig>
struct signature;
template <class R, class... Args>
struct signature<R(Args...)> {
  static constexpr std::array<std::string_view, sizeof...(Args)> args{arg_type<Args>::value...};
  static constexpr auto rets = return_types<R>::value;
};

template <class Sig>
constexpr bool check(std::string_view schema) {
  return schema_matches(schema, signature<Sig>::args, signature<Sig>::rets);
}

}  // namespace schema_detail

template <class Sig>
class TypedOperator;
enum class DispatchKey : uint8_t;

/// The base of every op declaration (see EMBER_DECLARE_OP): the typed handle to the op's
/// dispatcher entry, looked up once.
template <class Decl, class Sig>
struct OpDecl;
template <class Decl, class R, class... Args>
struct OpDecl<Decl, R(Args...)> {
  using Signature = R(Args...);
  static const TypedOperator<Signature>& handle();
  /// Dispatches a call (autograd, then the backend of the arguments).
  R call(Args... args) const { return handle().call(std::forward<Args>(args)...); }
  /// Calls the kernel of one key (autograd kernels reach the backend through this).
  R redispatch(DispatchKey k, Args... args) const {
    return handle().redispatch(k, std::forward<Args>(args)...);
  }
};

/// `a` if Cond, else `b`: picks one of two op declarations in a template over a flag.
template <bool Cond, class A, class B>
constexpr const auto& select_op(const A& a, const B& b) {
  if constexpr (Cond) return a;
  else return b;
}

}  // namespace ember

/// Declares operator constant `id` (in the enclosing namespace, by convention ember::op) with a
/// schema string in torch's grammar and its C++ signature; see Note [Op schemas].
#define EMBER_DECLARE_OP(id, schema_text, ...)                                            \
  struct id##_decl : ::ember::OpDecl<id##_decl, __VA_ARGS__> {                            \
    static constexpr std::string_view schema = schema_text;                               \
    static constexpr std::string_view name = ::ember::schema_detail::schema_name(schema); \
  };                                                                                      \
  static_assert(::ember::schema_detail::check<__VA_ARGS__>(schema_text),                  \
                "the schema of op '" #id "' does not match its C++ signature");           \
  inline constexpr id##_decl id {}
