#pragma once
// The tree a checkpoint holds: dicts, lists, tuples, numbers, strings and tensors (data only, no
// code), shared by the C++ API and the Python bindings. See docs/FORMAT.md.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ember/core/ordered_dict.h"
#include "ember/core/tensor.h"

namespace ember::serialize {

/// One node of a checkpoint tree (libtorch's IValue, reduced to what a checkpoint needs).
struct Value {
  enum class Kind { None, Bool, Int, Double, String, Tensor, List, Tuple, Dict };

  Value() = default;
  Value(const Tensor& t) : kind(Kind::Tensor), tensor(t) {}  // NOLINT: implicit like IValue
  Value(const std::map<std::string, Tensor>& tensors);       // NOLINT
  /// A module's state_dict, kept in order (saved as an OrderedDict, as PyTorch does).
  Value(const OrderedDict<std::string, Tensor>& tensors);  // NOLINT
  static Value from_bool(bool b);
  static Value from_int(int64_t i);
  static Value from_double(double d);
  static Value from_string(std::string s);
  static Value list(std::vector<Value> items);
  static Value tuple(std::vector<Value> items);
  /// A dict in insertion order; `ordered` marks Python's OrderedDict (restored as one).
  static Value dict(std::vector<std::pair<Value, Value>> entries = {}, bool ordered = false);

  /// The tensor of a Tensor node; raises on other kinds.
  const Tensor& to_tensor() const;
  /// A dict of string keys and tensor values as a map; raises on anything else.
  std::map<std::string, Tensor> to_tensor_map() const;
  /// The same in the checkpoint's order, the type Module::load_state_dict takes.
  OrderedDict<std::string, Tensor> to_ordered_tensor_dict() const;
  /// Looks a string key up in a dict node; raises if absent.
  const Value& at(const std::string& key) const;

  Kind kind = Kind::None;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  Tensor tensor;
  std::vector<Value> items;                      // List, Tuple
  std::vector<std::pair<Value, Value>> entries;  // Dict; keys are String or Int
  bool ordered = false;
};

/// The name of a kind, for error messages ("dict", "tensor", ...).
const char* kind_name(Value::Kind k);

}  // namespace ember::serialize
