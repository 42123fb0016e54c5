// Elementwise unary ops (csrc/ember/ops/unary.cpp): math functions, predicates, rounding and
// clamping, as ember.<op>, Tensor.<op> and the in-place Tensor.<op>_.
#include <string>

#include "common.h"

namespace ember::py {

namespace {

// One sentence per op of EMBER_UNARY_FLOAT_OPS / EMBER_UNARY_SAME_OPS.
struct UnaryText {
  const char* name;
  const char* text;
};
constexpr UnaryText kUnaryTexts[] = {
    {"exp", "Raises e to the power of each element."},
    {"exp2", "Raises 2 to the power of each element."},
    {"expm1", "Computes exp(x) - 1 for each element, accurately for x near zero."},
    {"log", "Natural logarithm of each element."},
    {"log2", "Base-2 logarithm of each element."},
    {"log10", "Base-10 logarithm of each element."},
    {"log1p", "Computes log(1 + x) for each element, accurately for x near zero."},
    {"sqrt", "Square root of each element."},
    {"rsqrt", "One over the square root of each element."},
    {"sin", "Sine of each element, in radians."},
    {"cos", "Cosine of each element, in radians."},
    {"tan", "Tangent of each element, in radians."},
    {"asin", "Arcsine of each element, in radians."},
    {"acos", "Arccosine of each element, in radians."},
    {"atan", "Arctangent of each element, in radians."},
    {"sinh", "Hyperbolic sine of each element."},
    {"cosh", "Hyperbolic cosine of each element."},
    {"tanh", "Hyperbolic tangent of each element."},
    {"asinh", "Inverse hyperbolic sine of each element."},
    {"acosh", "Inverse hyperbolic cosine of each element."},
    {"atanh", "Inverse hyperbolic tangent of each element."},
    {"sigmoid", "The logistic function 1 / (1 + exp(-x)) of each element."},
    {"erf", "The Gauss error function of each element."},
    {"erfc", "The complementary error function, 1 - erf(x), of each element."},
    {"erfinv", "The inverse of erf for each element (defined on [-1, 1])."},
    {"reciprocal", "One over each element; integer inputs give a floating result."},
    {"sinc", "The normalized sinc function sin(pi x) / (pi x) of each element, 1 at 0."},
    {"abs", "Absolute value of each element."},
    {"neg", "Each element with its sign flipped."},
    {"sign", "-1, 0 or 1 for each element, following its sign."},
    {"floor", "Rounds each element down to an integer value."},
    {"ceil", "Rounds each element up to an integer value."},
    {"round", "Rounds each element to `decimals` places, halves to even."},
    {"trunc", "Rounds each element toward zero."},
    {"frac", "The fractional part of each element, x - trunc(x)."},
    {"relu", "Each element, with negative ones replaced by zero."},
    {"bitwise_not", "Bitwise NOT of each element (logical NOT for bool tensors)."},
};

const char* unary_text(std::string_view name) {
  for (const UnaryText& t : kUnaryTexts)
    if (name == t.name) return t.text;
  return "Applies the op to each element.";
}

// The three bindings of a unary op: ember.name(input), Tensor.name(), Tensor.name_().
template <class F, class G>
void bind_unary_op(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, G fn_) {
  std::string sig = std::string(name) + "(input) -> Tensor";
  Doc d{sig, unary_text(name)};
  m.def(name, fn, nb::arg("input"), doc(d));
  cls.def(name, fn, method_doc(d));
  std::string iname = std::string(name) + "_";
  cls.def(iname.c_str(), inplace(fn_),
          doc(iname + "() -> Tensor",
              std::string("In-place form of ") + name + "(): overwrites self and returns it."));
}

}  // namespace

namespace {
// PyTorch's clamp takes two numbers or two tensors (either may be None), not one of each; a
// number bound that does not promote the tensor must fit its dtype.
void check_clamp_bounds(const char* op, const Tensor& t, nb::handle lo, nb::handle hi) {
  // a 0-d tensor binds to either form, as PyTorch's parser lets it stand for a number
  auto is_tensor = [](nb::handle h) { return nb::isinstance<Tensor>(h); };
  auto is_number = [&](nb::handle h) { return !h.is_none() && !is_tensor(h); };
  auto is_nd_tensor = [&](nb::handle h) { return is_tensor(h) && nb::cast<Tensor&>(h).dim() > 0; };
  if ((is_nd_tensor(lo) && is_number(hi)) || (is_number(lo) && is_nd_tensor(hi)))
    throw nb::type_error((std::string(op) + "() received an invalid combination of arguments - " +
                          "got (" + type_name_of(lo) + ", " + type_name_of(hi) +
                          "), but expected (Tensor min = None, Tensor max = None) or " +
                          "(Number min = None, Number max = None)")
                             .c_str());
  for (nb::handle h : {lo, hi}) {
    Scalar s;
    if (is_number(h) && !scalar_from_python(h, s))  // a str, a list: neither form takes it
      throw nb::type_error((std::string(op) +
                            "(): argument 'min'/'max' must be Tensor or Number, " + "not " +
                            type_name_of(h))
                               .c_str());
    if (is_number(h) && scalar_from_python(h, s) &&
        (is_floating_point(t.dtype()) || !s.is_floating_point()))
      check_scalar_fits(s, t.dtype());
  }
}
}  // namespace

void bind_unary(nb::module_& m) {
  auto cls = tensor_class();
#define EMBER_BIND_UNARY(name, node) \
  bind_unary_op(                     \
      m, cls, #name, [](const Tensor& t) { return name(t); }, [](Tensor& t) { name##_(t); });
  EMBER_UNARY_FLOAT_OPS(EMBER_BIND_UNARY)
  EMBER_UNARY_SAME_OPS(EMBER_BIND_UNARY)
#undef EMBER_BIND_UNARY

#define EMBER_BIND_PRED(name, text) \
  both(m, cls, #name, [](const Tensor& t) { return name(t); }, {#name "(input) -> Tensor", text});
  EMBER_BIND_PRED(isnan, "True where an element is NaN.")
  EMBER_BIND_PRED(isinf, "True where an element is positive or negative infinity.")
  EMBER_BIND_PRED(isfinite, "True where an element is neither infinite nor NaN.")
  EMBER_BIND_PRED(isposinf, "True where an element is positive infinity.")
  EMBER_BIND_PRED(isneginf, "True where an element is negative infinity.")
  EMBER_BIND_PRED(signbit, "True where an element's sign bit is set (negative numbers and -0.0).")
  EMBER_BIND_PRED(logical_not, "True where an element is zero (a bool tensor).")
  EMBER_BIND_PRED(square, "Each element multiplied by itself.")
#undef EMBER_BIND_PRED
  cls.def("logical_not_", inplace([](Tensor& t) { copy_(t, logical_not(t)); }),
          doc("logical_not_() -> Tensor", "In-place form of logical_not(), in self's dtype."));
  cls.def("square_", inplace([](Tensor& t) { mul_(t, t); }),
          doc("square_() -> Tensor", "In-place form of square(): overwrites self and returns it."));

  Doc round_doc{"round(input, *, decimals=0) -> Tensor", unary_text("round")};
  m.def(
      "round", [](const Tensor& t, int64_t decimals) { return round(t, decimals); },
      nb::arg("input"), nb::kw_only(), nb::arg("decimals") = 0, doc(round_doc));
  cls.def(
      "round", [](const Tensor& t, int64_t decimals) { return round(t, decimals); }, nb::kw_only(),
      nb::arg("decimals") = 0, method_doc(round_doc));

  auto opt_tensor = [](nb::handle h) -> std::optional<Tensor> {
    if (h.is_none()) return std::nullopt;
    return nb::cast<TL>(h).t;
  };
  Doc clamp_doc{
      "clamp(input, min=None, max=None) -> Tensor",
      "Limits each element to [min, max]; either bound may be a number, a tensor or None."};
  auto clamp_fn = [opt_tensor](const Tensor& t, nb::handle lo, nb::handle hi) {
    check_clamp_bounds("clamp", t, lo, hi);
    return clamp(t, opt_tensor(lo), opt_tensor(hi));
  };
  both(m, cls, "clamp", clamp_fn, clamp_doc, nb::arg("min") = nb::none(),
       nb::arg("max") = nb::none());
  cls.def(
      "clamp_",
      [opt_tensor](nb::handle self, nb::handle lo, nb::handle hi) {
        check_clamp_bounds("clamp_", nb::cast<Tensor&>(self), lo, hi);
        clamp_(nb::cast<Tensor&>(self), opt_tensor(lo), opt_tensor(hi));
        return nb::borrow(self);
      },
      nb::arg("min") = nb::none(), nb::arg("max") = nb::none(),
      doc("clamp_(min=None, max=None) -> Tensor", "In-place form of clamp(): overwrites self."));
  both(
      m, cls, "nan_to_num",
      [](const Tensor& t, std::optional<double> nan, std::optional<double> pi,
         std::optional<double> ni) { return nan_to_num(t, nan, pi, ni); },
      {"nan_to_num(input, nan=0.0, posinf=None, neginf=None) -> Tensor",
       "Replaces NaN and infinite elements by the given values (by default the dtype's largest "
       "and smallest finite numbers for the infinities)."},
      nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
}

}  // namespace ember::py
