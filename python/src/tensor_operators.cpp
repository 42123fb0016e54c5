// Tensor's Python operators (+, -, *, /, //, %, **, &, |, ^, <<, >>, comparisons, unary - + abs ~,
// @ and the augmented assignments), each calling the op of the same meaning.
#include <string>

#include "common.h"
#include "ember/autograd/rename.h"
#include "quantized.h"

namespace ember::py {

namespace {
// "__add__(other) -> Tensor\n\nself + other, as add(self, other)."
const char* op_doc(const char* dunder, const char* expr, const char* op) {
  std::string args = std::string_view(expr).find("other") != std::string_view::npos ? "other" : "";
  return doc(std::string(dunder) + "(" + args + ") -> Tensor",
             std::string("Implements ") + expr + " with " + op + "().");
}
}  // namespace

void bind_operators(nb::module_& m) {
  auto cls = tensor_class();
  auto op = nb::is_operator();
  auto o = nb::arg("other");
  cls.def(
         "__add__", [](const Tensor& a, const TL& b) { return add(a, b.t); }, o, op,
         op_doc("__add__", "self + other", "add"))
      .def(
          "__radd__", [](const Tensor& a, const TL& b) { return add(b.t, a); }, o, op,
          op_doc("__radd__", "other + self", "add"))
      .def(
          "__sub__", [](const Tensor& a, const TL& b) { return sub(a, b.t); }, o, op,
          op_doc("__sub__", "self - other", "sub"))
      .def(
          "__rsub__",
          [](const Tensor& a, const TL& b) {
            Tensor out = sub(b.t, a);
            autograd::rename_history(out, "RsubBackward1");  // torch's rsub(Tensor, Scalar)
            return out;
          },
          o, op, op_doc("__rsub__", "other - self", "sub"))
      .def(
          "__mul__", [](const Tensor& a, const TL& b) { return mul(a, b.t); }, o, op,
          op_doc("__mul__", "self * other", "mul"))
      .def(
          // self first, as torch's: a float16/bfloat16 self reads a number in float then
          // (Note [Opmath scalars] in ops/meta.h)
          "__rmul__", [](const Tensor& a, const TL& b) { return mul(a, b.t); }, o, op,
          op_doc("__rmul__", "other * self", "mul"))
      .def(
          "__truediv__", [](const Tensor& a, const TL& b) { return true_divide(a, b.t); }, o, op,
          op_doc("__truediv__", "self / other", "true_divide"))
      .def(
          "__rtruediv__", [](const Tensor& a, const TL& b) { return true_divide(b.t, a); }, o, op,
          op_doc("__rtruediv__", "other / self", "true_divide"))
      .def(
          "__floordiv__", [](const Tensor& a, const TL& b) { return floor_divide(a, b.t); }, o, op,
          op_doc("__floordiv__", "self // other", "floor_divide"))
      .def(
          "__rfloordiv__", [](const Tensor& a, const TL& b) { return floor_divide(b.t, a); }, o, op,
          op_doc("__rfloordiv__", "other // self", "floor_divide"))
      .def(
          "__mod__", [](const Tensor& a, const TL& b) { return remainder(a, b.t); }, o, op,
          op_doc("__mod__", "self % other", "remainder"))
      .def(
          "__rmod__", [](const Tensor& a, const TL& b) { return remainder(b.t, a); }, o, op,
          op_doc("__rmod__", "other % self", "remainder"))
      .def(
          "__pow__", [](const Tensor& a, const TL& b) { return pow(a, b.t); }, o, op,
          op_doc("__pow__", "self ** other", "pow"))
      .def(
          "__rpow__", [](const Tensor& a, const TL& b) { return pow(b.t, a); }, o, op,
          op_doc("__rpow__", "other ** self", "pow"))
      .def(
          "__and__", [](const Tensor& a, const TL& b) { return bitwise_and(a, b.t); }, o, op,
          op_doc("__and__", "self & other", "bitwise_and"))
      .def(
          "__rand__", [](const Tensor& a, const TL& b) { return bitwise_and(b.t, a); }, o, op,
          op_doc("__rand__", "other & self", "bitwise_and"))
      .def(
          "__or__", [](const Tensor& a, const TL& b) { return bitwise_or(a, b.t); }, o, op,
          op_doc("__or__", "self | other", "bitwise_or"))
      .def(
          "__ror__", [](const Tensor& a, const TL& b) { return bitwise_or(b.t, a); }, o, op,
          op_doc("__ror__", "other | self", "bitwise_or"))
      .def(
          "__xor__", [](const Tensor& a, const TL& b) { return bitwise_xor(a, b.t); }, o, op,
          op_doc("__xor__", "self ^ other", "bitwise_xor"))
      .def(
          "__rxor__", [](const Tensor& a, const TL& b) { return bitwise_xor(b.t, a); }, o, op,
          op_doc("__rxor__", "other ^ self", "bitwise_xor"))
      .def(
          "__lshift__", [](const Tensor& a, const TL& b) { return bitwise_left_shift(a, b.t); }, o,
          op, op_doc("__lshift__", "self << other", "bitwise_left_shift"))
      .def(
          "__rshift__", [](const Tensor& a, const TL& b) { return bitwise_right_shift(a, b.t); }, o,
          op, op_doc("__rshift__", "self >> other", "bitwise_right_shift"))
      .def(
          "__rlshift__", [](const Tensor& a, const TL& b) { return bitwise_left_shift(b.t, a); }, o,
          op, op_doc("__rlshift__", "other << self", "bitwise_left_shift"))
      .def(
          "__rrshift__", [](const Tensor& a, const TL& b) { return bitwise_right_shift(b.t, a); },
          o, op, op_doc("__rrshift__", "other >> self", "bitwise_right_shift"))
      .def(
          "__eq__",
          [](const Tensor& a, const TL& b) { return eq(dequantized(a), dequantized(b.t)); }, o, op,
          op_doc("__eq__", "self == other", "eq"))
      .def(
          "__ne__",
          [](const Tensor& a, const TL& b) { return ne(dequantized(a), dequantized(b.t)); }, o, op,
          op_doc("__ne__", "self != other", "ne"))
      .def(
          "__lt__",
          [](const Tensor& a, const TL& b) { return lt(dequantized(a), dequantized(b.t)); }, o, op,
          op_doc("__lt__", "self < other", "lt"))
      .def(
          "__le__",
          [](const Tensor& a, const TL& b) { return le(dequantized(a), dequantized(b.t)); }, o, op,
          op_doc("__le__", "self <= other", "le"))
      .def(
          "__gt__",
          [](const Tensor& a, const TL& b) { return gt(dequantized(a), dequantized(b.t)); }, o, op,
          op_doc("__gt__", "self > other", "gt"))
      .def(
          "__ge__",
          [](const Tensor& a, const TL& b) { return ge(dequantized(a), dequantized(b.t)); }, o, op,
          op_doc("__ge__", "self >= other", "ge"))
      .def(
          "__neg__", [](const Tensor& a) { return neg(a); }, op_doc("__neg__", "-self", "neg"))
      .def(
          "__pos__", [](const Tensor& a) { return a; },
          doc("__pos__() -> Tensor", "Implements +self: returns self unchanged."))
      .def(
          "__abs__", [](const Tensor& a) { return abs(a); }, op_doc("__abs__", "abs(self)", "abs"))
      .def(
          "__invert__",
          [](const Tensor& a) {
            if (is_floating_point(a.dtype()))
              throw nb::type_error(
                  "~ (operator.invert) is only implemented on integer and Boolean-type tensors");
            return bitwise_not(a);
          },
          op_doc("__invert__", "~self", "bitwise_not"))
      .def(
          "__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, o, op,
          op_doc("__matmul__", "self @ other", "matmul"))
      .def(
          "__rmatmul__", [](const Tensor& a, const Tensor& b) { return matmul(b, a); }, o, op,
          op_doc("__rmatmul__", "other @ self", "matmul"));
#define EMBER_BIND_IOP(dunder, sym, opname, fn) \
  cls.def(                                      \
      dunder,                                   \
      [](nb::handle self, const TL& b) {        \
        fn(nb::cast<Tensor&>(self), b.t);       \
        return nb::borrow(self);                \
      },                                        \
      o, op, op_doc(dunder, "self " sym " other", opname "_"));
  EMBER_BIND_IOP("__iadd__", "+=", "add", [](Tensor& a, const Tensor& b) { add_(a, b); })
  EMBER_BIND_IOP("__isub__", "-=", "sub", [](Tensor& a, const Tensor& b) { sub_(a, b); })
  EMBER_BIND_IOP("__imul__", "*=", "mul", mul_)
  EMBER_BIND_IOP("__itruediv__", "/=", "true_divide", true_divide_)
  EMBER_BIND_IOP("__ifloordiv__", "//=", "floor_divide", floor_divide_)
  EMBER_BIND_IOP("__imod__", "%=", "remainder", remainder_)
  EMBER_BIND_IOP("__ipow__", "**=", "pow", pow_)
  EMBER_BIND_IOP("__iand__", "&=", "bitwise_and", bitwise_and_)
  EMBER_BIND_IOP("__ior__", "|=", "bitwise_or", bitwise_or_)
  EMBER_BIND_IOP("__ixor__", "^=", "bitwise_xor", bitwise_xor_)
  EMBER_BIND_IOP("__ilshift__", "<<=", "bitwise_left_shift", bitwise_left_shift_)
  EMBER_BIND_IOP("__irshift__", ">>=", "bitwise_right_shift", bitwise_right_shift_)
#undef EMBER_BIND_IOP
  (void)m;
}

}  // namespace ember::py
