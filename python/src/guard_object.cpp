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

// A guard stands for a function, which copy and deepcopy return as is (a module holding
// `self.act = torch.relu` is deep-copied by nn.TransformerEncoder's layer cloning).
PyObject* guard_copy(PyObject* self, PyObject*) { return Py_NewRef(self); }

// Pickled by its public name (ember/_function_ref.py), as Python functions and torch's builtins
// are: `torch.save(model)` of a module holding `self.act = F.gelu`.
PyObject* guard_reduce(PyObject* self, PyObject*) {
  PyObject* mod = PyImport_ImportModule("ember._function_ref");
  if (!mod) return nullptr;
  PyObject* out = PyObject_CallMethod(mod, "reduce_function", "O", self);
  Py_DECREF(mod);
  return out;
}

PyMethodDef guard_methods[] = {{"__copy__", guard_copy, METH_NOARGS, nullptr},
                               {"__deepcopy__", guard_copy, METH_O, nullptr},
                               {"__reduce__", guard_reduce, METH_NOARGS, nullptr},
                               {nullptr, nullptr, 0, nullptr}};

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
                             {Py_tp_methods, guard_methods},
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

int g_foreign_count = 0;

namespace {

struct ForeignClass {
  PyTypeObject* type;
  PyObject* hook;
};
ForeignClass g_foreign[kMaxForeign];
PyTypeObject* g_foreign_guard_type = nullptr;

int foreign_slot(PyTypeObject* type, unsigned mask) {
  for (int i = 0; i < g_foreign_count; ++i)
    if (g_foreign[i].type == type && (mask >> i & 1u)) return i;
  return -1;
}

int is_foreign(PyObject* o, unsigned mask) {
  int slot = foreign_slot(Py_TYPE(o), mask);
  if (slot >= 0) return slot;
  if (!PyList_CheckExact(o) && !PyTuple_CheckExact(o)) return -1;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(o);
  PyObject** items = PySequence_Fast_ITEMS(o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    slot = foreign_slot(Py_TYPE(items[i]), mask);
    if (slot >= 0) return slot;
  }
  return -1;
}

PyObject* foreign_guard_call(PyObject* self, PyObject* const* args, size_t nargsf,
                             PyObject* kwnames) {
  PyObject* out = nullptr;
  if (route_foreign(self, args, nargsf, kwnames, &out, unsigned(as_guard(self)->data))) return out;
  return PyObject_Vectorcall(as_guard(self)->orig, args, nargsf, kwnames);
}

}  // namespace

int foreign_in(PyObject* const* args, size_t nargsf, PyObject* kwnames, unsigned mask) {
  size_t n = PyVectorcall_NARGS(nargsf) + (kwnames ? size_t(PyTuple_GET_SIZE(kwnames)) : 0);
  for (size_t i = 0; i < n; ++i) {
    int slot = is_foreign(args[i], mask);
    if (slot >= 0) return slot;
  }
  return -1;
}

PyObject* foreign_call(int slot, PyObject* self, PyObject* const* args, size_t nargsf,
                       PyObject* kwnames) {
  size_t n = PyVectorcall_NARGS(nargsf);
  PyObject* tuple = PyTuple_New(Py_ssize_t(n));
  if (!tuple) return nullptr;
  for (size_t i = 0; i < n; ++i) PyTuple_SET_ITEM(tuple, Py_ssize_t(i), Py_NewRef(args[i]));
  PyObject* kwargs = PyDict_New();
  if (!kwargs) {
    Py_DECREF(tuple);
    return nullptr;
  }
  Py_ssize_t nk = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t i = 0; i < nk; ++i) {
    if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + size_t(i)]) < 0) {
      Py_DECREF(tuple);
      Py_DECREF(kwargs);
      return nullptr;
    }
  }
  PyObject* r = PyObject_CallFunctionObjArgs(g_foreign[slot].hook, self, tuple, kwargs, nullptr);
  Py_DECREF(tuple);
  Py_DECREF(kwargs);
  return r;
}

void bind_foreign(nb::module_& m) {
  g_foreign_guard_type = make_guard_type(m, "ember._C._ForeignGuard", "_ForeignGuard");
  m.def(
      "_foreign_guard",
      [](nb::object orig, int mask) {
        return new_guard(g_foreign_guard_type, orig, orig, foreign_guard_call, mask);
      },
      nb::arg("orig"), nb::arg("mask") = -1,
      doc("_foreign_guard(orig, mask=-1) -> callable",
          "orig, except that a call with an instance of a class registered by _set_foreign in "
          "one of the slots of `mask` (a bit per slot; -1: every slot) among its arguments goes "
          "to that class's hook first. Binds as a method."));
  m.def(
      "_set_foreign",
      [](nb::handle cls, nb::handle hook) {
        EMBER_CHECK(PyType_Check(cls.ptr()), "_set_foreign: expected a class");
        EMBER_CHECK(PyCallable_Check(hook.ptr()), "_set_foreign: expected a callable hook");
        auto* type = reinterpret_cast<PyTypeObject*>(cls.ptr());
        int slot = 0;
        while (slot < g_foreign_count && g_foreign[slot].type != type) ++slot;
        EMBER_CHECK(slot < kMaxForeign, "_set_foreign: at most ", kMaxForeign, " classes");
        // the classes and hooks live as long as the modules that register them, which are
        // never unloaded: keep references
        Py_XSETREF(g_foreign[slot].hook, Py_NewRef(hook.ptr()));
        if (slot == g_foreign_count) {
          g_foreign[slot].type = reinterpret_cast<PyTypeObject*>(Py_NewRef(cls.ptr()));
          ++g_foreign_count;
        }
        return slot;
      },
      nb::arg("cls"), nb::arg("hook"),
      doc("_set_foreign(cls, hook) -> int",
          "Registers a tensor-like class whose instances ember's guards hand to "
          "hook(guard, args, kwargs) before the binding sees them (vmap's BatchedTensor, "
          "DTensor); returns its slot (the bit for _foreign_guard's mask). Registering a class "
          "again replaces its hook."));
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
