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

}  // namespace ember::py
