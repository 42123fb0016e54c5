// ember._C._complex_guard: the callable in front of a real-only function or Tensor method that
// sends calls with a complex argument to its complex path (python/ember/_ops/complex.py). The
// object and its type are guard_object.h's; this file holds the check.
#include "guard_object.h"

namespace ember::py {
namespace {

enum Kind : int { kUnary = 1, kBinary = 2, kList = -1 };

bool complex_tensor(PyObject* o) {
  nb::handle h(o);
  if (!nb::isinstance<Tensor>(h)) return false;
  return is_complex(nb::inst_ptr<Tensor>(h)->dtype());
}

bool complex_value(PyObject* o) { return PyComplex_CheckExact(o) || complex_tensor(o); }

bool any_complex_in(PyObject* seq) {
  if (complex_tensor(seq)) return true;  // a tensor passed where a list goes: its own dtype
  if (!PyList_Check(seq) && !PyTuple_Check(seq)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(seq);
  PyObject** items = PySequence_Fast_ITEMS(seq);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (complex_tensor(items[i])) return true;
  return false;
}

// The keyword argument `name` of a vectorcall, or null.
PyObject* keyword(PyObject* const* args, size_t nargs, PyObject* kwnames, const char* name) {
  if (!kwnames) return nullptr;
  Py_ssize_t n = PyTuple_GET_SIZE(kwnames);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, i), name) == 0)
      return args[nargs + i];
  return nullptr;
}

PyObject* guard_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  GuardObject* g = as_guard(self);
  PyObject* out = nullptr;
  if (route_foreign(self, args, nargsf, kwnames, &out)) return out;
  size_t n = PyVectorcall_NARGS(nargsf);
  bool complex = false;
  if (g->data == kList) {
    PyObject* list = n > 0 ? args[0] : keyword(args, n, kwnames, "tensors");
    complex = list && any_complex_in(list);
  } else {
    complex = n > 0 && complex_value(args[0]);
    if (!complex && g->data == kBinary) {
      PyObject* b = n > 1 ? args[1] : keyword(args, n, kwnames, "other");
      if (!b && n <= 1) b = keyword(args, n, kwnames, "exponent");
      complex = b && complex_value(b);
    }
  }
  return PyObject_Vectorcall(complex ? g->path : g->orig, args, nargsf, kwnames);
}

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_complex_guard(nb::module_& m) {
  g_guard_type = make_guard_type(m, "ember._C._ComplexGuard", "_ComplexGuard");
  m.def(
      "_complex_guard",
      [](nb::object orig, nb::object path, int kind) {
        EMBER_CHECK(kind == kUnary || kind == kBinary || kind == kList,
                    "_complex_guard: expected kind 1, 2 or -1; got ", kind);
        return new_guard(g_guard_type, std::move(orig), std::move(path), guard_call, kind);
      },
      nb::arg("orig"), nb::arg("path"), nb::arg("kind"),
      doc("_complex_guard(orig, path, kind) -> callable",
          "orig, except that a call whose first argument (kind 1), first two arguments or "
          "`other` (kind 2), or list of tensors (kind -1) holds a complex value goes to path."));
}

}  // namespace ember::py
