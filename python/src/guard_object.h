// The forwarding guards in front of ember's functions and Tensor methods (_ComplexGuard in
// complex_guard.cpp, _SparseGuard in sparse_guard.cpp, _ArgGuard in arg_guard.cpp) share one
// object layout and one type skeleton; each supplies only its check (the vectorcall).
//
// Why C++ objects and not Python wrappers: a wrapper costs a frame on every call, which doubled
// the time of small ops; a guard checks its arguments in a few loads and forwards through
// vectorcall. Guards bind as methods (Py_TPFLAGS_METHOD_DESCRIPTOR), so `x.exp()` and operator
// slots reach them without a bound-method object, and they have a `__dict__` so that
// functools.update_wrapper gives them the original's name, doc and `__wrapped__`.
#pragma once

#include <Python.h>

#include "common.h"

namespace ember::py {

struct GuardObject {
  PyObject_HEAD PyObject* orig;  // the guarded callable: the common call goes here
  PyObject* path;                // where the guard sends the calls its check catches
  PyObject* dict;
  vectorcallfunc vectorcall;  // the guard's check
  int data;                   // the guard's own setting (the complex guard's arity, ...)
};

// A new guard type named `spec_name` ("ember._C._XGuard"; a string literal: the type keeps it)
// whose instances are GuardObjects; registered on `m` under its short name.
PyTypeObject* make_guard_type(nb::module_& m, const char* spec_name, const char* short_name);

// A guard of `type` in front of `orig`, checking calls with `call`.
nb::object new_guard(PyTypeObject* type, nb::object orig, nb::object path, vectorcallfunc call,
                     int data);

inline GuardObject* as_guard(PyObject* self) { return reinterpret_cast<GuardObject*>(self); }

// Note [Foreign tensors]: a tensor-like Python class that ember's bindings cannot take as it is
// (vmap's BatchedTensor: its logical shape is not its physical tensor's; DTensor: its shape is
// the global one, its data this rank's piece) registers itself with `_set_foreign(cls, hook)`
// (up to kMaxForeign classes, each in its own slot). Every guard first looks for an instance of
// a registered class among the call's positional and keyword arguments (and one level into lists
// and tuples) and, when one is there, calls that class's `hook(guard, args, kwargs)`; the hook's
// result is the call's unless it is NotImplemented (then the guard goes on as usual and the
// binding runs). This is torch's __torch_function__ check at the C++ entry, paid only by the
// guarded callables: one load and a pointer compare per argument and registered class.
// Functions and methods with no guard of their own get `_foreign_guard(orig, mask)`, whose check
// is only this one, limited to the slots in `mask` (kept in the guard's `data`; -1: all).
constexpr int kMaxForeign = 8;
extern int g_foreign_count;

// The slot of the first argument whose class is registered in a slot of `mask`, or -1.
int foreign_in(PyObject* const* args, size_t nargsf, PyObject* kwnames, unsigned mask);

// Slot `slot`'s hook's result for the call (a new reference, or null with the error set);
// Py_NotImplemented (a new reference) when the hook declines.
PyObject* foreign_call(int slot, PyObject* self, PyObject* const* args, size_t nargsf,
                       PyObject* kwnames);

void bind_foreign(nb::module_& m);  // _foreign_guard and _set_foreign

// Whether the call is a foreign hook's: then `*out` is its result (or null with the error set).
inline bool route_foreign(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames,
                          PyObject** out, unsigned mask = ~0u) {
  if (!g_foreign_count) return false;
  int slot = foreign_in(args, nargsf, kwnames, mask);
  if (slot < 0) return false;
  PyObject* r = foreign_call(slot, self, args, nargsf, kwnames);
  if (r == Py_NotImplemented) {
    Py_DECREF(r);
    return false;
  }
  *out = r;
  return true;
}

}  // namespace ember::py
