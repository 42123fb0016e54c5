// ember._C._sparse_guard: the callable in front of a package-level function (ember.mm, ember.add,
// ...) that sends calls with a sparse tensor among their positional or keyword arguments (or in
// a list or tuple given positionally, as cat's) to the function's sparse path
// (python/ember/sparse/). Sparse tensors are instances of one Python class, registered with
// _set_sparse_type, so the check is a few pointer compares. The object and its type are
// guard_object.h's (a Python wrapper doubled ember.add's time); this file holds the check.
//
// It also binds as a method: Tensor's
// methods and operators that take tensor arguments sit behind it (ember/_ops/_tensor_methods.py),
// so that `param @ s` and `x.mm(s)` with a sparse argument take the sparse path (or return
// NotImplemented, for the operators) instead of the binding computing on the values array.
#include "guard_object.h"

namespace ember::py {
namespace {

PyTypeObject* g_sparse_type = nullptr;  // ember.sparse's tensor class (a borrowed reference kept)

// A sparse tensor, or a list or tuple holding one at its top level (cat's and stack's tensors).
bool is_or_holds_sparse(PyObject* a) {
  if (Py_TYPE(a) == g_sparse_type) return true;
  if (!PyList_CheckExact(a) && !PyTuple_CheckExact(a)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(a);
  PyObject** items = PySequence_Fast_ITEMS(a);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (Py_TYPE(items[i]) == g_sparse_type) return true;
  return false;
}

PyObject* sparse_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  GuardObject* g = as_guard(self);
  PyObject* out = nullptr;
  if (route_foreign(self, args, nargsf, kwnames, &out)) return out;
  size_t n = PyVectorcall_NARGS(nargsf);
  bool sparse = false;
  if (g_sparse_type) {
    for (size_t i = 0; i < n && !sparse; ++i) sparse = is_or_holds_sparse(args[i]);
    if (!sparse && kwnames) {
      Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
      for (Py_ssize_t i = 0; i < nk && !sparse; ++i) sparse = Py_TYPE(args[n + i]) == g_sparse_type;
    }
  }
  return PyObject_Vectorcall(sparse ? g->path : g->orig, args, nargsf, kwnames);
}

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_sparse_guard(nb::module_& m) {
  g_guard_type = make_guard_type(m, "ember._C._SparseGuard", "_SparseGuard");
  m.def(
      "_sparse_guard",
      [](nb::object orig, nb::object path) {
        return new_guard(g_guard_type, std::move(orig), std::move(path), sparse_call, 0);
      },
      nb::arg("orig"), nb::arg("path"),
      doc("_sparse_guard(orig, path) -> callable",
          "orig, except that a call with a sparse tensor among its positional or keyword "
          "arguments goes to path. Binds as a method (self is the "
          "first argument)."));
  m.def(
      "_set_sparse_type",
      [](nb::handle cls) {
        EMBER_CHECK(PyType_Check(cls.ptr()), "_set_sparse_type: expected a class");
        // The class lives as long as ember.sparse, which is never unloaded: keep a reference.
        g_sparse_type = reinterpret_cast<PyTypeObject*>(Py_NewRef(cls.ptr()));
      },
      nb::arg("cls"),
      doc("_set_sparse_type(cls) -> None",
          "Registers the class of sparse tensors that _sparse_guard looks for."));
}

}  // namespace ember::py
