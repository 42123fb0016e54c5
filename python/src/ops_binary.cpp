// Elementwise binary and ternary ops (csrc/ember/ops/binary.cpp, compare.cpp): arithmetic,
// comparisons, bitwise and logical ops, add/sub with alpha, div with rounding_mode, lerp,
// addcmul/addcdiv and where. A Python number operand becomes a wrapped 0-d tensor.
#include <string>

#include "common.h"
#include "ember/ops/binary_out.h"
#include "out_forms.h"
#include "quantized.h"

namespace ember::py {

namespace {

// One sentence per op of EMBER_BINARY_OPS.
struct BinaryText {
  const char* name;
  const char* text;
};
constexpr BinaryText kBinaryTexts[] = {
    {"mul", "Multiplies input by other elementwise, broadcasting the two."},
    {"true_divide", "Divides input by other elementwise; integer operands give a floating result."},
    {"floor_divide", "Divides input by other elementwise and rounds the quotient down."},
    {"remainder",
     "The remainder of input / other elementwise, with the sign of other (Python's %)."},
    {"fmod", "The remainder of input / other elementwise, with the sign of input (C's fmod)."},
    {"pow", "Raises each element of input to the power given by other."},
    {"atan2", "The angle of the point (other, input) elementwise, in (-pi, pi]."},
    {"hypot", "sqrt(input^2 + other^2) elementwise, without intermediate overflow."},
    {"copysign", "The magnitude of input with the sign of other, elementwise."},
    {"minimum", "The smaller of the two operands elementwise; NaN if either is NaN."},
    {"maximum", "The larger of the two operands elementwise; NaN if either is NaN."},
    {"fmin", "The smaller of the two operands elementwise, ignoring a NaN on one side."},
    {"fmax", "The larger of the two operands elementwise, ignoring a NaN on one side."},
    {"bitwise_and", "Bitwise AND of integer or bool operands, elementwise."},
    {"bitwise_or", "Bitwise OR of integer or bool operands, elementwise."},
    {"bitwise_xor", "Bitwise XOR of integer or bool operands, elementwise."},
    {"bitwise_left_shift", "Shifts the bits of input left by other places, elementwise."},
    {"bitwise_right_shift", "Shifts the bits of input right by other places, elementwise."},
    {"logical_and", "True where both operands are nonzero."},
    {"logical_or", "True where either operand is nonzero."},
    {"logical_xor", "True where exactly one operand is nonzero."},
    {"eq", "True where input equals other (a bool tensor)."},
    {"ne", "True where input differs from other (a bool tensor)."},
    {"lt", "True where input is less than other (a bool tensor)."},
    {"le", "True where input is less than or equal to other (a bool tensor)."},
    {"gt", "True where input is greater than other (a bool tensor)."},
    {"ge", "True where input is greater than or equal to other (a bool tensor)."},
};

const char* binary_text(std::string_view name) {
  for (const BinaryText& t : kBinaryTexts)
    if (name == t.name) return t.text;
  return "Applies the op to the two operands elementwise, broadcasting them.";
}

template <class F, class G, class H>
void bind_binary_op(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, G method,
                    H fn_) {
  std::string sig = std::string(name) + "(input, other) -> Tensor";
  Doc d{sig, binary_text(name)};
  m.def(name, fn, nb::arg("input"), nb::arg("other"), doc(d));
  cls.def(name, method, nb::arg("other"), method_doc(d));
  std::string iname = std::string(name) + "_";
  cls.def(iname.c_str(), inplace(fn_), nb::arg("other"),
          doc(iname + "(other) -> Tensor",
              std::string("In-place form of ") + name + "(): writes into self and returns it."));
}

// Which operands PyTorch's signatures let be a Python number: none (these ops have only a
// Tensor-Tensor overload, so minimum(x, False) is a TypeError), only `other` (eq(x, 2) but not
// eq(2, x)), or both (the arithmetic ops).
enum class Numbers { None, Other, Both };
Numbers numbers_of(std::string_view name) {
  for (std::string_view n : {"atan2", "hypot", "minimum", "maximum", "fmin", "fmax", "logical_and",
                             "logical_or", "logical_xor"})
    if (name == n) return Numbers::None;
  for (std::string_view n : {"fmod", "copysign", "eq", "ne", "lt", "le", "gt", "ge"})
    if (name == n) return Numbers::Other;
  return Numbers::Both;
}

// A comparison's operand: a quantized tensor compares by its values (Note [Quantized fills,
// copies and comparisons]).
Tensor compared(std::string_view op, const Tensor& t) {
  if (!is_quantized(t.dtype())) [[likely]]
    return t;
  for (std::string_view n : {"eq", "ne", "lt", "le", "gt", "ge"})
    if (op == n) return dequantized(t);
  return t;
}

}  // namespace

void bind_binary(nb::module_& m) {
  auto cls = tensor_class();
#define EMBER_BIND_BINARY(name, node)                                                 \
  switch (numbers_of(#name)) {                                                        \
    case Numbers::None:                                                               \
      bind_binary_op(                                                                 \
          m, cls, #name, [](const Tensor& a, const Tensor& b) { return name(a, b); }, \
          [](const Tensor& a, const Tensor& b) { return name(a, b); },                \
          [](Tensor& a, const Tensor& b) { name##_(a, b); });                         \
      break;                                                                          \
    case Numbers::Other:                                                              \
      bind_binary_op(                                                                 \
          m, cls, #name,                                                              \
          [](const Tensor& a, const TL& b) {                                          \
            return name(compared(#name, a), compared(#name, b.t));                    \
          },                                                                          \
          [](const Tensor& a, const TL& b) {                                          \
            return name(compared(#name, a), compared(#name, b.t));                    \
          },                                                                          \
          [](Tensor& a, const TL& b) { name##_(a, b.t); });                           \
      break;                                                                          \
    case Numbers::Both:                                                               \
      bind_binary_op(                                                                 \
          m, cls, #name, [](const TL& a, const TL& b) { return name(a.t, b.t); },     \
          [](const Tensor& a, const TL& b) { return name(a, b.t); },                  \
          [](Tensor& a, const TL& b) { name##_(a, b.t); });                           \
      break;                                                                          \
  }
  EMBER_BINARY_OPS(EMBER_BIND_BINARY)
#undef EMBER_BIND_BINARY

  // The out= forms (Note [Meta step] in ops/meta.h), taking numbers where the op does.
#define EMBER_OUT_BINARY(name, node)                                                              \
  switch (numbers_of(#name)) {                                                                    \
    case Numbers::None:                                                                           \
      out_form(                                                                                   \
          m, #name, [](const Tensor& a, const Tensor& b, Tensor& out) { name##_out(a, b, out); }, \
          nb::arg("input"), nb::arg("other"), nb::kw_only());                                     \
      break;                                                                                      \
    case Numbers::Other:                                                                          \
      out_form(                                                                                   \
          m, #name, [](const Tensor& a, const TL& b, Tensor& out) { name##_out(a, b.t, out); },   \
          nb::arg("input"), nb::arg("other"), nb::kw_only());                                     \
      break;                                                                                      \
    case Numbers::Both:                                                                           \
      out_form(                                                                                   \
          m, #name, [](const TL& a, const TL& b, Tensor& out) { name##_out(a.t, b.t, out); },     \
          nb::arg("input"), nb::arg("other"), nb::kw_only());                                     \
      break;                                                                                      \
  }
  EMBER_BINARY_OPS(EMBER_OUT_BINARY)
#undef EMBER_OUT_BINARY
  out_form(
      m, "add",
      [](const TL& a, const TL& b, Scalar alpha, Tensor& out) { add_out(a.t, b.t, alpha, out); },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  out_form(
      m, "sub",
      [](const TL& a, const TL& b, Scalar alpha, Tensor& out) { sub_out(a.t, b.t, alpha, out); },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);

  Doc add_doc{"add(input, other, *, alpha=1) -> Tensor",
              "Adds other, multiplied by alpha, to input, broadcasting and promoting dtypes."};
  m.def(
      "add", [](const TL& a, const TL& b, Scalar alpha) { return add(a.t, b.t, alpha); },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1, doc(add_doc));
  cls.def(
      "add", [](const Tensor& a, const TL& b, Scalar alpha) { return add(a, b.t, alpha); },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1, method_doc(add_doc));
  cls.def(
      "add_", inplace([](Tensor& a, const TL& b, Scalar alpha) { add_(a, b.t, alpha); }),
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1,
      doc("add_(other, *, alpha=1) -> Tensor", "In-place form of add(): self += alpha * other."));
  Doc sub_doc{
      "sub(input, other, *, alpha=1) -> Tensor",
      "Subtracts other, multiplied by alpha, from input, broadcasting and promoting dtypes."};
  m.def(
      "sub", [](const TL& a, const TL& b, Scalar alpha) { return sub(a.t, b.t, alpha); },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1, doc(sub_doc));
  cls.def(
      "sub", [](const Tensor& a, const TL& b, Scalar alpha) { return sub(a, b.t, alpha); },
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1, method_doc(sub_doc));
  cls.def(
      "sub_", inplace([](Tensor& a, const TL& b, Scalar alpha) { sub_(a, b.t, alpha); }),
      nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1,
      doc("sub_(other, *, alpha=1) -> Tensor", "In-place form of sub(): self -= alpha * other."));
  using Mode = std::optional<std::string>;
  Doc div_doc{"div(input, other, *, rounding_mode=None) -> Tensor",
              "Divides input by other; rounding_mode 'trunc' or 'floor' rounds the quotient, None "
              "keeps it exact."};
  m.def(
      "div", [](const TL& a, const TL& b, Mode mode) { return div(a.t, b.t, mode); },
      nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none(),
      doc(div_doc));
  cls.def(
      "div", [](const Tensor& a, const TL& b, Mode mode) { return div(a, b.t, mode); },
      nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none(), method_doc(div_doc));
  cls.def("div_", inplace([](Tensor& a, const TL& b, Mode mode) { div_(a, b.t, mode); }),
          nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none(),
          doc("div_(other, *, rounding_mode=None) -> Tensor", "In-place form of div()."));
  for (const char* name : {"div", "divide"})
    out_form(
        m, name,
        [](const TL& a, const TL& b, Mode mode, Tensor& out) { div_out(a.t, b.t, mode, out); },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());

  m.def(
      "_where", [](const Tensor& c, const TL& a, const TL& b) { return where(c, a.t, b.t); },
      nb::arg("condition"), nb::arg("input"), nb::arg("other"),
      doc("_where(condition, input, other) -> Tensor",
          "Picks input where condition is true and other elsewhere (behind ember.where)."));
  m.def(
      "lerp", [](const Tensor& a, const Tensor& b, const TL& w) { return lerp(a, b, w.t); },
      nb::arg("input"), nb::arg("end"), nb::arg("weight"),
      doc("lerp(input, end, weight) -> Tensor",
          "Linear interpolation input + weight * (end - input), elementwise."));
  cls.def(
      "lerp", [](const Tensor& a, const Tensor& b, const TL& w) { return lerp(a, b, w.t); },
      nb::arg("end"), nb::arg("weight"),
      doc("lerp(end, weight) -> Tensor",
          "Linear interpolation self + weight * (end - self), elementwise."));
  auto addcmul_fn = [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar v) {
    return addcmul(s, a, b, v);
  };
  both(m, cls, "addcmul", addcmul_fn,
       {"addcmul(input, tensor1, tensor2, *, value=1) -> Tensor",
        "input + value * tensor1 * tensor2, elementwise with broadcasting."},
       nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  cls.def("addcmul_", inplace([](Tensor& s, const Tensor& a, const Tensor& b, Scalar v) {
            addcmul_(s, a, b, v);
          }),
          nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1,
          doc("addcmul_(tensor1, tensor2, *, value=1) -> Tensor", "In-place form of addcmul()."));
  auto addcdiv_fn = [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar v) {
    return addcdiv(s, a, b, v);
  };
  both(m, cls, "addcdiv", addcdiv_fn,
       {"addcdiv(input, tensor1, tensor2, *, value=1) -> Tensor",
        "input + value * tensor1 / tensor2, elementwise with broadcasting."},
       nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  cls.def("addcdiv_", inplace([](Tensor& s, const Tensor& a, const Tensor& b, Scalar v) {
            addcdiv_(s, a, b, v);
          }),
          nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1,
          doc("addcdiv_(tensor1, tensor2, *, value=1) -> Tensor", "In-place form of addcdiv()."));
  m.def(
      "result_type",
      [](const TL& a, const TL& b) {
        return result_type({a.t, b.t});
      },
      nb::arg("tensor1"), nb::arg("tensor2"),
      doc("result_type(tensor1, tensor2) -> dtype",
          "The dtype that an elementwise op on the two operands would produce."));
}

}  // namespace ember::py
