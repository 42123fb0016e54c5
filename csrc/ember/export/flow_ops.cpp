// The runtime ops behind control flow in exported programs: comparisons, logical and bitwise
// ops, where, item (torch's _local_scalar_dense), _assert_scalar, var and cond (a branch picked at
// run time, each branch a block of its own). Numbers (sizes, item()'s results) compare as Python
// numbers; anything with a tensor is a tensor op, as in program.cpp's arithmetic.
#include "ember/autograd/grad_mode.h"
#include "ember/export/interp.h"

namespace ember::export_::detail {

namespace {

bool numeric(const RValue& v) {
  return v.kind == RValue::Kind::Int || v.kind == RValue::Kind::Double ||
         v.kind == RValue::Kind::Bool;
}

RValue of_bool(bool b) {
  RValue v;
  v.kind = RValue::Kind::Bool;
  v.b = b;
  return v;
}

// A comparison of two numbers (ints exactly, else as doubles) or of tensors and numbers.
template <class Cmp>
RValue compare(Args& a, Tensor (*op)(const Tensor&, const Tensor&), Cmp cmp) {
  if (numeric(a.v[0]) && numeric(a.v[1])) {
    bool ints = a.v[0].kind != RValue::Kind::Double && a.v[1].kind != RValue::Kind::Double;
    if (ints) return of_bool(cmp(a.integer(0), a.integer(1)));
    return of_bool(cmp(a.number(0), a.number(1)));
  }
  return of_tensor(op(a.operand(0), a.operand(1)));
}

// A logical op: Python truth of two numbers, else the tensor op.
template <class Fn>
RValue logical(Args& a, Tensor (*op)(const Tensor&, const Tensor&), Fn fn) {
  if (numeric(a.v[0]) && numeric(a.v[1])) return of_bool(fn(a.number(0) != 0, a.number(1) != 0));
  return of_tensor(op(a.operand(0), a.operand(1)));
}

// A bitwise op (Python's &, |, ^): on bools a bool, on ints an int, else the tensor op.
template <class Fn>
RValue bitwise(Args& a, Tensor (*op)(const Tensor&, const Tensor&), Fn fn) {
  const RValue &x = a.v[0], &y = a.v[1];
  if (x.kind == RValue::Kind::Bool && y.kind == RValue::Kind::Bool) return of_bool(fn(x.b, y.b));
  if ((x.kind == RValue::Kind::Int || x.kind == RValue::Kind::Bool) &&
      (y.kind == RValue::Kind::Int || y.kind == RValue::Kind::Bool))
    return of_int(fn(a.integer(0), a.integer(1)));
  return of_tensor(op(a.operand(0), a.operand(1)));
}

// The truth of cond's predicate: a bool or number, or a one-element tensor.
bool predicate(Args& a) {
  const RValue& p = a.v[0];
  if (numeric(p)) return a.number(0) != 0;
  const Tensor& t = a.tensor(0);
  EMBER_CHECK(t.numel() == 1,
              "cond: expected pred to be a bool or a tensor with one element; got "
              "a tensor of shape ",
              t.sizes());
  return t.item().to_bool();
}

RValue item(Args& a) {
  const Tensor& t = a.tensor(0);
  EMBER_CHECK(t.numel() == 1, "item: a Tensor with ", t.numel(),
              " elements cannot be converted to Scalar");
  Scalar s = t.item();
  if (s.is_bool()) return of_bool(s.to_bool());
  if (s.is_floating_point()) return of_double(s.to_double());
  return of_int(s.to_long());
}

// torch's aten._assert_scalar: a runtime assertion of the exported program (torch._check on a
// number read from data), raising its message as torch's does.
RValue assert_scalar(Args& a) {
  if (!predicate(a)) EMBER_ERROR(ErrorKind::Runtime, a.str(1));
  return RValue{};
}

RValue cond(Args& a) {
  bool taken = predicate(a);
  const RValue& branch = a.v[taken ? 1 : 2];
  EMBER_CHECK(branch.kind == RValue::Kind::Graph && branch.graph, "cond: expected a graph branch");
  std::vector<RValue> operands = a.v[3].items;
  std::vector<RValue> out = run_block(*branch.graph, std::move(operands));
  if (a.boolean(4)) {
    EMBER_CHECK(out.size() == 1, "cond: expected the branch to return one value; got ", out.size());
    return out[0];
  }
  return of_list(std::move(out));
}

}  // namespace

const std::vector<OpDef>& flow_op_table() {
  static const std::vector<OpDef> table = {
      {"eq", "aa", [](Args& a) { return compare(a, eq, [](auto x, auto y) { return x == y; }); }},
      {"ne", "aa", [](Args& a) { return compare(a, ne, [](auto x, auto y) { return x != y; }); }},
      {"lt", "aa", [](Args& a) { return compare(a, lt, [](auto x, auto y) { return x < y; }); }},
      {"le", "aa", [](Args& a) { return compare(a, le, [](auto x, auto y) { return x <= y; }); }},
      {"gt", "aa", [](Args& a) { return compare(a, gt, [](auto x, auto y) { return x > y; }); }},
      {"ge", "aa", [](Args& a) { return compare(a, ge, [](auto x, auto y) { return x >= y; }); }},
      {"logical_and", "aa",
       [](Args& a) { return logical(a, logical_and, [](bool x, bool y) { return x && y; }); }},
      {"logical_or", "aa",
       [](Args& a) { return logical(a, logical_or, [](bool x, bool y) { return x || y; }); }},
      {"logical_xor", "aa",
       [](Args& a) { return logical(a, logical_xor, [](bool x, bool y) { return x != y; }); }},
      {"logical_not", "a",
       [](Args& a) {
         if (numeric(a.v[0])) return of_bool(a.number(0) == 0);
         return of_tensor(logical_not(a.tensor(0)));
       }},
      {"bitwise_and", "aa",
       [](Args& a) { return bitwise(a, bitwise_and, [](auto x, auto y) { return x & y; }); }},
      {"bitwise_or", "aa",
       [](Args& a) { return bitwise(a, bitwise_or, [](auto x, auto y) { return x | y; }); }},
      {"bitwise_xor", "aa",
       [](Args& a) { return bitwise(a, bitwise_xor, [](auto x, auto y) { return x ^ y; }); }},
      {"bitwise_not", "a",
       [](Args& a) {
         if (a.v[0].kind == RValue::Kind::Int) return of_int(~a.v[0].i);
         return of_tensor(~a.tensor(0));
       }},
      {"where", "Taa",
       [](Args& a) { return of_tensor(where(a.tensor(0), a.operand(1), a.operand(2))); }},
      {"item", "T", item},
      {"_assert_scalar", "as", assert_scalar},
      // var(x, dims ([] = all), correction, keepdim): a train-mode BatchNorm's running_var
      {"var", "TIgb",
       [](Args& a) {
         std::vector<int64_t> dims = a.ints(1);
         std::optional<std::vector<int64_t>> dim;
         if (!dims.empty()) dim = dims;
         return of_tensor(var(a.tensor(0), dim, a.opt_number(2), a.boolean(3)));
       }},
      {"cond", "aGGLb", cond},
  };
  return table;
}

}  // namespace ember::export_::detail
