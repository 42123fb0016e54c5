// The ember._C extension: error translation, dtype objects, shared argument parsing and the
// docstring helpers (Note [Binding docstrings] in common.h).
#include <Python.h>

#include <deque>
#include <typeinfo>

#include "common.h"
#include "ember/cpu/isa.h"

namespace ember {
const char* overflow_type_name(ScalarType t);  // core/dtype.cpp
}  // namespace ember

namespace ember::py {

namespace {
// Leaked on purpose: these live as long as the interpreter, and static destructors run after it.
nb::handle g_dtypes[int(ScalarType::NumOptions)];
nb::handle g_size_class;

PyObject* exception_for(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::Index:
      return PyExc_IndexError;
    case ErrorKind::Type:
      return PyExc_TypeError;
    case ErrorKind::Value:
      return PyExc_ValueError;
    case ErrorKind::NotImplemented:
      return PyExc_NotImplementedError;
    default:
      return PyExc_RuntimeError;
  }
}
}  // namespace

const char* doc(std::string_view sig, std::string_view text) {
  static auto* pool =
      new std::deque<std::string>();  // leaked: bindings live as long as the process
  std::string s(sig);
  if (!text.empty()) s.append("\n\n").append(text);
  return pool->emplace_back(std::move(s)).c_str();
}

const char* method_doc(const Doc& d) {
  std::string sig(d.sig);
  size_t open = sig.find('(');
  if (open != std::string::npos && sig.compare(open + 1, 5, "input") == 0) {
    size_t end = open + 6;
    if (sig.compare(end, 2, ", ") == 0) sig.erase(open + 1, 7);
    else if (end < sig.size() && sig[end] == ')') sig.erase(open + 1, 5);
  }
  return doc(sig, d.text);
}

nb::object dtype_object(ScalarType t) { return nb::borrow(g_dtypes[int(t)]); }

std::optional<ScalarType> to_scalar_type(nb::handle h) {
  DType* d = nullptr;
  if (nb::try_cast<DType*>(h, d) && d) return d->type;
  if (h.ptr() == (PyObject*)&PyFloat_Type) return kDouble;
  if (h.ptr() == (PyObject*)&PyLong_Type) return kLong;
  if (h.ptr() == (PyObject*)&PyBool_Type) return kBool;
  return std::nullopt;
}

// torch's checked conversion of a one-element tensor's value (masked_fill's value.item()).
void check_item_fits(const Tensor& v, ScalarType dtype) {
  if (!v.defined() || v.numel() != 1 || v.device().type == DeviceType::Meta) return;
  if (!is_complex(v.dtype())) return check_scalar_fits(v.item(), dtype);
  // A complex value, checked as c10's checked conversion does: each part against a complex
  // dtype's parts; into a real dtype only without an imaginary part (bool takes anything).
  const Tensor cd = contiguous(to_dtype(v, kComplexDouble));
  const auto c = *static_cast<const std::complex<double>*>(cd.data_ptr());
  if (dtype == kBool) return;
  EMBER_CHECK(is_complex(dtype) || c.imag() == 0, "value cannot be converted to type ",
              overflow_type_name(dtype), " without overflow");
  check_scalar_fits(c.real(), dtype);
  if (is_complex(dtype)) check_scalar_fits(c.imag(), dtype);
}

void check_number_fits(const TensorLike& v, ScalarType dtype) {
  if (!v.t.defined() || !v.t.impl()->is_wrapped_number) return;
  check_item_fits(v.t, dtype);
}

// torch's once-a-process "discards the imaginary part" warning (complex_cast.py keeps the once).
void warn_complex_to_real() {
  nb::module_::import_("ember._ops.complex_cast").attr("warn_discard_imag")();
}

void require_int_sequence(nb::handle dims, const char* op, int position) {
  if (PyLong_Check(dims.ptr()))
    throw nb::type_error((std::string(op) + "(): argument 'dims' (position " +
                          std::to_string(position) + ") must be tuple of ints, not " +
                          type_name_of(dims))
                             .c_str());
}

std::string legacy_tensor_name(ScalarType dtype) {
  switch (dtype) {
    case kBool:
      return "BoolTensor";
    case kByte:
      return "ByteTensor";
    case kChar:
      return "CharTensor";
    case kShort:
      return "ShortTensor";
    case kInt:
      return "IntTensor";
    case kLong:
      return "LongTensor";
    case kHalf:
      return "HalfTensor";
    case kBFloat16:
      return "BFloat16Tensor";
    case kDouble:
      return "DoubleTensor";
    default:
      return "FloatTensor";
  }
}

std::string type_name_of(nb::handle h) {
  nb::handle type = nb::handle((PyObject*)Py_TYPE(h.ptr()));
  std::string name = nb::cast<std::string>(type.attr("__name__"));
  std::string module = nb::cast<std::string>(type.attr("__module__"));
  return module == "builtins" ? name : module + "." + name;
}

bool scalar_from_python(nb::handle h, Scalar& out) {
  PyObject* o = h.ptr();
  if (PyBool_Check(o)) {
    out = Scalar(o == Py_True);
    return true;
  }
  if (PyLong_Check(o)) {
    int overflow = 0;
    long long v = PyLong_AsLongLongAndOverflow(o, &overflow);
    if (overflow) {
      PyErr_Clear();
      return false;
    }
    out = Scalar(int64_t(v));
    return true;
  }
  if (PyFloat_Check(o)) {
    out = Scalar(PyFloat_AS_DOUBLE(o));
    return true;
  }
  Tensor* t = nullptr;
  if (nb::try_cast<Tensor*>(h, t) && t) {
    if (t->numel() != 1) return false;
    // Callers are noexcept type casters: a tensor item() refuses (complex, meta) is no Scalar,
    // and the call then fails as one with the wrong argument types does.
    try {
      out = t->item();
    } catch (const std::exception&) {
      return false;
    }
    return true;
  }
  // numpy scalars and other number-likes.
  if (PyObject_HasAttrString(o, "dtype") && PyIndex_Check(o)) {
    long long v = PyLong_AsLongLong(o);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out = Scalar(int64_t(v));
    return true;
  }
  if (PyObject_HasAttrString(o, "dtype") && PyNumber_Check(o)) {
    double v = PyFloat_AsDouble(o);
    if (PyErr_Occurred()) {
      PyErr_Clear();
      return false;
    }
    out = Scalar(v);
    return true;
  }
  return false;
}

bool is_numpy_scalar(nb::handle h) {
  PyObject* o = h.ptr();
  if (!PyObject_HasAttrString(o, "dtype")) return false;
  PyObject* ndim = PyObject_GetAttrString(o, "ndim");
  if (!ndim) {
    PyErr_Clear();
    return false;
  }
  bool zero_d = PyLong_Check(ndim) && PyLong_AsLong(ndim) == 0;
  Py_DECREF(ndim);
  return zero_d && !nb::isinstance<Tensor>(h);
}

namespace {
// A size element as int64; Python ints beyond it raise TypeError, as in PyTorch.
int64_t unpack_int(nb::handle h, const char* what, size_t pos) {
  int overflow = 0;
  long long v = PyLong_AsLongLongAndOverflow(h.ptr(), &overflow);
  if (overflow)
    throw nb::type_error((std::string(what) + " failed to unpack the object at pos " +
                          std::to_string(pos + 1) +
                          " with error \"Overflow when unpacking long long\"")
                             .c_str());
  if (v == -1 && PyErr_Occurred()) throw nb::python_error();
  return int64_t(v);
}
}  // namespace

std::vector<int64_t> int_list(nb::handle h, const char* what) {
  std::vector<int64_t> out;
  if (PyLong_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
    out.push_back(unpack_int(h, what, 0));
    return out;
  }
  // A one-element integer tensor or an __index__ object (a numpy int) is one int, as torch's
  // int[1] parser takes them (a tensor is also a sequence: checked first).
  Tensor* t = nullptr;
  if (nb::try_cast<Tensor*>(h, t) && t && t->numel() == 1 && is_integral(t->dtype(), false)) {
    out.push_back(t->item().to_long());
    return out;
  }
  if (!PySequence_Check(h.ptr()) || PyUnicode_Check(h.ptr()) || t) {
    if (!t && PyIndex_Check(h.ptr()) && !PyBool_Check(h.ptr())) {
      nb::object index = nb::steal(PyNumber_Index(h.ptr()));
      if (!index.is_valid()) throw nb::python_error();
      out.push_back(unpack_int(index, what, 0));
      return out;
    }
    throw nb::type_error(
        (std::string(what) + " must be tuple of ints, not " + nb::type_name(h.type()).c_str())
            .c_str());
  }
  nb::sequence seq = nb::borrow<nb::sequence>(h);
  size_t n = nb::len(seq);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    nb::object item = seq[i];
    if (!PyIndex_Check(item.ptr()) || PyBool_Check(item.ptr()))
      throw nb::type_error((std::string(what) +
                            " must be tuple of ints, but found element of type " +
                            nb::type_name(item.type()).c_str() + " at pos " + std::to_string(i))
                               .c_str());
    nb::object index = nb::steal(PyNumber_Index(item.ptr()));  // numpy ints and __index__
    if (!index.is_valid()) throw nb::python_error();
    out.push_back(unpack_int(index, what, i));
  }
  return out;
}

std::vector<int64_t> int_varargs(const nb::args& args, const char* what) {
  if (args.size() == 1 && !PyLong_Check(args[0].ptr())) return int_list(args[0], what);
  return int_list(args, what);
}

std::vector<int64_t> dims_arg(nb::handle h) {
  if (h.is_none()) return {};
  return int_list(h, "dim");
}

nb::object make_size(IntArrayRef sizes) {
  nb::object tup = nb::steal(PyTuple_New(Py_ssize_t(sizes.size())));
  for (size_t i = 0; i < sizes.size(); ++i)
    PyTuple_SET_ITEM(tup.ptr(), Py_ssize_t(i), PyLong_FromLongLong(sizes[i]));
  return g_size_class.is_valid() ? g_size_class(tup) : tup;
}

void bind_complex_guard(nb::module_& m);  // complex_guard.cpp
void bind_dlpack(nb::module_& m);         // dlpack.cpp
void bind_sparse_guard(nb::module_& m);   // sparse_guard.cpp
void bind_memory_format(nb::module_& m);  // memory_format.cpp
void bind_arg_guard(nb::module_& m);      // arg_guard.cpp
void bind_foreign(nb::module_& m);        // guard_object.cpp

void bind_dtype(nb::module_& m) {
  nb::class_<DType>(
      m, "dtype",
      "The element type of a tensor (ember.float32, ember.int64, ember.bool ...); one "
      "object per type, compared by identity or ==.")
      .def_prop_ro(
          "is_floating_point", [](const DType& d) { return is_floating_point(d.type); },
          doc("is_floating_point -> bool", "Whether the type is a floating-point type."))
      .def_prop_ro(
          "is_signed",
          [](const DType& d) {
            EMBER_CHECK(!is_quantized(d.type), "isSignedType not supported for quantized types");
            return is_signed(d.type);
          },
          doc("is_signed -> bool", "Whether the type can hold negative values."))
      .def_prop_ro(
          "is_complex", [](const DType& d) { return is_complex(d.type); },
          doc("is_complex -> bool", "Whether the type is complex (complex64, complex128)."))
      .def_prop_ro(
          "itemsize", [](const DType& d) { return element_size(d.type); },
          doc("itemsize -> int", "The size of one element in bytes."))
      .def(
          "to_real", [](const DType& d) { return to_real_type(d.type); },
          doc("to_real() -> dtype",
              "The real type of a complex type (complex64 -> float32); others are themselves."))
      .def(
          "to_complex",
          [](const DType& d) {
            // torch's names of the types that have no complex counterpart
            const char* none = d.type == kBool    ? "Bool"
                               : d.type == kByte  ? "Byte"
                               : d.type == kChar  ? "Char"
                               : d.type == kShort ? "Short"
                               : d.type == kInt   ? "Int"
                               : d.type == kLong  ? "Long"
                                                  : nullptr;
            EMBER_CHECK(none == nullptr, "Unknown Complex ScalarType for ", none);
            EMBER_CHECK(d.type != kHalf, "to_complex: complex32 (the complex type of float16) is ",
                        "not supported");
            return to_complex_type(d.type);
          },
          doc("to_complex() -> dtype",
              "The complex type of a floating type (float32 -> complex64, bfloat16 -> complex64)."))
      .def(
          "__repr__", [](const DType& d) { return "torch." + std::string(dtype_name(d.type)); },
          doc("__repr__() -> str", "The name as torch prints it, e.g. 'torch.float32'."))
      .def(
          "__reduce__", [](const DType& d) { return std::string(dtype_name(d.type)); },
          doc("__reduce__() -> str", "Pickles the dtype by its name in the ember module."))
      .def(
          "__hash__", [](const DType& d) { return int(d.type); },
          doc("__hash__() -> int", "A hash that equal dtypes share."))
      .def(
          "__eq__",
          [](const DType& a, nb::handle b) {
            auto t = to_scalar_type(b);
            return t && nb::isinstance<DType>(b) && *t == a.type;
          },
          nb::arg("other").none(),
          doc("__eq__(other) -> bool", "True when other is the same dtype."));
#define EMBER_DTYPE_OBJ(cpp, name, pyname)                              \
  g_dtypes[int(ScalarType::name)] =                                     \
      nb::cast(DType{ScalarType::name}, nb::rv_policy::move).release(); \
  m.attr(#pyname) = g_dtypes[int(ScalarType::name)];
  EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DTYPE_OBJ)
  EMBER_FORALL_QUANTIZED_DTYPES(EMBER_DTYPE_OBJ)
#undef EMBER_DTYPE_OBJ
  m.def(
      "_set_size_class", [](nb::object cls) { g_size_class = cls.release(); }, nb::arg("cls"),
      doc("_set_size_class(cls) -> None",
          "Registers ember.Size, the class that shapes are built as."));
  m.def(
      "promote_types", [](ScalarType a, ScalarType b) { return promote_types(a, b); },
      nb::arg("type1"), nb::arg("type2"),
      doc("promote_types(type1, type2) -> dtype",
          "The smallest dtype that both types convert to without losing their kind."));
  m.def(
      "get_default_dtype", [] { return default_dtype(); },
      doc("get_default_dtype() -> dtype",
          "The floating dtype that factories and Python floats use when none is given."));
  m.def(
      "set_default_dtype",
      [](nb::handle d) {
        auto t = to_scalar_type(d);
        if (!t || !nb::isinstance<DType>(d))
          throw nb::type_error("set_default_dtype expects a dtype");
        set_default_dtype(*t);
      },
      nb::arg("d").none(),
      doc("set_default_dtype(d) -> None",
          "Changes the floating dtype returned by get_default_dtype()."));
  m.def(
      "can_cast", [](ScalarType from, ScalarType to) { return can_cast(from, to); },
      nb::arg("from_"), nb::arg("to"),
      doc("can_cast(from_, to) -> bool",
          "Whether a value of dtype from_ may be cast to dtype to under the promotion rules."));
}

}  // namespace ember::py

NB_MODULE(_C, m) {
  using namespace ember::py;
  nb::set_leak_warnings(false);  // dtype objects are immortal by design
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const ember::Error& e) {
      PyErr_SetString(exception_for(e.kind()), e.what());
    } catch (const std::bad_cast&) {
      // nb::cast inside a binding (an in-place kernel's `self`, a tensor list's item) met an
      // object of another type: that is the caller's TypeError, as torch's argument parser
      // raises, never a RuntimeError named after the C++ exception.
      PyErr_SetString(PyExc_TypeError,
                      "incompatible function arguments: expected a Tensor where an object of "
                      "another type was passed");
    } catch (const std::bad_alloc&) {
      // A host buffer (index tables ...) sized from a huge argument: PyTorch's allocation
      // failures are RuntimeErrors, and nanobind's default would be MemoryError.
      PyErr_SetString(PyExc_RuntimeError,
                      "out of memory: a host allocation failed (std::bad_alloc)");
    }
  });
  // Note [Kernels release the GIL]: only a thread that holds the GIL gives it up, so a kernel
  // running inside another kernel, or on a pool thread, costs one check.
  ember::set_kernel_region_hooks(
      {[]() -> void* { return PyGILState_Check() ? PyEval_SaveThread() : nullptr; },
       [](void* token) { PyEval_RestoreThread(static_cast<PyThreadState*>(token)); }});
  bind_dtype(m);
  bind_tensor(m);
  bind_creation(m);
  bind_random(m);
  bind_unary(m);
  bind_binary(m);
  bind_operators(m);
  bind_reduce(m);
  bind_view(m);
  bind_memory_format(m);
  bind_autograd(m);
  bind_index(m);
  bind_shape(m);
  bind_sort(m);
  bind_linalg(m);
  bind_special(m);
  nb::module_ nn = m.def_submodule("_nn", "Kernels behind ember.nn.functional");
  bind_nn_spatial(nn);
  bind_nn_activation(nn);
  bind_nn_loss(nn);
  nb::module_ optim = m.def_submodule("_optim", "Fused optimizer updates");
  bind_optim(optim);
  nb::module_ ser = m.def_submodule("_serialize", "Checkpoint reader and writer");
  bind_serialize(ser);
  nb::module_ dist = m.def_submodule("_distributed", "Stores and process groups over Gloo");
  bind_distributed(dist);
  bind_quantized(m);
  bind_complex_guard(m);
  bind_dlpack(m);
  bind_sparse_guard(m);
  bind_arg_guard(m);
  bind_foreign(m);
  // Subclasses name torch's protocol helpers through the extension (`__torch_function__ =
  // torch._C._disabled_torch_function_impl`); ember's live in ember/_subclass_dispatch.py, looked
  // up on first use so that importing _C does not import its package.
  m.def(
      "__getattr__",
      [](const std::string& name) -> nb::object {
        if (name == "_disabled_torch_function_impl" || name == "DisableTorchFunctionSubclass")
          return nb::module_::import_("ember._subclass_dispatch").attr(name.c_str());
        throw nb::attribute_error(("module 'ember._C' has no attribute '" + name + "'").c_str());
      },
      nb::arg("name"),
      doc("__getattr__(name) -> object",
          "The subclass protocol's helpers torch keeps on its extension module."));
  m.def(
      "manual_seed", [](uint64_t s) { ember::manual_seed(s); }, nb::arg("seed"),
      doc("manual_seed(seed) -> None",
          "Reseeds the default generator, making sampling repeatable."));
  m.def(
      "_get_cpu_capability",
      [] {
        using ember::cpu::Isa;
        const Isa isa = ember::cpu::kBestIsa;
        return isa == Isa::avx512 ? "AVX512" : isa == Isa::avx2 ? "AVX2" : "DEFAULT";
      },
      doc("_get_cpu_capability() -> str",
          "The instruction-set tier the kernels run at: AVX512, AVX2 or DEFAULT, capped by "
          "ATEN_CPU_CAPABILITY at start-up (Note [CPU capability])."));
  m.def("get_num_threads", &ember::get_num_threads,
        doc("get_num_threads() -> int", "How many threads the kernels split their work over."));
  m.def("set_num_threads", &ember::set_num_threads, nb::arg("int"),
        doc("set_num_threads(int) -> None",
            "Sets how many threads the kernels split their work over."));
  bind_registry(m);
  bind_library(m);
  bind_profiler(m);
  bind_python_dispatch(m);
  bind_export(m);
  bind_kernel_launch(m);
  add_numpy_kwargs(m, false);
  add_numpy_kwargs(m.attr("Tensor"), true);
}
