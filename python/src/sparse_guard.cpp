// ember._C._sparse_guard: the callable in front of a package-level function (ember.mm, ember.add,
// ...) that sends calls with a sparse tensor among their positional or keyword arguments (not
// inside lists) to the function's sparse path (python/ember/sparse/). Sparse tensors are
// instances of one Python class, registered with _set_sparse_type, so the check is a few
// pointer compares.
//
// Why C++: a Python wrapper costs a frame on every call of these functions, dense or sparse
// (ember.add went from 0.7 to 1.3 us); this object forwards through vectorcall instead, as the
// complex guards do (complex_guard.cpp, whose layout it follows).
//
// It also binds as a method (Py_TPFLAGS_METHOD_DESCRIPTOR, as the complex guard): Tensor's
// methods and operators that take tensor arguments sit behind it (ember/_ops/_tensor_methods.py),
// so that `param @ s` and `x.mm(s)` with a sparse argument take the sparse path (or return
// NotImplemented, for the operators) instead of the binding computing on the values array.
#include <Python.h>
#include <structmember.h>

#include "common.h"

namespace ember::py {
namespace {

struct SparseGuard {
  PyObject_HEAD PyObject* orig;
  PyObject* path;
  PyObject* dict;
  vectorcallfunc vectorcall;
};

PyTypeObject* g_sparse_type = nullptr;  // ember.sparse's tensor class (a borrowed reference kept)

PyObject* sparse_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  auto* g = reinterpret_cast<SparseGuard*>(self);
  size_t n = PyVectorcall_NARGS(nargsf);
  bool sparse = false;
  if (g_sparse_type) {
    for (size_t i = 0; i < n && !sparse; ++i) sparse = Py_TYPE(args[i]) == g_sparse_type;
    if (!sparse && kwnames) {
      Py_ssize_t nk = PyTuple_GET_SIZE(kwnames);
      for (Py_ssize_t i = 0; i < nk && !sparse; ++i) sparse = Py_TYPE(args[n + i]) == g_sparse_type;
    }
  }
  return PyObject_Vectorcall(sparse ? g->path : g->orig, args, nargsf, kwnames);
}

PyObject* sparse_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

int sparse_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* g = reinterpret_cast<SparseGuard*>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(g->orig);
  Py_VISIT(g->path);
  Py_VISIT(g->dict);
  return 0;
}

int sparse_clear(PyObject* self) {
  auto* g = reinterpret_cast<SparseGuard*>(self);
  Py_CLEAR(g->orig);
  Py_CLEAR(g->path);
  Py_CLEAR(g->dict);
  return 0;
}

void sparse_dealloc(PyObject* self) {
  PyTypeObject* type = Py_TYPE(self);
  PyObject_GC_UnTrack(self);
  sparse_clear(self);
  type->tp_free(self);
  Py_DECREF(type);
}

PyObject* sparse_repr(PyObject* self) {
  return PyUnicode_FromFormat("<sparse guard of %R>", reinterpret_cast<SparseGuard*>(self)->orig);
}

PyMemberDef sparse_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(SparseGuard, dict), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(SparseGuard, vectorcall), READONLY, nullptr},
    {nullptr, 0, 0, 0, nullptr}};

PyGetSetDef sparse_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, nullptr, nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr}};

PyType_Slot sparse_slots[] = {{Py_tp_call, reinterpret_cast<void*>(PyVectorcall_Call)},
                              {Py_tp_descr_get, reinterpret_cast<void*>(sparse_get)},
                              {Py_tp_traverse, reinterpret_cast<void*>(sparse_traverse)},
                              {Py_tp_clear, reinterpret_cast<void*>(sparse_clear)},
                              {Py_tp_dealloc, reinterpret_cast<void*>(sparse_dealloc)},
                              {Py_tp_repr, reinterpret_cast<void*>(sparse_repr)},
                              {Py_tp_members, sparse_members},
                              {Py_tp_getset, sparse_getset},
                              {0, nullptr}};

PyType_Spec sparse_spec = {"ember._C._SparseGuard", sizeof(SparseGuard), 0,
                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                               Py_TPFLAGS_METHOD_DESCRIPTOR,
                           sparse_slots};

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_sparse_guard(nb::module_& m) {
  g_guard_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&sparse_spec));
  if (!g_guard_type) throw nb::python_error();
  m.attr("_SparseGuard") = nb::handle(reinterpret_cast<PyObject*>(g_guard_type));
  m.def(
      "_sparse_guard",
      [](nb::object orig, nb::object path) {
        auto* g = PyObject_GC_New(SparseGuard, g_guard_type);
        if (!g) throw nb::python_error();
        g->orig = orig.release().ptr();
        g->path = path.release().ptr();
        g->dict = nullptr;
        g->vectorcall = sparse_call;
        PyObject_GC_Track(g);
        return nb::steal(reinterpret_cast<PyObject*>(g));
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
