// numpy's keyword spellings for bindings that take `dim`/`keepdim`. See Note [numpy keywords].
#include <string>
#include <string_view>

#include <nanobind/stl/string_view.h>

#include "common.h"

namespace ember::py {

// Note [numpy keywords]
// PyTorch's argument parser takes numpy's `axis` for `dim` and `keepdims` for `keepdim` in every
// builtin (x.sum(axis=1, keepdims=True)). Each binding with such a parameter gets one more
// overload, tried only after its real ones have failed: it renames those keywords and calls the
// binding again. The common path pays nothing; a call with neither keyword falls through to
// nanobind's usual TypeError. ember's Python-level functions get the same renaming from
// ember._numpy_kwargs.

namespace {

bool names_parameter(std::string_view sig, std::string_view name) {
  for (size_t i = sig.find(name); i != std::string_view::npos; i = sig.find(name, i + 1)) {
    char before = i ? sig[i - 1] : '(';
    char after = i + name.size() < sig.size() ? sig[i + name.size()] : ')';
    if ((before == '(' || before == ' ') && (after == ':' || after == '=' || after == ','))
      return true;
  }
  return false;
}

bool takes_dim(nb::handle fn) {
  nb::object sigs = nb::getattr(fn, "__nb_signature__", nb::none());
  if (sigs.is_none()) return false;
  for (nb::handle overload : sigs) {
    std::string_view sig = nb::cast<std::string_view>(overload[0]);
    if (names_parameter(sig, "dim") || names_parameter(sig, "keepdim")) return true;
  }
  return false;
}

// kwargs with axis/keepdims renamed, or None if it has neither.
nb::object renamed(const nb::kwargs& kwargs) {
  nb::dict out;
  bool any = false;
  for (auto [key, value] : kwargs) {
    std::string_view k = nb::cast<std::string_view>(key);
    if (k == "axis") {
      out["dim"] = value, any = true;
    } else if (k == "keepdims") {
      out["keepdim"] = value, any = true;
    } else {
      out[key] = value;
    }
  }
  return any ? nb::object(out) : nb::none();
}

}  // namespace

void add_numpy_kwargs(nb::handle scope, bool methods) {
  nb::list names = nb::steal<nb::list>(PyObject_Dir(scope.ptr()));
  for (nb::handle name : names) {
    // the class's own members only (dir also lists inherited ones)
    nb::object own = nb::getattr(scope, "__dict__");
    if (methods && PySequence_Contains(own.ptr(), name.ptr()) != 1) continue;
    nb::object fn = methods ? own[name] : nb::getattr(scope, name);
    std::string_view type = Py_TYPE(fn.ptr())->tp_name;
    if (type.find(methods ? "nb_method" : "nb_func") == std::string_view::npos || !takes_dim(fn))
      continue;
    // Defining a function under an existing name appends an overload to it; the fallback calls
    // the whole overload set again by name (renamed keywords never reach it twice).
    nb::str n = nb::borrow<nb::str>(name);
    // The fallback repeats the docstring of the first overload, so that __doc__ shows it once
    // (nanobind lists per-overload docstrings when they differ).
    nb::object first_doc = nb::getattr(fn, "__nb_signature__")[0][1];
    std::string doc_text = first_doc.is_none() ? std::string() : nb::cast<std::string>(first_doc);
    const char* d = doc_text.c_str();
    if (methods) {
      nb::cpp_function_def(
          [scope, n](nb::handle self, nb::args args, nb::kwargs kwargs) -> nb::object {
            nb::object kw = renamed(kwargs);
            if (kw.is_none()) throw nb::next_overload();
            return nb::getattr(self, n)(*args, **nb::borrow<nb::dict>(kw));
          },
          nb::scope(scope), nb::name(n.c_str()), nb::is_method(), d);
    } else {
      nb::cpp_function_def(
          [scope, n](nb::args args, nb::kwargs kwargs) -> nb::object {
            nb::object kw = renamed(kwargs);
            if (kw.is_none()) throw nb::next_overload();
            return nb::getattr(scope, n)(*args, **nb::borrow<nb::dict>(kw));
          },
          nb::scope(scope), nb::name(n.c_str()), d);
    }
  }
}

}  // namespace ember::py
