// Special functions (csrc/ember/ops/special.cpp): gamma-family functions and Bessel functions,
// as ember.<op>; python/ember/special composes ember.special from them.
#include "common.h"
#include "ember/ops/special.h"

namespace ember::py {

void bind_special(nb::module_& m) {
  m.def("lgamma", &lgamma, nb::arg("input"),
        doc("lgamma(input) -> Tensor",
            "The natural log of the absolute value of Gamma(x), elementwise."));
  m.def("digamma", &digamma, nb::arg("input"),
        doc("digamma(input) -> Tensor", "The derivative of lgamma, elementwise."));
  m.def("polygamma", &polygamma, nb::arg("n"), nb::arg("input"),
        doc("polygamma(n, input) -> Tensor", "The n-th derivative of digamma, elementwise."));
  m.def("i0", &i0, nb::arg("input"),
        doc("i0(input) -> Tensor", "The modified Bessel function of the first kind and order 0."));
  m.def("_special_i0e", &special_i0e, nb::arg("input"),
        doc("_special_i0e(input) -> Tensor",
            "exp(-|x|) * i0(x), without overflow (ember.special.i0e)."));
  m.def("_special_i1", &special_i1, nb::arg("input"),
        doc("_special_i1(input) -> Tensor",
            "The modified Bessel function of the first kind and order 1 (ember.special.i1)."));
  m.def("_special_i1e", &special_i1e, nb::arg("input"),
        doc("_special_i1e(input) -> Tensor",
            "exp(-|x|) * i1(x), without overflow (ember.special.i1e)."));
}

}  // namespace ember::py
