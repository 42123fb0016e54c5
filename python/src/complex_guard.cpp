// ember._C._complex_guard: the callable in front of a real-only function or Tensor method that
// sends calls with a complex argument to its complex path (python/ember/_ops/complex.py).
//
// Why C++: a Python wrapper costs a frame on every call, real or complex, which doubled the time
// of small real ops (a / b, exp, cat). This object checks the arguments in a few loads and
// forwards through vectorcall. It binds as a method (Py_TPFLAGS_METHOD_DESCRIPTOR), so
// `x.exp()` and the operator slots (`a / b`) reach it without a bound-method object, and it has
// a `__dict__` so that functools.update_wrapper gives it the original's name, doc and
// `__wrapped__`.
#include <Python.h>
#include <structmember.h>

#include "common.h"

namespace ember::py {
namespace {

enum Kind : int { kUnary = 1, kBinary = 2, kList = -1 };

struct Guard {
  PyObject_HEAD PyObject* orig;
  PyObject* path;
  PyObject* dict;
  vectorcallfunc vectorcall;
  int kind;
};

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
  auto* g = reinterpret_cast<Guard*>(self);
  size_t n = PyVectorcall_NARGS(nargsf);
  bool complex = false;
  if (g->kind == kList) {
    PyObject* list = n > 0 ? args[0] : keyword(args, n, kwnames, "tensors");
    complex = list && any_complex_in(list);
  } else {
    complex = n > 0 && complex_value(args[0]);
    if (!complex && g->kind == kBinary) {
      PyObject* b = n > 1 ? args[1] : keyword(args, n, kwnames, "other");
      if (!b && n <= 1) b = keyword(args, n, kwnames, "exponent");
      complex = b && complex_value(b);
    }
  }
  return PyObject_Vectorcall(complex ? g->path : g->orig, args, nargsf, kwnames);
}

PyObject* guard_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

int guard_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* g = reinterpret_cast<Guard*>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(g->orig);
  Py_VISIT(g->path);
  Py_VISIT(g->dict);
  return 0;
}

int guard_clear(PyObject* self) {
  auto* g = reinterpret_cast<Guard*>(self);
  Py_CLEAR(g->orig);
  Py_CLEAR(g->path);
  Py_CLEAR(g->dict);
  return 0;
}

void guard_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  guard_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* guard_repr(PyObject* self) {
  return PyUnicode_FromFormat("<complex guard of %R>", reinterpret_cast<Guard*>(self)->orig);
}

PyMemberDef guard_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(Guard, dict), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(Guard, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef guard_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot guard_slots[] = {{Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                             {Py_tp_descr_get, reinterpret_cast<void*>(guard_get)},
                             {Py_tp_traverse, reinterpret_cast<void*>(guard_traverse)},
                             {Py_tp_clear, reinterpret_cast<void*>(guard_clear)},
                             {Py_tp_dealloc, reinterpret_cast<void*>(guard_dealloc)},
                             {Py_tp_repr, reinterpret_cast<void*>(guard_repr)},
                             {Py_tp_members, guard_members},
                             {Py_tp_getset, guard_getset},
                             {0, nullptr}};

PyType_Spec guard_spec = {"ember._C._ComplexGuard", sizeof(Guard), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                              Py_TPFLAGS_METHOD_DESCRIPTOR,
                          guard_slots};

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_complex_guard(nb::module_& m) {
  g_guard_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&guard_spec));
  if (!g_guard_type) throw nb::python_error();
  m.attr("_ComplexGuard") = nb::handle(reinterpret_cast<PyObject*>(g_guard_type));
  m.def(
      "_complex_guard",
      [](nb::object orig, nb::object path, int kind) {
        EMBER_CHECK(kind == kUnary || kind == kBinary || kind == kList,
                    "_complex_guard: expected kind 1, 2 or -1; got ", kind);
        auto* g = PyObject_GC_New(Guard, g_guard_type);
        if (!g) throw nb::python_error();
        g->orig = orig.release().ptr();
        g->path = path.release().ptr();
        g->dict = nullptr;
        g->vectorcall = guard_call;
        g->kind = kind;
        PyObject_GC_Track(g);
        return nb::steal(reinterpret_cast<PyObject*>(g));
      },
      nb::arg("orig"), nb::arg("path"), nb::arg("kind"),
      doc("_complex_guard(orig, path, kind) -> callable",
          "orig, except that a call whose first argument (kind 1), first two arguments or "
          "`other` (kind 2), or list of tensors (kind -1) holds a complex value goes to path."));
}

}  // namespace ember::py
