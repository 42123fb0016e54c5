// Special functions (csrc/ember/ops/special.cpp): gamma-family functions and Bessel functions,
// as ember.<op>; python/ember/special composes ember.special from them.
#include <string>
#include <string_view>

#include "common.h"
#include "ember/ops/special.h"
#include "ember/ops/unary_table.h"

namespace ember::py {

namespace {
void bind_special_op(nb::module_& m, std::string_view name, Tensor (*fn)(const Tensor&),
                     const char* text) {
  std::string py(name);
  if (name.starts_with("special_")) py = "_" + py;
  m.def(py.c_str(), fn, nb::arg("input"), doc(py + "(input) -> Tensor", text));
}
}  // namespace

void bind_special(nb::module_& m) {
  // The SPECIAL and NOGRAD rows of the unary table (Note [Unary table] in schema/unary.h):
  // ember.<name>, and ember._special_<x> for special_<x>, which python/ember/special exposes as
  // special.<x>.
#define EMBER_BIND(name, kind, dtypes, node, math, derivative, text) EMBER_BIND_##kind(name, text)
#define EMBER_BIND_SPECIAL(name, text) bind_special_op(m, #name, &ember::name, text);
#define EMBER_BIND_NOGRAD(name, text) EMBER_BIND_SPECIAL(name, text)
#define EMBER_BIND_FLOAT(name, text)
#define EMBER_BIND_SAME(name, text)
#define EMBER_BIND_INT(name, text)
#define EMBER_BIND_BOOL(name, text)
#define EMBER_BIND_ACT(name, text)
  EMBER_UNARY_OPS(EMBER_BIND)
#undef EMBER_BIND
#undef EMBER_BIND_SPECIAL
#undef EMBER_BIND_NOGRAD
#undef EMBER_BIND_FLOAT
#undef EMBER_BIND_SAME
#undef EMBER_BIND_INT
#undef EMBER_BIND_BOOL
#undef EMBER_BIND_ACT
#define EMBER_BIND_SPECIAL_BINARY(name, a, b, math, text)  \
  m.def("_" #name, &ember::name, nb::arg(#a), nb::arg(#b), \
        doc("_" #name "(" #a ", " #b ") -> Tensor", text));
  EMBER_SPECIAL_BINARY_OPS(EMBER_BIND_SPECIAL_BINARY)
#undef EMBER_BIND_SPECIAL_BINARY
  m.def("polygamma", &polygamma, nb::arg("n"), nb::arg("input"),
        doc("polygamma(n, input) -> Tensor", "The n-th derivative of digamma, elementwise."));
}

}  // namespace ember::py
