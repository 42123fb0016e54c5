#include "guard_object.h"

#include <structmember.h>

namespace ember::py {
namespace {

PyObject* guard_get(PyObject* self, PyObject* obj, PyObject*) {
  if (!obj || obj == Py_None) return Py_NewRef(self);
  return PyMethod_New(self, obj);
}

int guard_traverse(PyObject* self, visitproc visit, void* arg) {
  GuardObject* g = as_guard(self);
  Py_VISIT(Py_TYPE(self));
  Py_VISIT(g->orig);
  Py_VISIT(g->path);
  Py_VISIT(g->dict);
  return 0;
}

int guard_clear(PyObject* self) {
  GuardObject* g = as_guard(self);
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
  return PyUnicode_FromFormat("<%s of %R>", Py_TYPE(self)->tp_name, as_guard(self)->orig);
}

PyMemberDef guard_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(GuardObject, dict), READONLY, nullptr},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(GuardObject, vectorcall), READONLY, nullptr},
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

}  // namespace

PyTypeObject* make_guard_type(nb::module_& m, const char* spec_name, const char* short_name) {
  // PyType_FromSpec copies the slots; the spec itself may be a temporary
  PyType_Spec spec = {spec_name, sizeof(GuardObject), 0,
                      Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                          Py_TPFLAGS_METHOD_DESCRIPTOR,
                      guard_slots};
  auto* type = reinterpret_cast<PyTypeObject*>(PyType_FromSpec(&spec));
  if (!type) throw nb::python_error();
  m.attr(short_name) = nb::handle(reinterpret_cast<PyObject*>(type));
  return type;
}

nb::object new_guard(PyTypeObject* type, nb::object orig, nb::object path, vectorcallfunc call,
                     int data) {
  auto* g = PyObject_GC_New(GuardObject, type);
  if (!g) throw nb::python_error();
  g->orig = orig.release().ptr();
  g->path = path.release().ptr();
  g->dict = nullptr;
  g->vectorcall = call;
  g->data = data;
  PyObject_GC_Track(g);
  return nb::steal(reinterpret_cast<PyObject*>(g));
}

}  // namespace ember::py
