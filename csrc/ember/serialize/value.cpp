#include "ember/serialize/value.h"

namespace ember::serialize {

Value::Value(const std::map<std::string, Tensor>& tensors) : kind(Kind::Dict) {
  for (const auto& [k, t] : tensors) entries.emplace_back(from_string(k), Value(t));
}

Value::Value(const OrderedDict<std::string, Tensor>& tensors) : kind(Kind::Dict), ordered(true) {
  for (const auto& it : tensors) entries.emplace_back(from_string(it.key()), Value(it.value()));
}

Value Value::from_bool(bool b) {
  Value v;
  v.kind = Kind::Bool;
  v.b = b;
  return v;
}

Value Value::from_int(int64_t i) {
  Value v;
  v.kind = Kind::Int;
  v.i = i;
  return v;
}

Value Value::from_double(double d) {
  Value v;
  v.kind = Kind::Double;
  v.d = d;
  return v;
}

Value Value::from_string(std::string s) {
  Value v;
  v.kind = Kind::String;
  v.s = std::move(s);
  return v;
}

Value Value::list(std::vector<Value> items) {
  Value v;
  v.kind = Kind::List;
  v.items = std::move(items);
  return v;
}

Value Value::tuple(std::vector<Value> items) {
  Value v = list(std::move(items));
  v.kind = Kind::Tuple;
  return v;
}

Value Value::dict(std::vector<std::pair<Value, Value>> entries, bool ordered) {
  Value v;
  v.kind = Kind::Dict;
  v.entries = std::move(entries);
  v.ordered = ordered;
  return v;
}

const Tensor& Value::to_tensor() const {
  EMBER_CHECK(kind == Kind::Tensor, "ember::load: expected a tensor; got a ", kind_name(kind));
  return tensor;
}

OrderedDict<std::string, Tensor> Value::to_ordered_tensor_dict() const {
  EMBER_CHECK(kind == Kind::Dict, "ember::load: expected a dict of tensors; got a ",
              kind_name(kind));
  OrderedDict<std::string, Tensor> out;
  for (const auto& [k, v] : entries) {
    EMBER_CHECK(k.kind == Kind::String, "ember::load: expected string keys; got a ",
                kind_name(k.kind));
    out.insert_or_assign(k.s, v.to_tensor());
  }
  return out;
}

std::map<std::string, Tensor> Value::to_tensor_map() const {
  std::map<std::string, Tensor> out;
  for (const auto& it : to_ordered_tensor_dict()) out[it.key()] = it.value();
  return out;
}

const Value& Value::at(const std::string& key) const {
  EMBER_CHECK(kind == Kind::Dict, "ember::load: expected a dict; got a ", kind_name(kind));
  for (const auto& [k, v] : entries)
    if (k.kind == Kind::String && k.s == key) return v;
  EMBER_ERROR(ErrorKind::Index, "ember::load: key '", key, "' not found");
}

const char* kind_name(Value::Kind k) {
  switch (k) {
    case Value::Kind::None:
      return "None";
    case Value::Kind::Bool:
      return "bool";
    case Value::Kind::Int:
      return "int";
    case Value::Kind::Double:
      return "float";
    case Value::Kind::String:
      return "str";
    case Value::Kind::Tensor:
      return "tensor";
    case Value::Kind::List:
      return "list";
    case Value::Kind::Tuple:
      return "tuple";
    case Value::Kind::Dict:
      return "dict";
  }
  return "?";
}

}  // namespace ember::serialize
