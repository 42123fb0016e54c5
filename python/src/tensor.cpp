// The Tensor class: geometry, conversion to and from Python data and numpy, indexing.
#include <nanobind/ndarray.h>

#include <cstring>
#include <type_traits>

#include "common.h"
#include "ember/core/grad_mode.h"

namespace ember {
const char* overflow_type_name(ScalarType t);  // core/dtype.cpp
}  // namespace ember

namespace ember::py {

void check_item_fits(const Tensor& v, ScalarType dtype);  // module.cpp
void warn_complex_to_real();                              // module.cpp

namespace {

// --- numpy interop --------------------------------------------------------------------------

std::optional<ScalarType> from_dlpack(nb::dlpack::dtype d) {
  using nb::dlpack::dtype_code;
  switch (dtype_code(d.code)) {
    case dtype_code::Bool:
      return kBool;
    case dtype_code::Int:
      return d.bits == 8    ? kChar
             : d.bits == 16 ? kShort
             : d.bits == 32 ? kInt
             : d.bits == 64 ? std::optional(kLong)
                            : std::nullopt;
    case dtype_code::UInt:
      return d.bits == 8 ? std::optional(kByte) : std::nullopt;
    case dtype_code::Float:
      return d.bits == 16   ? kHalf
             : d.bits == 32 ? kFloat
             : d.bits == 64 ? std::optional(kDouble)
                            : std::nullopt;
    case dtype_code::Bfloat:
      return kBFloat16;
    case dtype_code::Complex:
      return d.bits == 64    ? kComplexFloat
             : d.bits == 128 ? std::optional(kComplexDouble)
                             : std::nullopt;
    default:
      return std::nullopt;
  }
}

nb::dlpack::dtype to_dlpack(ScalarType t) {
  using nb::dlpack::dtype_code;
  nb::dlpack::dtype d;
  d.lanes = 1;
  d.bits = uint8_t(element_size(t) * 8);
  switch (t) {
    case kBool:
      d.code = uint8_t(dtype_code::Bool);
      break;
    case kByte:
      d.code = uint8_t(dtype_code::UInt);
      break;
    case kChar:
    case kShort:
    case kInt:
    case kLong:
      d.code = uint8_t(dtype_code::Int);
      break;
    case kComplexFloat:
    case kComplexDouble:
      d.code = uint8_t(dtype_code::Complex);
      break;
    default:
      d.code = uint8_t(dtype_code::Float);
      break;
  }
  return d;
}

using AnyArray = nb::ndarray<nb::numpy, nb::device::cpu>;
// an array read in: read-only ones too (np.frombuffer, a read-only memmap), as torch's
using InArray = nb::ndarray<nb::numpy, nb::ro, nb::device::cpu>;

// torch shares a read-only array's memory as well, warning once a process that writes to the
// tensor are undefined
void warn_if_read_only(nb::handle array) {
  static bool warned = false;
  if (warned || !array.is_valid() || !nb::hasattr(array, "flags")) return;
  if (nb::cast<bool>(array.attr("flags").attr("writeable"))) return;
  warned = true;
  if (PyErr_WarnEx(PyExc_UserWarning,
                   "The given NumPy array is not writable, and PyTorch does not support "
                   "non-writable tensors. This means writing to this tensor will result in "
                   "undefined behavior. You may want to copy the array to protect its data or "
                   "make it writable before converting it to a tensor. This type of warning will "
                   "be suppressed for the rest of this program.",
                   1) != 0)
    throw nb::python_error();
}

// Wraps a numpy array's memory; the tensor keeps the array alive.
Tensor from_numpy(InArray a) {
  auto dt = from_dlpack(a.dtype());
  if (!dt)
    throw nb::type_error(
        "can't convert np.ndarray of this dtype. The only supported types are: "
        "float64, float32, float16, int64, int32, int16, int8, uint8, and bool.");
  std::vector<int64_t> sizes(a.ndim()), strides(a.ndim());
  for (size_t i = 0; i < a.ndim(); ++i) {
    sizes[i] = int64_t(a.shape(i));
    strides[i] = int64_t(a.stride(i));
    if (strides[i] < 0)
      throw nb::value_error(
          "At least one stride in the given numpy array is negative, and "
          "tensors with negative strides are not currently supported. (You can "
          "probably work around this by making a copy of your array  with "
          "array.copy().) ");
  }
  nb::object owner = nb::find(a);
  PyObject* keep = owner.release().ptr();
  return from_blob(const_cast<void*>(a.data()), sizes, strides, *dt, [keep](void*) {
    nb::gil_scoped_acquire g;
    Py_DECREF(keep);
  });
}

nb::object to_numpy(const Tensor& t) {
  EMBER_CHECK(t.dtype() != kBFloat16, "Got unsupported ScalarType BFloat16");
  auto* holder = new Tensor(t);
  nb::capsule owner(holder, [](void* p) noexcept { delete static_cast<Tensor*>(p); });
  std::vector<size_t> shape(t.sizes().begin(), t.sizes().end());
  std::vector<int64_t> strides(t.strides().begin(), t.strides().end());
  AnyArray arr(t.data_ptr(), t.dim(), shape.data(), owner, strides.data(), to_dlpack(t.dtype()));
  return nb::cast(arr, nb::rv_policy::reference);
}

// torch counts a tuple's entries before it checks a slice's step: x0d[(::0,)] is an IndexError
// where x0d[::0] is a ValueError (apply_indices checks a lone slice's step first)
void check_tuple_on_0d(const Tensor& t, nb::handle idx) {
  PyObject* o = idx.ptr();
  EMBER_CHECK_INDEX(t.dim() != 0 || !PyTuple_Check(o) || PyTuple_GET_SIZE(o) != 1 ||
                        !PySlice_Check(PyTuple_GET_ITEM(o, 0)),
                    "too many indices for tensor of dimension 0");
}

// size(d)/stride(d): a 0-d tensor has no dim to read (the core's wrap would take 0 and -1),
// torch's IndexError; otherwise the dim wrapped as the core wraps it
int64_t checked_dim(const Tensor& t, int64_t d) {
  EMBER_CHECK_INDEX(t.dim() != 0, "Dimension specified as ", d, " but tensor has no dimensions");
  return d;
}

// --- Python data -> tensor ------------------------------------------------------------------

struct DataScan {
  std::vector<int64_t> shape;
  // torch's inference: every element's type promoted together, a Python bool/int/float/complex
  // counting as bool/int64/the default dtype/its complex type, tensors and numpy scalars as
  // their own dtype (so [1, np.uint8(2)] is int64 and [np.float16(1), 2.0] float32)
  std::optional<ScalarType> dtype;
  void add(ScalarType t) { dtype = dtype ? promote_types(*dtype, t) : t; }
};

bool is_sequence(nb::handle h) {
  return (PyList_Check(h.ptr()) || PyTuple_Check(h.ptr())) ||
         (!PyUnicode_Check(h.ptr()) && !nb::isinstance<Tensor>(h) && PySequence_Check(h.ptr()) &&
          !PyObject_HasAttrString(h.ptr(), "dtype"));
}

// The dtype of a numpy scalar (np.float32(1), np.int8(3), np.bool_): an object that is not a
// Python bool/int/float/complex itself (np.float64 subclasses float) and has a numpy dtype.
std::optional<ScalarType> numpy_scalar_dtype(nb::handle h) {
  PyObject* o = h.ptr();
  if (PyFloat_CheckExact(o) || PyLong_CheckExact(o) || PyBool_Check(o) || PyComplex_CheckExact(o) ||
      nb::isinstance<Tensor>(h) || !PyObject_HasAttrString(o, "dtype") ||
      !PyObject_HasAttrString(o, "itemsize"))
    return std::nullopt;
  nb::object dt = nb::getattr(h, "dtype");
  nb::object kind = nb::getattr(dt, "kind", nb::none());
  nb::object size = nb::getattr(dt, "itemsize", nb::none());
  if (!nb::isinstance<nb::str>(kind) || !nb::isinstance<nb::int_>(size)) return std::nullopt;
  char k = nb::cast<std::string>(kind)[0];
  int64_t n = nb::cast<int64_t>(size);
  nb::dlpack::dtype d;
  d.lanes = 1;
  d.bits = uint8_t(n * 8);
  using nb::dlpack::dtype_code;
  switch (k) {
    case 'b':
      d.code = uint8_t(dtype_code::Bool);
      break;
    case 'i':
      d.code = uint8_t(dtype_code::Int);
      break;
    case 'u':
      d.code = uint8_t(dtype_code::UInt);
      break;
    case 'f':
      d.code = uint8_t(dtype_code::Float);
      break;
    case 'c':
      d.code = uint8_t(dtype_code::Complex);
      break;
    default:
      return std::nullopt;
  }
  return from_dlpack(d);
}

void scan(nb::handle h, size_t depth, DataScan& s) {
  if (is_sequence(h)) {
    int64_t n = int64_t(PySequence_Size(h.ptr()));
    if (depth == s.shape.size()) s.shape.push_back(n);
    else if (depth > s.shape.size())  // a sequence where the first items were numbers
      throw nb::type_error(("'" + std::string(Py_TYPE(h.ptr())->tp_name) +
                            "' object cannot be interpreted as a number")
                               .c_str());
    else if (s.shape[depth] != n)
      throw nb::value_error(("expected sequence of length " +
                             std::to_string(depth < s.shape.size() ? s.shape[depth] : -1) +
                             " at dim " + std::to_string(depth) + " (got " + std::to_string(n) +
                             ")")
                                .c_str());
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    for (int64_t i = 0; i < n; ++i) scan(seq[size_t(i)], depth + 1, s);
    return;
  }
  if (depth != s.shape.size() && !(depth < s.shape.size()))
    throw nb::value_error("inconsistent nesting of sequences");
  if (depth < s.shape.size())  // a number where the first items were sequences: torch's TypeError
    throw nb::type_error("not a sequence");
  PyObject* o = h.ptr();
  if (auto np = numpy_scalar_dtype(h)) {  // np.float64(1), np.bool_: their dtype, as torch's
    s.add(*np);
    return;
  }
  ScalarType real = default_dtype();
  if (PyBool_Check(o)) s.add(kBool);
  else if (PyLong_Check(o)) s.add(kLong);
  else if (PyFloat_Check(o)) s.add(real);
  else if (PyComplex_Check(o)) s.add(to_complex_type(real));
  else {
    Tensor* t = nullptr;
    if (nb::try_cast<Tensor*>(h, t) && t) {
      if (t->numel() != 1)
        throw nb::value_error("only one element tensors can be converted to Python scalars");
      s.add(t->dtype());
    } else if (PyObject_HasAttrString(o, "dtype") && PyNumber_Check(o)) {
      nb::object kind = nb::getattr(nb::getattr(h, "dtype"), "kind", nb::none());
      bool complex =
          kind.is_valid() && nb::isinstance<nb::str>(kind) && nb::cast<std::string>(kind) == "c";
      s.add(PyIndex_Check(o) ? kLong : complex ? to_complex_type(real) : real);
    } else {
      throw nb::type_error(
          (std::string("new(): invalid data type '") + nb::type_name(h.type()).c_str() + "'")
              .c_str());
    }
  }
}

template <class T>
constexpr bool is_complex_type = false;
template <class T>
constexpr bool is_complex_type<std::complex<T>> = true;

template <class T>
void fill(nb::handle h, T*& out, ScalarType dtype) {
  if (is_sequence(h)) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    size_t n = nb::len(seq);
    for (size_t i = 0; i < n; ++i) fill(seq[i], out, dtype);
    return;
  }
  if constexpr (is_complex_type<T>) {
    Py_complex c = PyComplex_AsCComplex(h.ptr());
    if (c.real == -1.0 && PyErr_Occurred()) {
      PyErr_Clear();
      throw nb::type_error("could not convert element to a number");
    }
    *out++ = T(typename T::value_type(c.real), typename T::value_type(c.imag));
  } else {
    if (PyComplex_Check(h.ptr())) throw nb::type_error("can't convert complex to a real dtype");
    Scalar s;
    if (!scalar_from_python(h, s)) throw nb::type_error("could not convert element to a number");
    // an integer dtype takes only numbers it can hold (NaN, 1e10 into int32), as torch's
    // checked conversion; floating dtypes round or overflow to inf unchecked
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) check_scalar_fits(s, dtype);
    *out++ = s.to<T>();
  }
}

// An index that torch's index_put_ turns into masked_fill_ for a one-element value: a bool
// tensor alone or among slices, ints, None and Ellipsis.
bool lone_bool_mask(nb::handle idx) {
  auto bool_tensor = [](PyObject* o) {
    Tensor* t = nullptr;
    return nb::try_cast<Tensor*>(nb::handle(o), t) && t && t->dtype() == kBool;
  };
  if (!PyTuple_Check(idx.ptr())) return bool_tensor(idx.ptr());
  int masks = 0;
  for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(idx.ptr()); ++i) {
    PyObject* o = PyTuple_GET_ITEM(idx.ptr(), i);
    if (bool_tensor(o)) ++masks;
    else if (!(PySlice_Check(o) || o == Py_None || o == Py_Ellipsis || (PyLong_CheckExact(o))))
      return false;
  }
  return masks == 1;
}

// A Python complex written into a real tensor: c10's checked conversion (the imaginary part must
// be 0; torch's float16/bfloat16 path names double), bool taking any value.
Tensor real_from_complex(Py_complex c, ScalarType dtype) {
  if (dtype == kBool) return scalar_tensor(Scalar(c.real != 0 || c.imag != 0), kBool);
  const bool low = dtype == kHalf || dtype == kBFloat16;
  EMBER_CHECK(c.imag == 0, "value cannot be converted to type ",
              overflow_type_name(low ? kDouble : dtype), " without overflow");
  if (!low) check_scalar_fits(Scalar(c.real), dtype);
  return scalar_tensor(Scalar(c.real), dtype);
}
}  // namespace

Tensor tensor_from_data(nb::handle data, std::optional<ScalarType> dtype) {
  Tensor* t = nullptr;
  if (nb::try_cast<Tensor*>(data, t) && t)
    return to_dtype(clone(t->detach()), dtype.value_or(t->dtype()));
  InArray arr;
  if (nb::hasattr(data, "__array_interface__") && nb::try_cast(data, arr)) {
    Tensor src = from_numpy(arr);
    Tensor out = empty(src.sizes(), dtype.value_or(src.dtype()));
    copy_(out, src);
    return out;
  }
  DataScan s;
  scan(data, 0, s);
  ScalarType inferred = s.dtype.value_or(default_dtype());  // [] is the default dtype
  ScalarType out_t = dtype.value_or(inferred);
  Tensor out = empty(s.shape, out_t);
  switch (out_t) {
#define EMBER_FILL_CASE(cpp, name, py)          \
  case ScalarType::name: {                      \
    cpp* p = static_cast<cpp*>(out.data_ptr()); \
    fill<cpp>(data, p, out_t);                  \
    break;                                      \
  }
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_FILL_CASE)
#undef EMBER_FILL_CASE
    default:
      break;
  }
  return out;
}

nb::object tolist(const Tensor& self) {
  if (self.device().type == DeviceType::Meta)
    EMBER_ERROR(ErrorKind::NotImplemented, "Cannot copy out of meta tensor; no data!");
  Tensor t = contiguous(fallback_detail::to_host(self));  // a PrivateUse1 tensor: a host copy
  auto elem = [&](int64_t i) -> nb::object {
    const char* p = static_cast<const char*>(t.data_ptr()) + i * int64_t(t.element_size());
    switch (t.dtype()) {
      case kBool:
        return nb::bool_(*reinterpret_cast<const bool*>(p));
      case kByte:
        return nb::int_(*reinterpret_cast<const uint8_t*>(p));
      case kChar:
        return nb::int_(*reinterpret_cast<const int8_t*>(p));
      case kShort:
        return nb::int_(*reinterpret_cast<const int16_t*>(p));
      case kInt:
        return nb::int_(*reinterpret_cast<const int32_t*>(p));
      case kLong:
        return nb::int_(*reinterpret_cast<const int64_t*>(p));
      case kHalf:
        return nb::float_(float(*reinterpret_cast<const Half*>(p)));
      case kBFloat16:
        return nb::float_(float(*reinterpret_cast<const BFloat16*>(p)));
      case kFloat:
        return nb::float_(*reinterpret_cast<const float*>(p));
      case kComplexFloat: {
        auto c = *reinterpret_cast<const std::complex<float>*>(p);
        return nb::steal(PyComplex_FromDoubles(c.real(), c.imag()));
      }
      case kComplexDouble: {
        auto c = *reinterpret_cast<const std::complex<double>*>(p);
        return nb::steal(PyComplex_FromDoubles(c.real(), c.imag()));
      }
      default:
        return nb::float_(*reinterpret_cast<const double*>(p));
    }
  };
  if (t.dim() == 0) return elem(0);
  std::function<nb::object(int64_t, int64_t)> build = [&](int64_t d, int64_t offset) -> nb::object {
    nb::list l;
    int64_t size = t.sizes()[size_t(d)], stride = t.strides()[size_t(d)];
    for (int64_t i = 0; i < size; ++i) {
      if (d == t.dim() - 1) l.append(elem(offset + i * stride));
      else l.append(build(d + 1, offset + i * stride));
    }
    return l;
  };
  return build(0, 0);
}

// --- indexing -------------------------------------------------------------------------------

// torch (numpy's pre-1.23 rule) reads a short non-tuple sequence that holds a tensor, a sequence,
// a slice, None or Ellipsis as a tuple of indices (x[[rows, cols]] is x[rows, cols]), warning
// that the reading is deprecated
bool sequence_as_tuple(nb::handle idx) {
  PyObject* o = idx.ptr();
  if (PyTuple_Check(o) || PyUnicode_Check(o) || !PySequence_Check(o) ||
      nb::isinstance<Tensor>(idx) || nb::hasattr(idx, "__array_interface__"))
    return false;
  Py_ssize_t n = PySequence_Size(o);
  if (n < 0) {
    PyErr_Clear();
    return false;
  }
  if (n >= 32) return false;
  for (Py_ssize_t i = 0; i < n; ++i) {
    nb::object item = nb::steal(PySequence_GetItem(o, i));
    if (!item.is_valid()) {
      PyErr_Clear();
      return false;
    }
    PyObject* it = item.ptr();
    if (nb::isinstance<Tensor>(item) || PySequence_Check(it) || PySlice_Check(it) ||
        it == Py_Ellipsis || it == Py_None)
      return true;
  }
  return false;
}

std::vector<TensorIndex> parse_index(nb::handle idx) {
  std::vector<TensorIndex> out;
  auto one = [&](nb::handle h) {
    PyObject* o = h.ptr();
    if (o == Py_None) out.emplace_back(NoneIndex{});
    else if (o == Py_Ellipsis) out.emplace_back(EllipsisIndex{});
    else if (PyBool_Check(o)) out.emplace_back(o == Py_True);
    else if (PyLong_Check(o)) out.emplace_back(int64_t(PyLong_AsLongLong(o)));
    else if (PySlice_Check(o)) {
      Slice s;
      auto* sl = reinterpret_cast<PySliceObject*>(o);
      auto get = [](PyObject* v) -> std::optional<int64_t> {
        if (v == Py_None) return std::nullopt;
        if (!PyIndex_Check(v)) {
          Tensor* t = nullptr;
          if (nb::try_cast<Tensor*>(nb::handle(v), t) && t) return t->item().to_long();
          throw nb::type_error(
              "slice indices must be integers or None or have an __index__ method");
        }
        nb::object i = nb::steal(PyNumber_Index(v));
        return int64_t(PyLong_AsLongLong(i.ptr()));
      };
      s.start = get(sl->start);
      s.stop = get(sl->stop);
      auto st = get(sl->step);
      s.step = st.value_or(1);  // a zero or negative step raises in apply_indices (its order)
      out.emplace_back(s);
    } else {
      Tensor* t = nullptr;
      auto as_tensor_index = [&] {
        Tensor ti = tensor_from_data(h, std::nullopt);
        // An empty list indexes nothing; torch reads it as int64, not the default float.
        out.emplace_back(ti.numel() == 0 && ti.is_floating_point() ? to_dtype(ti, kLong) : ti);
      };
      bool is_array = nb::hasattr(h, "__array_interface__");
      if (nb::try_cast<Tensor*>(h, t) && t) out.emplace_back(*t);
      else if (PyIndex_Check(o)) {
        // numpy arrays have __index__ too, which raises unless they hold one integer: those
        // index as tensors (x[np.array([0, 2])], boolean masks), as in PyTorch.
        Py_ssize_t i = PyNumber_AsSsize_t(o, PyExc_IndexError);
        if (i == -1 && PyErr_Occurred()) {
          if (!is_array) throw nb::python_error();
          PyErr_Clear();
          as_tensor_index();
        } else {
          out.emplace_back(int64_t(i));
        }
      } else if (PySequence_Check(o) || is_array) {
        as_tensor_index();
      } else
        throw nb::index_error(
            "only integers, slices (`:`), ellipsis (`...`), None and long or "
            "byte Variables are valid indices");
    }
  };
  if (PyTuple_Check(idx.ptr())) {
    for (nb::handle h : nb::borrow<nb::tuple>(idx)) one(h);
  } else if (sequence_as_tuple(idx)) {
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                     "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                     "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                     "which will result either in an error or a different result",
                     1) != 0)
      throw nb::python_error();
    Py_ssize_t n = PySequence_Size(idx.ptr());
    for (Py_ssize_t i = 0; i < n; ++i) one(nb::steal(PySequence_GetItem(idx.ptr(), i)));
  } else {
    one(idx);
  }
  return out;
}

void bind_tensor(nb::module_& m) {
  nb::class_<Tensor> cls(m, "Tensor", nb::dynamic_attr(), nb::is_weak_referenceable(),
                         nb::type_slots(tensor_gc_slots),
                         "Tensor(data) or Tensor(*size) -> Tensor\n\n"
                         "An n-dimensional array of one dtype with autograd history; construct "
                         "one with ember.tensor, the factories, or this legacy constructor.");
  cls.def(
         "__init__",
         [](Tensor* self, nb::args args) {
           if (args.size() == 0) {
             new (self) Tensor(empty({0}, default_dtype()));
           } else if (args.size() == 1 && nb::isinstance<Tensor>(args[0])) {
             new (self) Tensor(nb::cast<Tensor&>(args[0]));
           } else if (args.size() == 1 && !PyLong_Check(args[0].ptr())) {
             new (self) Tensor(tensor_from_data(args[0], default_dtype()));
           } else {
             new (self) Tensor(empty(int_varargs(args, "size"), default_dtype()));
           }
         },
         nb::arg("args"),
         doc("__init__(*args)",
             "No argument: an empty tensor; a tensor: shares it; data: a copy in the default "
             "dtype; ints: an uninitialized tensor of that size."))
      .def_prop_ro(
          "shape", [](const Tensor& t) { return make_size(t.sizes()); },
          doc("shape -> Size", "The size of each dim, as an ember.Size."))
      .def_prop_ro(
          "dtype", [](const Tensor& t) { return t.dtype(); },
          doc("dtype -> dtype", "The element type."))
      .def_prop_ro("ndim", &Tensor::dim, doc("ndim -> int", "The number of dims."))
      .def_prop_ro(
          "_device_str", [](const Tensor& t) { return t.device().str(); },
          doc("_device_str -> str", "The device name ('cpu'), behind Tensor.device."))
      .def_prop_ro(
          "is_cuda", [](const Tensor&) { return false; },
          doc("is_cuda -> bool", "Always False: ember tensors live on the CPU."))
      .def_prop_ro(
          "is_sparse", [](const Tensor&) { return false; },
          doc("is_sparse -> bool", "Always False: ember tensors are dense."))
      .def_prop_ro(
          "is_quantized", [](const Tensor& t) { return is_quantized(t.dtype()); },
          doc("is_quantized -> bool", "Whether the dtype is a quantized one (qint8 ...)."))
      .def_prop_ro(
          "is_meta", [](const Tensor& t) { return t.device().type == DeviceType::Meta; },
          doc("is_meta -> bool", "Whether the tensor is on the meta device (no data)."))
      .def_prop_ro(
          "_version", &Tensor::_version,
          doc("_version -> int", "A counter bumped by every in-place change of the storage."))
      .def(
          "_is_view",
          [](const Tensor& t) {
            auto* m = autograd::meta_if(t);
            return m && m->is_view;
          },
          doc("_is_view() -> bool", "Whether autograd tracks the tensor as a view of another."))
      .def_prop_ro(
          "_base",
          [](const Tensor& t) -> std::optional<Tensor> {
            auto* m = autograd::meta_if(t);
            if (m && m->view_base.defined()) return m->view_base;
            return std::nullopt;
          },
          doc("_base -> Tensor or None",
              "For a view, the tensor it views (the root of a chain of views); None otherwise."))
      .def(
          "size",
          [](const Tensor& t, nb::object dim) -> nb::object {
            if (dim.is_none()) return make_size(t.sizes());
            return nb::int_(t.size(checked_dim(t, nb::cast<int64_t>(dim))));
          },
          nb::arg("dim") = nb::none(),
          doc("size(dim=None) -> Size or int", "The shape, or the size of one dim."))
      .def(
          "stride",
          [](const Tensor& t, nb::object dim) -> nb::object {
            if (dim.is_none()) return nb::tuple(nb::cast(t.strides().vec()));
            return nb::int_(t.stride(checked_dim(t, nb::cast<int64_t>(dim))));
          },
          nb::arg("dim") = nb::none(),
          doc("stride(dim=None) -> Tuple or int",
              "The step in elements between neighbours along each dim, or along one dim."))
      .def("dim", &Tensor::dim, doc("dim() -> int", "The number of dims."))
      .def("ndimension", &Tensor::dim, doc("ndimension() -> int", "Another name for dim()."))
      .def("numel", &Tensor::numel, doc("numel() -> int", "The number of elements."))
      .def("nelement", &Tensor::numel, doc("nelement() -> int", "Another name for numel()."))
      .def("element_size", &Tensor::element_size,
           doc("element_size() -> int", "The size of one element in bytes."))
      .def("storage_offset", &Tensor::storage_offset,
           doc("storage_offset() -> int",
               "Where the first element sits in the storage, in elements."))
      .def(
          "data_ptr",
          [](const Tensor& t) {  // meta tensors have no data: 0, as torch's
            if (t.device().type == DeviceType::Meta) return uintptr_t(0);
            return reinterpret_cast<uintptr_t>(t.data_ptr());
          },
          doc("data_ptr() -> int", "The address of the first element."))
      .def(
          "_storage_ptr",
          [](const Tensor& t) { return reinterpret_cast<uintptr_t>(t.storage()->data()); },
          doc("_storage_ptr() -> int", "The address of the start of the storage."))
      .def(
          "_storage_nbytes", [](const Tensor& t) { return t.storage()->nbytes(); },
          doc("_storage_nbytes() -> int", "The size of the storage in bytes."))
      .def("is_floating_point", &Tensor::is_floating_point,
           doc("is_floating_point() -> bool", "Whether the dtype is a floating-point type."))
      .def(
          "is_complex", [](const Tensor& t) { return is_complex(t.dtype()); },
          doc("is_complex() -> bool", "Whether the tensor's dtype is complex."))
      .def(
          "item",
          [](const Tensor& t) -> nb::object {
            if (is_complex(t.dtype())) {
              EMBER_CHECK(t.numel() == 1, "a Tensor with ", t.numel(),
                          " elements cannot be converted to Scalar");
              return tolist(reshape(t, {}));
            }
            return nb::cast(t.item());
          },
          doc("item() -> number", "The value of a one-element tensor as a Python number."))
      .def("tolist", &tolist,
           doc("tolist() -> list or number", "The elements as (nested) Python lists of numbers."))
      .def(
          "numpy",
          [](const Tensor& t, bool force) {
            // torch's rule: under no_grad (a custom op's kernel) a tensor that requires grad
            // converts
            EMBER_CHECK(force || !(t.requires_grad() && GradMode::is_enabled()),
                        "Can't call numpy() on Tensor that requires grad. "
                        "Use tensor.detach().numpy() instead.");
            if (!t.device().is_cpu())
              throw nb::type_error(("can't convert " + t.device().str() +
                                    " device type tensor to numpy. Use Tensor.cpu() to copy the "
                                    "tensor to host memory first.")
                                       .c_str());
            if (t.dim() > 64)  // numpy's limit: a larger array would abort inside nanobind
              throw nb::value_error("number of dimensions must be within [0, 64]");
            return to_numpy(t);
          },
          nb::arg("force") = false,
          doc("numpy(*, force=False) -> numpy.ndarray",
              "A numpy array sharing the tensor's memory (force allows tensors that require "
              "grad)."))
      .def(
          "__len__",
          [](const Tensor& t) {
            if (t.dim() == 0) throw nb::type_error("len() of a 0-d tensor");
            return t.sizes()[0];
          },
          doc("__len__() -> int", "The size of the first dim."))
      .def(
          "__getitem__",
          [](const Tensor& t, nb::handle idx) {
            check_tuple_on_0d(t, idx);
            return getitem(t, parse_index(idx));
          },
          nb::arg("index").none(),
          doc("__getitem__(index) -> Tensor",
              "Indexing with ints, slices, None, Ellipsis, bool and integer tensors, as numpy."))
      .def(
          "__setitem__",
          [](Tensor& t, nb::handle idx, nb::handle value) {
            Tensor v;
            Tensor* vt = nullptr;
            Scalar s;
            bool discards_imag = false;
            if (nb::try_cast<Tensor*>(value, vt) && vt) {
              v = *vt;
              const bool into_real = is_complex(v.dtype()) && !is_complex(t.dtype());
              if (v.numel() == 1 && !is_quantized(t.dtype()) && lone_bool_mask(idx)) {
                // torch's masked_fill_(mask, value.item()): checked, then in self's dtype
                check_item_fits(v, t.dtype());
                if (v.dtype() != t.dtype()) v = to_dtype(v, t.dtype());
              } else {
                discards_imag = into_real && t.dtype() != kBool;
              }
            } else if (PyComplex_Check(value.ptr()) && !is_complex(t.dtype())) {
              v = real_from_complex(PyComplex_AsCComplex(value.ptr()), t.dtype());
            } else if (scalar_from_python(value, s)) {
              // x_int32[...] = 1e40 raises, as PyTorch; a float16 or bfloat16 target takes inf
              if (t.dtype() != kHalf && t.dtype() != kBFloat16) check_scalar_fits(s, t.dtype());
              v = scalar_tensor(s, t.dtype());
            } else {  // a list, an array, None: PyTorch assigns only tensors and numbers
              throw nb::type_error(("can't assign a " + type_name_of(value) + " to a torch." +
                                    legacy_tensor_name(t.dtype()))
                                       .c_str());
            }
            check_tuple_on_0d(t, idx);
            setitem(t, parse_index(idx), v);
            if (discards_imag) warn_complex_to_real();  // after the copy, which may refuse
          },
          nb::arg("index").none(), nb::arg("value").none(),
          doc("__setitem__(index, value) -> None",
              "Writes value (a tensor, number or nested list) into the indexed elements."));
  m.def("_tensor", &tensor_from_data, nb::arg("data"), nb::arg("dtype") = nb::none(),
        doc("_tensor(data, dtype=None) -> Tensor",
            "A new tensor copied from nested lists, numbers, numpy arrays or tensors (behind "
            "ember.tensor)."));
  auto from_numpy_object = [](nb::handle h) -> Tensor {
    InArray a;
    if (!nb::try_cast(h, a))
      throw nb::type_error(
          ("expected np.ndarray (got " + std::string(nb::type_name(h.type()).c_str()) + ")")
              .c_str());
    warn_if_read_only(h);
    return from_numpy(a);
  };
  m.def("from_numpy", from_numpy_object, nb::arg("ndarray").none(),
        doc("from_numpy(ndarray) -> Tensor",
            "A tensor sharing the memory of a numpy array; changes to one show in the other."));
  m.def("_from_numpy_any", from_numpy_object, nb::arg("obj").none(),
        doc("_from_numpy_any(obj) -> Tensor",
            "from_numpy() with torch's TypeError for a non-array (as_tensor's path)."));
}

}  // namespace ember::py
