// The dispatcher's per-op hook into Python's dispatch modes (Note [Python dispatch hook] in
// dispatch/python_dispatch.h): boxed values to Python objects and back, and the continuation
// that runs the op below the hook.
#include "common.h"

#include <memory>

#include "ember/dispatch/python_dispatch.h"

namespace ember::py {

namespace {

PyObject* g_handler = nullptr;  // ember._dispatch_bridge.from_dispatcher; owned, never released

nb::object to_py(const BoxedValue& v) {
  return std::visit(
      [](const auto& x) -> nb::object {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nb::none();
        } else if constexpr (std::is_same_v<T, Scalar>) {
          if (x.is_bool()) return nb::bool_(x.to_bool());
          if (x.is_floating_point()) return nb::float_(x.to_double());
          return nb::int_(x.to_long());
        } else if constexpr (std::is_same_v<T, ScalarType>) {
          return dtype_object(x);
        } else if constexpr (std::is_same_v<T, std::vector<std::optional<Tensor>>>) {
          nb::list l;
          for (const auto& t : x) l.append(t ? nb::cast(*t) : nb::none());
          return l;
        } else if constexpr (std::is_same_v<T, std::vector<bool>>) {
          nb::list l;
          for (bool b : x) l.append(nb::bool_(b));
          return l;
        } else {
          return nb::cast(x);
        }
      },
      v);
}

BoxedValue from_py(nb::handle h) {
  if (h.is_none()) return std::monostate{};
  if (nb::isinstance<Tensor>(h)) return nb::cast<Tensor>(h);
  if (PyBool_Check(h.ptr())) return nb::cast<bool>(h);
  if (PyLong_Check(h.ptr())) return nb::cast<int64_t>(h);
  if (PyFloat_Check(h.ptr())) return nb::cast<double>(h);
  if (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) {
    std::vector<Tensor> ts;
    for (nb::handle e : h) {
      EMBER_CHECK_TYPE(nb::isinstance<Tensor>(e), "a TorchDispatchMode returned a list holding a ",
                       type_name_of(e), " where the operator returns Tensors");
      ts.push_back(nb::cast<Tensor>(e));
    }
    return ts;
  }
  EMBER_ERROR(ErrorKind::Type, "a TorchDispatchMode returned a ", type_name_of(h),
              " where the operator returns a Tensor or a number");
}

// The continuation handed to Python; valid only while the hook that made it runs.
struct Continuation {
  python_dispatch::Below below;
  void* ctx;
  bool returns_tuple;
  bool live = true;
};

nb::object run_below(Continuation& c) {
  EMBER_CHECK(c.live, "an operator's continuation was called after its dispatch returned");
  BoxedList out;
  c.below(c.ctx, out);
  if (c.returns_tuple) {
    nb::list l;
    for (const auto& v : out) l.append(to_py(v));
    return nb::tuple(l);
  }
  return out.empty() ? nb::none() : to_py(out[0]);
}

void hook(const OperatorEntry& op, BoxedList& args, bool returns_tuple,
          python_dispatch::Below below, void* ctx, BoxedList& out) {
  nb::gil_scoped_acquire gil;
  nb::list py_args;
  for (const auto& a : args) py_args.append(to_py(a));
  auto cont = std::make_shared<Continuation>(Continuation{below, ctx, returns_tuple});
  nb::object call = nb::cpp_function([cont] { return run_below(*cont); });
  struct Expire {
    Continuation& c;
    ~Expire() { c.live = false; }
  } expire{*cont};
  nb::object r = nb::handle(g_handler)(op.name(), nb::tuple(py_args), call);
  if (returns_tuple) {
    EMBER_CHECK_TYPE(PyTuple_Check(r.ptr()) || PyList_Check(r.ptr()), op.name(),
                     ": a TorchDispatchMode returned a ", type_name_of(r),
                     " where the operator returns a tuple");
    for (nb::handle e : r) out.push_back(from_py(e));
  } else {
    out.push_back(from_py(r));
  }
}

}  // namespace

void bind_python_dispatch(nb::module_& m) {
  m.def(
      "_set_dispatch_hook",
      [](nb::object fn) {
        EMBER_CHECK(!g_handler, "_set_dispatch_hook: the hook is installed once");
        g_handler = fn.release().ptr();
        python_dispatch::set_hook(&hook);
      },
      nb::arg("fn"),
      doc("_set_dispatch_hook(fn) -> None",
          "Installs fn(op_name, args, below) as the dispatcher's per-op hook into Python's "
          "dispatch modes (once, at import)."));
  m.def("_set_python_dispatch", &python_dispatch::set_active, nb::arg("on"),
        doc("_set_python_dispatch(on) -> None",
            "Marks this thread as having a TorchDispatchMode on (every op goes to the hook) or "
            "not."));
}

}  // namespace ember::py
