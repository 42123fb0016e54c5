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
//
// With a signature table (`check`, built by _argparse.py's strict ops) the guard also checks the
// call before the binding runs, so that what torch's parser rejects and the binding would take
// (`std(x, True, correction=0)`, `argmax(x, True)`, `movedim(x, (0, 1), 0)`) reaches the slow
// path, which raises torch's TypeError. The check is conservative: it accepts only arguments
// whose type it can tell in a few loads (a Tensor, an exact int, a bool, a float, a str, a
// tuple or list of exact ints, a dtype); anything else (numpy scalars, 0-d tensors for ints,
// varargs sizes) goes to the slow path, which binds it as torch's parser does.
#include <cstdint>
#include <cstring>
#include <vector>

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

// Parameter types of a signature table (codes as _argparse.py's _CODES).
enum Code : uint8_t {
  kAny = 0,
  kTensor = 1,
  kNumber = 2,
  kInt = 3,
  kFloat = 4,
  kBool = 5,
  kStr = 6,
  kIntList = 7,     // tuple of ints
  kIntListOr1 = 8,  // tuple of ints that takes one int (torch's int[1]: dim, shifts)
  kTensorList = 9,
  kDtype = 10,
};

struct Param {
  PyObject* name;  // a new reference, kept for the process's lifetime (as the table)
  std::vector<PyObject*> aliases;  // numpy's spellings torch takes too (axis for dim)
  uint8_t code;
  bool has_default, kwonly, optional;
};

struct Table {
  bool method;  // args[0] is self: the signatures start after it
  std::vector<std::vector<Param>> sigs;
};

std::vector<Table>& tables() {
  static auto* t = new std::vector<Table>();  // never freed: guards live as long as the module
  return *t;
}

PyTypeObject* g_tensor_type = nullptr;
PyTypeObject* g_dtype_type = nullptr;

bool exact_int(PyObject* v) { return PyLong_CheckExact(v); }

bool int_list(PyObject* v) {
  if (!PyTuple_Check(v) && !PyList_Check(v)) return false;
  Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
  PyObject** items = PySequence_Fast_ITEMS(v);
  for (Py_ssize_t i = 0; i < n; ++i)
    if (!exact_int(items[i])) return false;
  return true;
}

// Whether `v` is certainly accepted for `p` (false: wrong or not told cheaply).
bool accepts(const Param& p, PyObject* v) {
  if (v == Py_None) return p.optional;
  switch (p.code) {
    case kTensor:
      return PyObject_TypeCheck(v, g_tensor_type);
    case kNumber:
      return PyLong_Check(v) || PyFloat_Check(v) || PyComplex_Check(v);
    case kInt:
      return exact_int(v);
    case kFloat:
      return PyFloat_Check(v) || exact_int(v);
    case kBool:
      return PyBool_Check(v);
    case kStr:
      return PyUnicode_Check(v);
    case kIntListOr1:
      if (exact_int(v)) return true;
      return int_list(v);
    case kIntList:
      return int_list(v);
    case kTensorList: {
      if (!PyTuple_Check(v) && !PyList_Check(v)) return false;
      Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
      PyObject** items = PySequence_Fast_ITEMS(v);
      for (Py_ssize_t i = 0; i < n; ++i)
        if (!PyObject_TypeCheck(items[i], g_tensor_type)) return false;
      return true;
    }
    case kDtype:
      return g_dtype_type && PyObject_TypeCheck(v, g_dtype_type);
    default:
      return true;
  }
}

bool same_name(PyObject* a, PyObject* b) {
  return a == b || PyUnicode_Compare(a, b) == 0;  // keyword names are interned: usually a == b
}

bool binds(const std::vector<Param>& sig, PyObject* const* args, Py_ssize_t nargs,
           PyObject* kwnames) {
  size_t npos = 0;
  while (npos < sig.size() && !sig[npos].kwonly) ++npos;
  if (static_cast<size_t>(nargs) > npos || sig.size() > 64) return false;
  uint64_t given = 0;
  for (Py_ssize_t i = 0; i < nargs; ++i) {
    if (!accepts(sig[i], args[i])) return false;
    given |= uint64_t{1} << i;
  }
  Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
  for (Py_ssize_t k = 0; k < nkw; ++k) {
    PyObject* key = PyTuple_GET_ITEM(kwnames, k);
    size_t j = 0;
    while (j < sig.size() && !same_name(sig[j].name, key)) ++j;
    for (size_t a = 0; j == sig.size() && a < sig.size(); ++a)
      for (PyObject* alias : sig[a].aliases)
        if (same_name(alias, key)) j = a;
    if (j == sig.size() || (given >> j & 1) || !accepts(sig[j], args[nargs + k])) return false;
    given |= uint64_t{1} << j;
  }
  for (size_t j = 0; j < sig.size(); ++j)
    if (!(given >> j & 1) && !sig[j].has_default) return false;
  return true;
}

// Whether the call certainly binds one of the guard's signatures (true without a table).
bool call_binds(const GuardObject* g, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  int index = g->data >> 1;
  if (index == 0) return true;
  const Table& t = tables()[index - 1];
  Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
  if (t.method) {
    if (nargs == 0) return false;
    ++args;
    --nargs;
  }
  for (const auto& sig : t.sigs)
    if (binds(sig, args, nargs, kwnames)) return true;
  return false;
}

PyObject* guard_call(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {
  GuardObject* g = as_guard(self);
  PyObject* out = nullptr;
  if (route_foreign(self, args, nargsf, kwnames, &out)) return out;
  if (has_out_keyword(kwnames) || !call_binds(g, args, nargsf, kwnames))
    return PyObject_Vectorcall(g->path, args, nargsf, kwnames);
  PyObject* r = PyObject_Vectorcall(g->orig, args, nargsf, kwnames);
  if (r || !binding_rejected_arguments((g->data & 1) != 0)) return r;
  return PyObject_Vectorcall(g->path, args, nargsf, kwnames);
}

PyTypeObject* g_guard_type = nullptr;

}  // namespace

void bind_arg_guard(nb::module_& m) {
  g_guard_type = make_guard_type(m, "ember._C._ArgGuard", "_ArgGuard");
  m.def(
      "_arg_guard",
      [](nb::object orig, nb::object slow, bool any_type_error, nb::object check, bool method) {
        int data = any_type_error ? 1 : 0;
        if (!check.is_none()) {
          if (!g_tensor_type)
            g_tensor_type = reinterpret_cast<PyTypeObject*>(nb::type<Tensor>().ptr());
          Table t{method, {}};
          for (nb::handle sig : check) {
            std::vector<Param> params;
            auto intern = [](nb::str text) {
              PyObject* o = text.release().ptr();
              PyUnicode_InternInPlace(&o);
              return o;
            };
            for (nb::handle p : sig) {
              auto [name, code, flags, aliases] =
                  nb::cast<std::tuple<nb::str, int, int, std::vector<nb::str>>>(p);
              std::vector<PyObject*> alias_refs;
              for (auto& a : aliases) alias_refs.push_back(intern(a));
              params.push_back({intern(name), std::move(alias_refs), static_cast<uint8_t>(code),
                                (flags & 1) != 0, (flags & 2) != 0, (flags & 4) != 0});
            }
            t.sigs.push_back(std::move(params));
          }
          tables().push_back(std::move(t));
          data |= static_cast<int>(tables().size()) << 1;
        }
        return new_guard(g_guard_type, std::move(orig), std::move(slow), guard_call, data);
      },
      nb::arg("orig"), nb::arg("slow"), nb::arg("any_type_error") = false,
      nb::arg("check") = nb::none(), nb::arg("method") = false,
      doc("_arg_guard(orig, slow, any_type_error=False, check=None, method=False) -> callable",
          "orig, except that a call with out= or one orig's binding rejects as incompatible "
          "(with any_type_error: any TypeError) goes to slow (torch's argument parser, "
          "ember/_argparse.py); with check (signatures: tuples of (name, type code, flags)), "
          "so does a call that does not certainly bind one of them (method: after self); a "
          "signature is a tuple of (name, type code, flags, aliases)."));
  m.def(
      "_arg_guard_dtype_type",
      [](nb::handle t) { g_dtype_type = reinterpret_cast<PyTypeObject*>(Py_NewRef(t.ptr())); },
      nb::arg("dtype_type"),
      doc("_arg_guard_dtype_type(dtype_type) -> None",
          "The dtype class, for the argument guard's signature checks."));
}

}  // namespace ember::py
