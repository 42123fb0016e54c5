// Bindings for the API-breadth layer: special functions (ember.special, ember.lgamma ...), the
// LAPACK factorizations behind ember.linalg (composed in python/ember/linalg.py), and the
// geometry setter behind the in-place view ops (transpose_, t_, swapaxes_ ...).
#include "common.h"
#include "ember/autograd/node.h"
#include "ember/ops/linalg_lapack.h"
#include "ember/ops/special.h"

namespace ember::py {

void bind_extra_ops(nb::module_& m) {
  // fn() runs after every accumulation into the leaf's .grad; python/ember/_tensor_extra.py
  // wraps the user's hook(tensor) and makes it removable.
  m.def("_register_post_accumulate_grad_hook", [](const Tensor& t, nb::object fn) {
    EMBER_CHECK(t.requires_grad(), "cannot register a hook on a tensor that doesn't require gradient");
    EMBER_CHECK(t.is_leaf(), "post accumulate grad hooks cannot be registered on non-leaf tensors");
    // The callable may outlive the GIL holder that registered it: drop it under the GIL.
    std::shared_ptr<nb::object> held(new nb::object(std::move(fn)), [](nb::object* o) {
      if (Py_IsInitialized()) {
        nb::gil_scoped_acquire gil;
        delete o;
      } else {
        o->release();  // the interpreter is gone: nothing left to decrement
        delete o;
      }
    });
    autograd::meta(t).post_accumulate_hooks.push_back([held] {
      nb::gil_scoped_acquire gil;
      (*held)();
    });
  }, nb::arg("tensor"), nb::arg("fn"));
  // Gives self the sizes, strides and offset of `view`, a view of self's storage.
  m.def("_set_geometry_", [](nb::handle self, const Tensor& view) {
    Tensor& t = nb::cast<Tensor&>(self);
    EMBER_CHECK(view.storage().get() == t.storage().get(),
                "[_set_geometry_] expected a view of the same storage");
    t.impl()->set_geometry(view.sizes(), view.strides(), view.storage_offset());
    return nb::borrow(self);
  }, nb::arg("self"), nb::arg("view"));
  m.def("lgamma", &lgamma, nb::arg("input"), "log |Gamma(input)|.");
  m.def("digamma", &digamma, nb::arg("input"), "The logarithmic derivative of Gamma.");
  m.def("polygamma", &polygamma, nb::arg("n"), nb::arg("input"), "The n-th derivative of digamma.");
  m.def("i0", &i0, nb::arg("input"), "Modified Bessel function of the first kind, order 0.");
  m.def("_special_i0e", &special_i0e, nb::arg("input"));
  m.def("_special_i1", &special_i1, nb::arg("input"));
  m.def("_special_i1e", &special_i1e, nb::arg("input"));

  nb::module_ la = m.def_submodule("_linalg", "LAPACK factorizations behind ember.linalg");
  la.def("lu_factor_ex", &linalg_lu_factor_ex, nb::arg("A"));
  la.def("solve_ex", &linalg_solve_ex, nb::arg("A"), nb::arg("B"));
  la.def("cholesky_ex", &linalg_cholesky_ex, nb::arg("A"), nb::arg("upper"));
  la.def("qr", &linalg_qr, nb::arg("A"), nb::arg("mode"));
  la.def("svd_ex", &linalg_svd_ex, nb::arg("A"), nb::arg("full_matrices"), nb::arg("compute_uv"));
  la.def("eigh_ex", &linalg_eigh_ex, nb::arg("A"), nb::arg("upper"), nb::arg("compute_v"));
  la.def("solve_triangular_left", &linalg_solve_triangular_left, nb::arg("A"), nb::arg("B"),
         nb::arg("upper"), nb::arg("unitriangular"));
}

}  // namespace ember::py
