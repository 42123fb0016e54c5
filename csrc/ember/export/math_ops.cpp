// The runtime ops for elementwise math, the *_like factories, clamp and the reductions with an
// index (max/min over a dim, argmax/argmin) of exported programs: what torch's documentation
// models call beyond layers (x.sin() + x.cos(), torch.zeros_like(x), x.clamp(0, 1), x.max(1)).
#include "ember/export/interp.h"

namespace ember::export_::detail {

namespace {

RValue unary(Args& a, Tensor (*f)(const Tensor&)) { return of_tensor(f(a.tensor(0))); }

// An optional dtype argument (None keeps the input's): the *_like factories' `dtype=`.
TensorOptions like_options(Args& a, size_t k) {
  if (a.v[k].kind == RValue::Kind::None) return {};
  if (a.v[k].kind != RValue::Kind::DType) a.bad(k, "a dtype or None");
  return TensorOptions().dtype(a.v[k].dtype);
}

Scalar number_scalar(Args& a, size_t k) {
  if (a.v[k].kind == RValue::Kind::Double) return Scalar(a.v[k].d);
  if (a.v[k].kind == RValue::Kind::Bool) return Scalar(a.v[k].b);
  return Scalar(a.integer(k));
}

std::optional<Scalar> opt_scalar(Args& a, size_t k) {
  if (a.v[k].kind == RValue::Kind::None) return std::nullopt;
  return number_scalar(a, k);
}

// max/min over a dim: (values, indices), the tuple Python indexes with getitem.
RValue with_indices(std::tuple<Tensor, Tensor> r) {
  return of_list({of_tensor(std::get<0>(r)), of_tensor(std::get<1>(r))});
}

}  // namespace

// clang-format off
#define EMBER_EXPORT_UNARY_MATH(_)                                                            \
  _(exp2) _(expm1) _(log2) _(log10) _(log1p) _(sin) _(cos) _(tan) _(asin) _(acos) _(atan)      \
  _(sinh) _(cosh) _(asinh) _(acosh) _(atanh) _(erfc) _(erfinv) _(reciprocal) _(sinc) _(sign)   \
  _(floor) _(ceil) _(trunc) _(frac) _(square) _(selu) _(softsign) _(logsigmoid)
// clang-format on

const std::vector<OpDef>& math_op_table() {
#define EMBER_EXPORT_UNARY_ROW(name) \
  {#name, "T", [](Args& a) { return unary(a, static_cast<Tensor (*)(const Tensor&)>(name)); }},
  static const std::vector<OpDef> table = {
      EMBER_EXPORT_UNARY_MATH(EMBER_EXPORT_UNARY_ROW)
      // round(x, decimals): decimals 0 is torch's round.default
      {"round", "Ti",
       [](Args& a) {
         int64_t decimals = a.integer(1);
         return of_tensor(decimals == 0 ? round(a.tensor(0)) : round(a.tensor(0), decimals));
       }},
      // zeros_like(x, dtype | None) ...: sizes (and dtype unless given) from x
      {"zeros_like", "TD",
       [](Args& a) { return of_tensor(zeros_like(a.tensor(0), like_options(a, 1))); }},
      {"ones_like", "TD",
       [](Args& a) { return of_tensor(ones_like(a.tensor(0), like_options(a, 1))); }},
      {"full_like", "TfD",
       [](Args& a) {
         return of_tensor(full_like(a.tensor(0), number_scalar(a, 1), like_options(a, 2)));
       }},
      // clamp(x, min | None, max | None) with number bounds; clamp_tensor with tensor bounds
      {"clamp", "Tgg",
       [](Args& a) { return of_tensor(clamp(a.tensor(0), opt_scalar(a, 1), opt_scalar(a, 2))); }},
      {"clamp_tensor", "TOO",
       [](Args& a) { return of_tensor(clamp(a.tensor(0), a.opt_tensor(1), a.opt_tensor(2))); }},
      {"minimum", "TT", [](Args& a) { return of_tensor(minimum(a.tensor(0), a.tensor(1))); }},
      {"maximum", "TT", [](Args& a) { return of_tensor(maximum(a.tensor(0), a.tensor(1))); }},
      {"atan2", "TT", [](Args& a) { return of_tensor(atan2(a.tensor(0), a.tensor(1))); }},
      // max_dim(x, dim, keepdim) -> [values, indices] (torch's max.dim); min_dim likewise
      {"max_dim", "Tib",
       [](Args& a) { return with_indices(max(a.tensor(0), a.integer(1), a.boolean(2))); }},
      {"min_dim", "Tib",
       [](Args& a) { return with_indices(min(a.tensor(0), a.integer(1), a.boolean(2))); }},
      // max/min over all elements (a 0-d tensor)
      {"max_all", "T", [](Args& a) { return of_tensor(max(a.tensor(0))); }},
      {"min_all", "T", [](Args& a) { return of_tensor(min(a.tensor(0))); }},
      {"argmax", "Tjb",
       [](Args& a) { return of_tensor(argmax(a.tensor(0), a.opt_int(1), a.boolean(2))); }},
      {"argmin", "Tjb",
       [](Args& a) { return of_tensor(argmin(a.tensor(0), a.opt_int(1), a.boolean(2))); }},
      {"amin", "TIb",
       [](Args& a) { return of_tensor(amin(a.tensor(0), a.ints(1), a.boolean(2))); }},
      // std(x, dims ([] = all), correction, keepdim), as var
      {"std", "TIgb",
       [](Args& a) {
         std::vector<int64_t> dims = a.ints(1);
         std::optional<std::vector<int64_t>> dim;
         if (!dims.empty()) dim = dims;
         return of_tensor(ember::std(a.tensor(0), dim, a.opt_number(2), a.boolean(3)));
       }},
      {"cumsum", "Ti", [](Args& a) { return of_tensor(cumsum(a.tensor(0), a.integer(1))); }},
      {"tril", "Ti", [](Args& a) { return of_tensor(tril(a.tensor(0), a.integer(1))); }},
      {"triu", "Ti", [](Args& a) { return of_tensor(triu(a.tensor(0), a.integer(1))); }},
  };
#undef EMBER_EXPORT_UNARY_ROW
  return table;
}

}  // namespace ember::export_::detail
