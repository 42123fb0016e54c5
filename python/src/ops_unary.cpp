// Elementwise unary ops (csrc/ember/ops/unary.cpp): math functions, predicates, rounding and
// clamping, as ember.<op>, Tensor.<op> and the in-place Tensor.<op>_.
#include <string>

#include "common.h"
#include "ember/ops/unary_table.h"
#include "out_forms.h"
#include "quantized.h"

namespace ember::py {

namespace {

const char* unary_text(std::string_view name) {
#define EMBER_TEXT(row, kind, dtypes, node, math, derivative, text) \
  if (name == #row) return text;
  EMBER_UNARY_OPS(EMBER_TEXT)
#undef EMBER_TEXT
  return "Applies the op to each element.";
}

// The three bindings of a unary op: ember.name(input), Tensor.name(), Tensor.name_().
template <class F, class G>
void bind_unary_forms(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, G fn_) {
  std::string sig = std::string(name) + "(input) -> Tensor";
  Doc d{sig, unary_text(name)};
  m.def(name, fn, nb::arg("input"), doc(d));
  cls.def(name, fn, method_doc(d));
  std::string iname = std::string(name) + "_";
  cls.def(iname.c_str(), inplace(fn_),
          doc(iname + "() -> Tensor",
              std::string("In-place form of ") + name + "(): overwrites self and returns it."));
}

template <class F, class G>
void bind_unary_op(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, G fn_) {
  if (!has_quantized_kernel(name)) return bind_unary_forms(m, cls, name, fn, fn_);
  // the one flag test is all that a float input pays
  bind_unary_forms(
      m, cls, name,
      [fn, name](const Tensor& t) {
        return is_quantized(t.dtype()) ? quantized_unary(name, t) : fn(t);
      },
      [fn_, name](Tensor& t) {
        if (is_quantized(t.dtype())) quantized_unary_(name, t);
        else fn_(t);
      });
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
    if (PyComplex_Check(h.ptr())) {  // torch reads a complex bound as a double (opt_tensor)
      EMBER_CHECK_KIND(is_floating_point(t.dtype()), ErrorKind::NotImplemented,
                       "clamp is not supported for complex types");
      EMBER_CHECK(PyComplex_ImagAsDouble(h.ptr()) == 0,
                  "value cannot be converted to type double without overflow");
      continue;
    }
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
  // The out= forms of the rows (Note [Meta step] in ops/meta.h).
#define EMBER_OUT(name, kind, ...) EMBER_OUT_##kind(name)
#define EMBER_OUT_FLOAT(name)                                                               \
  out_form(                                                                                 \
      m, #name, [](const Tensor& t, Tensor& out) { name##_out(t, out); }, nb::arg("input"), \
      nb::kw_only());
#define EMBER_OUT_SAME(name) EMBER_OUT_FLOAT(name)
#define EMBER_OUT_INT(name) EMBER_OUT_FLOAT(name)
#define EMBER_OUT_BOOL(name) EMBER_OUT_FLOAT(name)
#define EMBER_OUT_SPECIAL(name) EMBER_OUT_FLOAT(name)
#define EMBER_OUT_NOGRAD(name) EMBER_OUT_FLOAT(name)
#define EMBER_OUT_ACT(name)
  EMBER_UNARY_OPS(EMBER_OUT)
#undef EMBER_OUT
#undef EMBER_OUT_FLOAT
#undef EMBER_OUT_SAME
#undef EMBER_OUT_INT
#undef EMBER_OUT_BOOL
#undef EMBER_OUT_SPECIAL
#undef EMBER_OUT_NOGRAD
#undef EMBER_OUT_ACT
  // The rows of the unary table (Note [Unary table] in schema/unary.h), by kind.
#define EMBER_BIND(name, kind, dtypes, node, math, derivative, text) EMBER_BIND_##kind(name, text)
#define EMBER_BIND_FLOAT(name, text) \
  bind_unary_op(                     \
      m, cls, #name, [](const Tensor& t) { return name(t); }, [](Tensor& t) { name##_(t); });
#define EMBER_BIND_SAME(name, text) EMBER_BIND_FLOAT(name, text)
#define EMBER_BIND_INT(name, text) EMBER_BIND_FLOAT(name, text)
#define EMBER_BIND_BOOL(name, text) \
  both(m, cls, #name, [](const Tensor& t) { return name(t); }, {#name "(input) -> Tensor", text});
#define EMBER_BIND_SPECIAL(name, text)  // python/src/ops_special.cpp
#define EMBER_BIND_NOGRAD(name, text)   // python/src/ops_special.cpp
#define EMBER_BIND_ACT(name, text)      // python/src/nn_activation.cpp, by hand
  EMBER_UNARY_OPS(EMBER_BIND)
#undef EMBER_BIND
#undef EMBER_BIND_FLOAT
#undef EMBER_BIND_SAME
#undef EMBER_BIND_INT
#undef EMBER_BIND_BOOL
#undef EMBER_BIND_SPECIAL
#undef EMBER_BIND_NOGRAD
#undef EMBER_BIND_ACT
  both(m, cls, "square", [](const Tensor& t) { return square(t); },
       {"square(input) -> Tensor", "Each element multiplied by itself."});
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
    if (PyComplex_Check(h.ptr())) return wrap_scalar(PyComplex_RealAsDouble(h.ptr()));
    return nb::cast<TL>(h).t;
  };
  Doc clamp_doc{
      "clamp(input, min=None, max=None) -> Tensor",
      "Limits each element to [min, max]; either bound may be a number, a tensor or None."};
  auto clamp_fn = [opt_tensor](const Tensor& t, nb::handle lo, nb::handle hi) {
    auto number = [](nb::handle h) -> std::optional<double> {  // a quantized tensor's bound
      if (h.is_none()) return std::nullopt;
      return nb::cast<double>(h);
    };
    if (is_quantized(t.dtype())) [[unlikely]] {
      check_quantized_bounds(t, "clamp", lo, hi, true);
      return quantized_clamp(t, number(lo), number(hi));
    }
    check_clamp_bounds("clamp", t, lo, hi);
    return clamp(t, opt_tensor(lo), opt_tensor(hi));
  };
  both(m, cls, "clamp", clamp_fn, clamp_doc, nb::arg("min") = nb::none(),
       nb::arg("max") = nb::none());
  cls.def(
      "clamp_",
      [opt_tensor](nb::handle self, nb::handle lo, nb::handle hi) {
        if (is_quantized(nb::cast<Tensor&>(self).dtype())) [[unlikely]]
          check_quantized_bounds(nb::cast<Tensor&>(self), "clamp", lo, hi, false);
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
