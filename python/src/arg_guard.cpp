// ember._C._arg_guard: the callable in front of a function or Tensor method that takes torch's
// `out=` keyword or has overloads that torch's argument parser resolves and the binding does not.
//
// The common call costs one vectorcall: without `out=` the arguments go straight to the binding.
// Only two cases reach the Python side (`slow`, built by ember/_argparse.py): a call with `out=`,
// and a call the binding rejected with nanobind's "incompatible function arguments" TypeError,
// which the slow path resolves against torch's signatures (calling the binding again in the form
// it takes) or words as torch's parser does. The object and its type are guard_object.h's (its
// `path` is the slow path; its `data` says whether every TypeError is re-resolved: the op has
// torch's signatures); this file holds the check.
#include <cstring>

#include "guard_object.h"

namespace ember::py {
namespace {

bool has_out_keyword(PyObject* kwnames) {
  if (!kwnames) return false;
  Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), "out") == 0) return true;
  return false;
}

// The pending TypeError is nanobind's overload-resolution failure (the binding never ran), or
// with `any` any TypeError (the binding's own argument checks: the slow path words them).
bool binding_rejected_arguments(bool any) {
  if (!PyErr_ExceptionMatches(PyExc_TypeError)) return false;
  if (any) {
    PyErr_Clear();
    return true;
  }
  PyObject *type, *value, *tb;
  PyErr_Fetch(&type, &value, &tb);
  PyErr_NormalizeException(&type, &value, &tb);
  bool rejected = false;
  if (value) {
    PyObject* text = PyObject_Str(value);
    if (text) {
      const char* s = PyUnicode_AsUTF8(text);
      rejected = s && std::strstr(s, "incompatible function arguments") != nullptr;
      Py_DECREF(text);
    }
    PyErr_Clear();
  }
  if (rejected) {
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
  } else {
    PyErr_Restore(type, value, tb);
  }
  return rejected;
}

PyObject* guard_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  GuardObject* g = as_guard(self);
  if (has_out_keyword(kwnames)) return PyObject_Vectorcall(g->path, args, nargsf, kwnames);
  PyObject* r = PyObject_Vectorcall(g->orig, args, nargsf, kwnames);
  if (r || !binding_rejected_arguments(g->data != 0)) return r;
  return PyObject_Vectorcall(g->path, args, nargsf, kwnames);
}

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_arg_guard(nb::module_& m) {
  g_guard_type = make_guard_type(m, "ember._C._ArgGuard", "_ArgGuard");
  m.def(
      "_arg_guard",
      [](nb::object orig, nb::object slow, bool any_type_error) {
        return new_guard(g_guard_type, std::move(orig), std::move(slow), guard_call,
                         any_type_error ? 1 : 0);
      },
      nb::arg("orig"), nb::arg("slow"), nb::arg("any_type_error") = false,
      doc("_arg_guard(orig, slow, any_type_error=False) -> callable",
          "orig, except that a call with out= or one orig's binding rejects as incompatible "
          "(with any_type_error: any TypeError) goes to slow (torch's argument parser, "
          "ember/_argparse.py)."));
}

}  // namespace ember::py
