#pragma once
// ember._C._elementwise_out: an op's name -> its out= form `f(*args, out=out)`, which writes into
// out by torch's out= rules (Note [Meta step] in csrc/ember/ops/meta.h); ember/_argparse.py calls
// it for `out=`. Each binding file adds its family's forms.
#include "common.h"

namespace ember::py {

inline nb::dict out_forms(nb::module_& m) {
  if (!nb::hasattr(m, "_elementwise_out")) m.attr("_elementwise_out") = nb::dict();
  return nb::borrow<nb::dict>(m.attr("_elementwise_out"));
}
/// Adds `fn` to out_forms as `name`: `extra` names its parameters but the last, `out` (they end
/// with nb::kw_only(), or with keyword-only ones).
template <class F, class... Extra>
void out_form(nb::module_& m, const char* name, F fn, const Extra&... extra) {
  out_forms(m)[name] = nb::cpp_function(fn, extra..., nb::arg("out"));
}

}  // namespace ember::py
