// ember._C._arg_guard: the callable in front of a function or Tensor method that takes torch's
// `out=` keyword or has overloads that torch's argument parser resolves and the binding does not.
//
// The common call costs one vectorcall: without `out=` the arguments go straight to the binding.
// Only two cases reach the Python side (`slow`, built by ember/_argparse.py): a call with `out=`,
// and a call the binding rejected with nanobind's "incompatible function arguments" TypeError,
// which the slow path resolves against torch's signatures (calling the binding again in the form
// it takes) or words as torch's parser does. Like _ComplexGuard it binds as a method and has a
// `__dict__` for functools.update_wrapper.
#include <Python.h>
#include <structmember.h>

#include <cstring>

#include "common.h"

namespace ember::py {
namespace {

struct ArgGuard {
  PyObject_HEAD PyObject* orig;
  PyObject* slow;
  PyObject* dict;
  vectorcallfunc vectorcall;
  bool any_type_error;  // the op has torch's signatures: every TypeError is re-resolved
};

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
  auto* g = reinterpret_cast<ArgGuard*>(self);
  if (has_out_keyword(kwnames)) return PyObject_Vectorcall(g->slow, args, nargsf, kwnames);
  PyObject* r = PyObject_Vectorcall(g->orig, args, nargsf, kwnames);
  if (r || !binding_rejected_arguments(g->any_type_error)) return r;
  return PyObject_Vectorcall(g->slow, args, nargsf, kwnames);
}

PyObject* guard_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

int guard_traverse(PyObject* self, visitproc visit, void* arg) {
  auto* g = reinterpret_cast<ArgGuard*>(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(g->orig);
  Py_VISIT(g->slow);
  Py_VISIT(g->dict);
  return 0;
}

int guard_clear(PyObject* self) {
  auto* g = reinterpret_cast<ArgGuard*>(self);
  Py_CLEAR(g->orig);
  Py_CLEAR(g->slow);
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
  return PyUnicode_FromFormat("<argument guard of %R>", reinterpret_cast<ArgGuard*>(self)->orig);
}

PyMemberDef guard_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(ArgGuard, dict), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(ArgGuard, vectorcall), READONLY, nullptr},
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

PyType_Spec guard_spec = {"ember._C._ArgGuard", sizeof(ArgGuard), 0,
                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                              Py_TPFLAGS_METHOD_DESCRIPTOR,
                          guard_slots};

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_arg_guard(nb::module_& m) {
  g_guard_type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&guard_spec));
  if (!g_guard_type) throw nb::python_error();
  m.attr("_ArgGuard") = nb::handle(reinterpret_cast<PyObject*>(g_guard_type));
  m.def(
      "_arg_guard",
      [](nb::object orig, nb::object slow, bool any_type_error) {
        auto* g = PyObject_GC_New(ArgGuard, g_guard_type);
        if (!g) throw nb::python_error();
        g->orig = orig.release().ptr();
        g->slow = slow.release().ptr();
        g->dict = nullptr;
        g->vectorcall = guard_call;
        g->any_type_error = any_type_error;
        PyObject_GC_Track(g);
        return nb::steal(reinterpret_cast<PyObject*>(g));
      },
      nb::arg("orig"), nb::arg("slow"), nb::arg("any_type_error") = false,
      doc("_arg_guard(orig, slow, any_type_error=False) -> callable",
          "orig, except that a call with out= or one orig's binding rejects as incompatible "
          "(with any_type_error: any TypeError) goes to slow (torch's argument parser, "
          "ember/_argparse.py)."));
}

}  // namespace ember::py
