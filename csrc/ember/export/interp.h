#pragma once
// The interpreter's internals shared by program.cpp (loading, the op table, running) and
// flow_ops.cpp (comparisons, where, item, cond): runtime values, argument access for op
// handlers, op definitions and blocks (a graph or a cond branch). Not installed; not API.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/ops/ops.h"

namespace ember::export_::detail {

struct Block;

// A runtime value: what an argument or a node's result can be. A reference (Ref) appears only
// in parsed arguments, naming the slot that holds the value.
struct RValue {
  enum class Kind {
    None,
    Bool,
    Int,
    Double,
    Str,
    Tensor,
    List,
    Slice,
    Ellipsis,
    DType,
    Ref,
    Graph
  };
  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;  // Int, Ref (slot)
  double d = 0;
  std::string s;
  Tensor t;
  ScalarType dtype = ScalarType::Float;
  std::vector<RValue> items;           // List; Slice: start, stop, step
  std::shared_ptr<const Block> graph;  // Graph: a cond branch
};

inline const char* kind_name(RValue::Kind k) {
  switch (k) {
    case RValue::Kind::None:
      return "None";
    case RValue::Kind::Bool:
      return "bool";
    case RValue::Kind::Int:
      return "int";
    case RValue::Kind::Double:
      return "float";
    case RValue::Kind::Str:
      return "str";
    case RValue::Kind::Tensor:
      return "Tensor";
    case RValue::Kind::List:
      return "list";
    case RValue::Kind::Slice:
      return "slice";
    case RValue::Kind::Ellipsis:
      return "Ellipsis";
    case RValue::Kind::DType:
      return "dtype";
    case RValue::Kind::Ref:
      return "reference";
    case RValue::Kind::Graph:
      return "graph";
  }
  return "?";
}

inline RValue of_tensor(Tensor t) {
  RValue v;
  v.kind = RValue::Kind::Tensor;
  v.t = std::move(t);
  return v;
}
inline RValue of_int(int64_t i) {
  RValue v;
  v.kind = RValue::Kind::Int;
  v.i = i;
  return v;
}
inline RValue of_double(double d) {
  RValue v;
  v.kind = RValue::Kind::Double;
  v.d = d;
  return v;
}
inline RValue of_list(std::vector<RValue> items) {
  RValue v;
  v.kind = RValue::Kind::List;
  v.items = std::move(items);
  return v;
}
inline RValue of_tensors(const std::vector<Tensor>& ts) {
  std::vector<RValue> items;
  for (const auto& t : ts) items.push_back(of_tensor(t));
  return of_list(std::move(items));
}

inline std::optional<ScalarType> dtype_named(std::string_view name) {
  for (int k = 0; k < int(ScalarType::NumOptions); ++k)
    if (dtype_name(ScalarType(k)) == name) return ScalarType(k);
  return std::nullopt;
}

// ---- argument access for the op handlers (the op name goes into each message) ----

struct Args {
  const char* op;
  std::vector<RValue>& v;

  [[noreturn]] void bad(size_t k, const char* want) const {
    EMBER_ERROR(ErrorKind::Runtime, op, ": argument ", k, ": expected ", want, "; got ",
                kind_name(v[k].kind));
  }
  const Tensor& tensor(size_t k) const {
    if (v[k].kind != RValue::Kind::Tensor) bad(k, "a Tensor");
    return v[k].t;
  }
  std::optional<Tensor> opt_tensor(size_t k) const {
    if (v[k].kind == RValue::Kind::None) return std::nullopt;
    return tensor(k);
  }
  int64_t integer(size_t k) const {
    if (v[k].kind == RValue::Kind::Int) return v[k].i;
    if (v[k].kind == RValue::Kind::Bool) return v[k].b;
    bad(k, "an int");
  }
  std::optional<int64_t> opt_int(size_t k) const {
    if (v[k].kind == RValue::Kind::None) return std::nullopt;
    return integer(k);
  }
  double number(size_t k) const {
    if (v[k].kind == RValue::Kind::Double) return v[k].d;
    if (v[k].kind == RValue::Kind::Int) return double(v[k].i);
    if (v[k].kind == RValue::Kind::Bool) return v[k].b;
    bad(k, "a number");
  }
  std::optional<double> opt_number(size_t k) const {
    if (v[k].kind == RValue::Kind::None) return std::nullopt;
    return number(k);
  }
  bool boolean(size_t k) const {
    if (v[k].kind == RValue::Kind::Bool) return v[k].b;
    if (v[k].kind == RValue::Kind::Int) return v[k].i != 0;
    bad(k, "a bool");
  }
  const std::string& str(size_t k) const {
    if (v[k].kind != RValue::Kind::Str) bad(k, "a str");
    return v[k].s;
  }
  std::optional<std::string> opt_str(size_t k) const {
    if (v[k].kind == RValue::Kind::None) return std::nullopt;
    return str(k);
  }
  std::vector<int64_t> ints(size_t k) const {
    const RValue& a = v[k];
    if (a.kind == RValue::Kind::Int) return {a.i};
    if (a.kind != RValue::Kind::List) bad(k, "a list of ints");
    std::vector<int64_t> out;
    for (const auto& item : a.items) {
      if (item.kind != RValue::Kind::Int) bad(k, "a list of ints");
      out.push_back(item.i);
    }
    return out;
  }
  std::vector<Tensor> tensors(size_t k) const {
    const RValue& a = v[k];
    if (a.kind != RValue::Kind::List) bad(k, "a list of Tensors");
    std::vector<Tensor> out;
    for (const auto& item : a.items) {
      if (item.kind != RValue::Kind::Tensor) bad(k, "a list of Tensors");
      out.push_back(item.t);
    }
    return out;
  }
  // A tensor, or a number as a wrapped 0-d tensor (Python's promotion of numbers).
  Tensor operand(size_t k) const {
    const RValue& a = v[k];
    switch (a.kind) {
      case RValue::Kind::Tensor:
        return a.t;
      case RValue::Kind::Int:
        return scalar_tensor(Scalar(a.i), kLong, true);
      case RValue::Kind::Double:
        return scalar_tensor(Scalar(a.d), kDouble, true);
      case RValue::Kind::Bool:
        return scalar_tensor(Scalar(a.b), kBool, true);
      default:
        bad(k, "a Tensor or a number");
    }
  }
  bool is_number(size_t k) const {
    return v[k].kind == RValue::Kind::Int || v[k].kind == RValue::Kind::Bool;
  }
};

using OpFn = RValue (*)(Args&);

// An op: its name, the kinds of its positional arguments, and its handler.
// Kinds: T Tensor, O Tensor or None, i int, j int or None, f number, g number or None, b bool,
// s str, z str or None, I int or list of ints, P padding (list of ints or str), L list of
// Tensors, a Tensor or number, x index (getitem), d dtype, D dtype or None.
struct OpDef {
  const char* name;
  const char* kinds;
  OpFn fn;
};

// A graph body: its inputs are slots 0..num_inputs-1, each node writes one slot.
struct Block {
  struct Node {
    std::string name;
    const OpDef* op;
    std::vector<RValue> args;
    int64_t slot;
  };
  int64_t num_inputs = 0;
  int64_t num_slots = 0;
  std::vector<std::vector<int64_t>>
      input_shapes;  // per input: static sizes (-1 free); may be empty
  std::vector<Node> nodes;
  std::vector<RValue> outputs;  // references
};

/// Runs a block on its inputs (one value per input slot); returns its outputs.
std::vector<RValue> run_block(const Block& block, std::vector<RValue> inputs);

/// The control-flow ops (flow_ops.cpp): comparisons, logical and bitwise ops, where, item, cond.
const std::vector<OpDef>& flow_op_table();
/// Elementwise math, the *_like factories, clamp, max/min over a dim (math_ops.cpp).
const std::vector<OpDef>& math_op_table();

}  // namespace ember::export_::detail
