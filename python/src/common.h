#pragma once
// Shared binding helpers: type casters for dtype, Scalar and tensor-or-number arguments.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <string_view>

#include "ember/ember.h"

namespace nb = nanobind;

namespace ember::py {

/// A Python-facing dtype object (ember.float32 ...): one immortal instance per ScalarType.
struct DType {
  ScalarType type;
};

/// The Python dtype object for `t`.
nb::object dtype_object(ScalarType t);
/// The ScalarType of a dtype object or of the Python types float/int/bool; nullopt otherwise.
std::optional<ScalarType> to_scalar_type(nb::handle h);

/// An argument that may be a Tensor or a Python number (which becomes a wrapped 0-d tensor).
struct TensorLike {
  Tensor t;
};

/// Parses an int, or a sequence of ints, or *ints passed as varargs.
std::vector<int64_t> int_list(nb::handle h, const char* what);
std::vector<int64_t> int_varargs(const nb::args& args, const char* what);
/// dim=None/int/tuple/list -> empty vector for None.
std::vector<int64_t> dims_arg(nb::handle h);
/// Builds ember.Size from sizes.
nb::object make_size(IntArrayRef sizes);

/// A Scalar from a Python bool/int/float/0-d tensor/numpy scalar.
bool scalar_from_python(nb::handle h, Scalar& out);
/// Adds numpy's `axis`/`keepdims` spellings to the bindings of `scope` that take `dim` or
/// `keepdim` (its functions, or with `methods` a class's methods). See Note [numpy keywords].
void add_numpy_kwargs(nb::handle scope, bool methods);
/// A numpy scalar or 0-d array (np.float32(2), np.int64(3), np.array(1.5)): PyTorch takes these
/// wherever it takes a Python number.
bool is_numpy_scalar(nb::handle h);

// Note [Binding docstrings]
// Every binding carries a docstring whose first line is torch's signature for it (without the
// `out=` keyword, which ember's bindings do not take), then a blank line and one sentence of ours.
// nanobind puts its own typed signature line above it in __doc__, and stubgen copies both into
// ember/_C.pyi. A function and its Tensor method share one Doc: the method's signature is the
// function's without the leading `input` parameter.
struct Doc {
  std::string_view sig;
  std::string_view text;
};
/// "sig\n\ntext", kept alive for the life of the process (nanobind copies it anyway).
const char* doc(std::string_view sig, std::string_view text);
inline const char* doc(const Doc& d) { return doc(d.sig, d.text); }
/// The Tensor-method form of a function's Doc: `add(input, other)` becomes `add(other)`.
const char* method_doc(const Doc& d);

/// A Python number passed as `v` (a wrapped 0-d tensor) must fit `dtype` (check_scalar_fits).
void check_number_fits(const TensorLike& v, ScalarType dtype);
/// torch's legacy class name of a dtype's tensors ("FloatTensor"), for its TypeError texts.
std::string legacy_tensor_name(ScalarType dtype);
/// type(h).__name__, qualified by its module unless builtin ("numpy.ndarray", "list").
std::string type_name_of(nb::handle h);

/// Raises torch's TypeError "op(): argument 'dims' (position N) must be tuple of ints, not int"
/// for a bare int where the function form takes only a sequence (torch.flip(x, 0)).
void require_int_sequence(nb::handle dims, const char* op, int position);

/// Shorthands shared by the op bindings.
using Dt = std::optional<ScalarType>;
using TL = TensorLike;

/// Binds `fn` as ember.<name>(input, ...) and as the method Tensor.<name>(...).
template <class F, class... Extra>
void both(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, const Doc& d,
          const Extra&... extra) {
  m.def(name, fn, nb::arg("input"), extra..., doc(d));
  cls.def(name, fn, extra..., method_doc(d));
}
/// The Tensor class object, for binding files that add methods to it.
inline nb::class_<Tensor> tensor_class() {
  return nb::borrow<nb::class_<Tensor>>(nb::type<Tensor>());
}
/// A sequence of tensors (cat, stack, einsum ...); `op` names the caller in errors.
std::vector<Tensor> tensor_seq(nb::handle seq, const char* op);

/// Wraps an in-place op as a method returning the same Python object, as torch does.
template <class F, class R, class... A>
auto inplace_impl(F f, R (F::*)(Tensor&, A...) const) {
  return [f](nb::handle self, A... args) {
    f(nb::cast<Tensor&>(self), args...);
    return nb::borrow(self);
  };
}
template <class F>
auto inplace(F f) {
  return inplace_impl(f, &F::operator());
}

// Note [Python objects held by the graph]
// Hooks and the backward of a Python autograd.Function are Python objects that C++ graph objects
// own (a tensor's TensorImpl, a Node). The garbage collector cannot see C++ references, so a hook
// that refers back to its tensor would form a cycle it never frees. Such objects are held through
// PyRef, registered under their C++ owner; Tensor's tp_traverse (graph_refs.cpp) visits those of
// the owners that it alone keeps alive. A PyRef may be copied and dropped without the GIL (a
// kernel may free a node): its last copy takes the GIL to release the object.
struct Held;
class PyRef {
 public:
  PyRef(nb::object obj, const void* owner);
  /// Re-registers under `owner` (a Node is known only after the closure holding this is built).
  void set_owner(const void* owner);
  /// The object; call it with the GIL held.
  nb::handle get() const;

 private:
  std::shared_ptr<Held> held_;
};
/// tp_traverse and tp_clear of ember.Tensor.
extern PyType_Slot tensor_gc_slots[];

void bind_dtype(nb::module_& m);
void bind_tensor(nb::module_& m);
void bind_creation(nb::module_& m);
void bind_autograd(nb::module_& m);
// Ops as ember.<op> and Tensor methods, one file per family (as csrc/ember/ops).
void bind_unary(nb::module_& m);
void bind_binary(nb::module_& m);
void bind_operators(nb::module_& m);
void bind_reduce(nb::module_& m);
void bind_view(nb::module_& m);
void bind_index(nb::module_& m);
void bind_shape(nb::module_& m);
void bind_sort(nb::module_& m);
void bind_linalg(nb::module_& m);
void bind_special(nb::module_& m);
void bind_random(nb::module_& m);
void bind_registry(nb::module_& m);
void bind_library(nb::module_& m);          // custom ops (ember.library), PrivateUse1
void bind_profiler(nb::module_& m);         // ember._C._profiler_* (ember.autograd.profiler)
void bind_python_dispatch(nb::module_& m);  // the dispatcher's hook into TorchDispatchModes
void bind_kernel_launch(nb::module_& m);    // ember._C._launch_kernel (ember._inductor)
// Submodules: _C._nn (functional kernels), _C._optim (fused updates), _C._serialize.
void bind_nn_spatial(nb::module_& nn);
void bind_nn_activation(nb::module_& nn);
void bind_nn_loss(nb::module_& nn);
void bind_optim(nb::module_& optim);
void bind_serialize(nb::module_& ser);
void bind_export(nb::module_& m);
void bind_distributed(nb::module_& m);
void bind_quantized(nb::module_& m);  // ember._C._quantized, quantized Tensor methods

}  // namespace ember::py

namespace nanobind::detail {

template <>
struct type_caster<ember::ScalarType> {
  NB_TYPE_CASTER(ember::ScalarType, const_name("dtype"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    auto t = ember::py::to_scalar_type(src);
    if (!t) return false;
    value = *t;
    return true;
  }
  static handle from_cpp(ember::ScalarType t, rv_policy, cleanup_list*) noexcept {
    return ember::py::dtype_object(t).release();
  }
};

template <>
struct type_caster<ember::Scalar> {
  NB_TYPE_CASTER(ember::Scalar, const_name("Number"))
  bool from_python(handle src, uint8_t, cleanup_list*) noexcept {
    return ember::py::scalar_from_python(src, value);
  }
  static handle from_cpp(const ember::Scalar& s, rv_policy, cleanup_list*) noexcept {
    if (s.is_bool()) return PyBool_FromLong(s.to_bool());
    if (s.is_integral(false)) return PyLong_FromLongLong(s.to_long());
    return PyFloat_FromDouble(s.to_double());
  }
};

template <>
struct type_caster<ember::py::TensorLike> {
  NB_TYPE_CASTER(ember::py::TensorLike, const_name("Tensor | Number"))
  bool from_python(handle src, uint8_t flags, cleanup_list* cleanup) noexcept {
    ember::Tensor* t = nullptr;
    if (nb::try_cast<ember::Tensor*>(src, t) && t) {
      value.t = *t;
      return true;
    }
    ember::Scalar s;
    if (PyBool_Check(src.ptr()) || PyLong_Check(src.ptr()) || PyFloat_Check(src.ptr()) ||
        ember::py::is_numpy_scalar(src)) {
      if (!ember::py::scalar_from_python(src, s)) return false;
      value.t = ember::wrap_scalar(s);
      return true;
    }
    if (PyComplex_Check(src.ptr())) {
      // A Python complex: a wrapped 0-d complex128 (result_type gives it the default complex).
      Py_complex c = PyComplex_AsCComplex(src.ptr());
      value.t = ember::scalar_tensor(0, ember::kComplexDouble, true);
      *static_cast<std::complex<double>*>(value.t.data_ptr()) = {c.real, c.imag};
      return true;
    }
    return false;
  }
  static handle from_cpp(const ember::py::TensorLike&, rv_policy, cleanup_list*) noexcept {
    return none().release();
  }
};

}  // namespace nanobind::detail
