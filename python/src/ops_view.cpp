// Views and copies (csrc/ember/ops/view.cpp, copy.cpp): view/reshape/permute/expand/transpose,
// squeeze/unsqueeze, narrow/select/unfold, as_strided, flatten/unflatten, diagonal, movedim,
// copy_/fill_/zero_ (contiguous and clone: memory_format.cpp), broadcasting helpers, and the
// geometry setter behind the in-place view ops.
#include "common.h"
#include "ember/ops/memory_format.h"
#include "quantized.h"

namespace {
// check_scalar_fits for a fill of `t` (full, fill_): torch's one-element fill converts a number
// to float16 or bfloat16 unchecked (full((1,), 1e39, dtype=float16) is inf; (2,) raises).
void check_fill_fits(const ember::Scalar& v, const ember::Tensor& t) {
  if (t.numel() == 1 && (t.dtype() == ember::kHalf || t.dtype() == ember::kBFloat16)) return;
  ember::check_scalar_fits(v, t.dtype());
}
// torch's T and mT of a 0-d tensor: the tensor itself, with a deprecation UserWarning.
void warn_identity_on_0d(const char* what) {
  std::string msg = std::string(what) +
                    " is deprecated on 0-D tensors. This function is the identity in these cases.";
  if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) throw nb::python_error();
}
}  // namespace

namespace ember::py {

void warn_complex_to_real();  // module.cpp

void bind_view(nb::module_& m) {
  auto cls = tensor_class();
  cls.def(
      "view",
      [](const Tensor& t, nb::args args) {
        if (args.size() == 1) {
          if (auto dt = to_scalar_type(args[0])) return view_dtype(t, *dt);
        }
        return view(t, int_varargs(args, "view(): argument 'size'"));
      },
      nb::arg("shape"),
      doc("view(*shape) -> Tensor",
          "The same data seen with another shape (one dim may be -1), or reinterpreted as another "
          "dtype of the same size; the strides must allow it without a copy."));
  m.def("_alias", &alias, nb::arg("input"),
        doc("_alias(input) -> Tensor",
            "A view of input with its geometry (node AliasBackward0), behind as_subclass."));
  m.def("view_as_real", &view_as_real, nb::arg("input"),
        doc("view_as_real(input) -> Tensor",
            "A complex tensor's memory as real pairs: a view with a trailing dim of size 2 "
            "holding the real and imaginary parts."));
  m.def("view_as_complex", &view_as_complex, nb::arg("input"),
        doc("view_as_complex(input) -> Tensor",
            "A float or double tensor whose last dim has size 2 and stride 1 seen as complex "
            "values (a view)."));
  m.def("conj_physical", &conj_physical, nb::arg("input"),
        doc("conj_physical(input) -> Tensor",
            "The complex conjugate computed into a new tensor; a real input comes back as is."));
  m.def(
      "_fft_c2c",
      [](const Tensor& t, std::vector<int64_t> dim, int64_t normalization, bool forward) {
        return _fft_c2c(t, dim, normalization, forward);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("normalization"), nb::arg("forward"),
      doc("_fft_c2c(input, dim, normalization, forward) -> Tensor",
          "The complex-to-complex DFT over dim (normalization 0 none, 1 1/sqrt(n), 2 1/n)."));
  m.def(
      "_fft_r2c",
      [](const Tensor& t, std::vector<int64_t> dim, int64_t normalization, bool onesided) {
        return _fft_r2c(t, dim, normalization, onesided);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("normalization"), nb::arg("onesided"),
      doc("_fft_r2c(input, dim, normalization, onesided) -> Tensor",
          "The onesided DFT of a real tensor over dim (no autograd: ember.fft composes "
          "differentiable transforms from _fft_c2c)."));
  m.def(
      "_fft_c2r",
      [](const Tensor& t, std::vector<int64_t> dim, int64_t normalization, int64_t n) {
        return _fft_c2r(t, dim, normalization, n);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("normalization"), nb::arg("last_dim_size"),
      doc("_fft_c2r(input, dim, normalization, last_dim_size) -> Tensor",
          "The real inverse DFT of a onesided spectrum over dim (no autograd)."));
  cls.def(
      "view_as", [](const Tensor& t, const Tensor& o) { return view(t, o.sizes()); },
      nb::arg("other"), doc("view_as(other) -> Tensor", "view() with the shape of other."));
  cls.def(
      "reshape",
      [](const Tensor& t, nb::args args) {
        return reshape(t, int_varargs(args, "reshape(): argument 'shape'"));
      },
      nb::arg("shape"),
      doc("reshape(*shape) -> Tensor",
          "The same elements in another shape: a view when the strides allow it, else a copy."));
  m.def(
      "reshape",
      [](const Tensor& t, nb::handle shape) {
        return reshape(t, int_list(shape, "reshape(): argument 'shape'"));
      },
      nb::arg("input"), nb::arg("shape"),
      doc("reshape(input, shape) -> Tensor",
          "The same elements in another shape: a view when the strides allow it, else a copy."));
  cls.def(
      "reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, o.sizes()); },
      nb::arg("other"), doc("reshape_as(other) -> Tensor", "reshape() to the shape of other."));
  cls.def(
      "permute",
      [](const Tensor& t, nb::args args) {
        return permute(t, int_varargs(args, "permute(): argument 'dims'"));
      },
      nb::arg("dims"),
      doc("permute(*dims) -> Tensor", "A view with the dims reordered as listed."));
  m.def(
      "permute",
      [](const Tensor& t, nb::handle dims) {
        require_int_sequence(dims, "permute", 2);
        return permute(t, int_list(dims, "dims"));
      },
      nb::arg("input"), nb::arg("dims"),
      doc("permute(input, dims) -> Tensor", "A view with the dims reordered as listed."));
  cls.def(
      "expand",
      [](const Tensor& t, nb::args args) {
        return expand(t, int_varargs(args, "expand(): argument 'size'"));
      },
      nb::arg("sizes"),
      doc("expand(*sizes) -> Tensor",
          "A view that repeats size-1 dims (and adds leading ones) without copying; -1 keeps a "
          "size."));
  cls.def(
      "expand_as", [](const Tensor& t, const Tensor& o) { return expand(t, o.sizes()); },
      nb::arg("other"), doc("expand_as(other) -> Tensor", "expand() to the shape of other."));
  auto transpose_fn = [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); };
  Doc transpose_doc{"transpose(input, dim0, dim1) -> Tensor",
                    "A view with dims dim0 and dim1 swapped."};
  both(m, cls, "transpose", transpose_fn, transpose_doc, nb::arg("dim0"), nb::arg("dim1"));
  both(m, cls, "swapaxes", transpose_fn,
       {"swapaxes(input, axis0, axis1) -> Tensor", "Another name for transpose()."},
       nb::arg("axis0"), nb::arg("axis1"));
  both(m, cls, "swapdims", transpose_fn,
       {"swapdims(input, dim0, dim1) -> Tensor", "Another name for transpose()."}, nb::arg("dim0"),
       nb::arg("dim1"));
  both(m, cls, "t", [](const Tensor& x) { return t(x); },
       {"t(input) -> Tensor",
        "Swaps the two dims of a matrix; 0-d and 1-d inputs come back as they are."});
  cls.def_prop_ro(
      "T",
      [](const Tensor& x) {
        if (x.dim() == 0) warn_identity_on_0d("Tensor.T");
        DimVector d;
        for (int64_t i = x.dim() - 1; i >= 0; --i) d.push_back(i);
        return permute(x, d);
      },
      doc("T -> Tensor", "A view with all dims in reverse order."));
  cls.def_prop_ro(
      "mT",
      [](const Tensor& x) {
        if (x.dim() != 0) return matrix_transpose(x);
        warn_identity_on_0d("Tensor.mT");
        return x;
      },
      doc("mT -> Tensor", "A view with the last two dims swapped (a batch of transposes)."));
  auto squeeze_fn = [](const Tensor& t, nb::handle dim) {
    if (dim.is_none()) return squeeze(t);
    return squeeze(t, int_list(dim, "dim"));
  };
  both(m, cls, "squeeze", squeeze_fn,
       {"squeeze(input, dim=None) -> Tensor",
        "A view without the size-1 dims (only those listed in dim, if given)."},
       nb::arg("dim") = nb::none());
  auto unsq = [](const Tensor& t, int64_t d) { return unsqueeze(t, d); };
  both(m, cls, "unsqueeze", unsq,
       {"unsqueeze(input, dim) -> Tensor", "A view with a new size-1 dim inserted at dim."},
       nb::arg("dim"));
  cls.def(
      "unsqueeze_",
      [](nb::handle self, int64_t d) {
        Tensor& t = nb::cast<Tensor&>(self);
        Tensor v = unsqueeze(t, d);
        t.impl()->set_geometry(v.sizes(), v.strides(), v.storage_offset());
        t.bump_version();  // as torch's in-place view ops
        return nb::borrow(self);
      },
      nb::arg("dim"),
      doc("unsqueeze_(dim) -> Tensor", "In-place form of unsqueeze(): self's shape changes."));
  cls.def(
      "squeeze_",
      [](nb::handle self, nb::handle dim) {
        Tensor& t = nb::cast<Tensor&>(self);
        Tensor v = dim.is_none() ? squeeze(t) : squeeze(t, int_list(dim, "dim"));
        t.impl()->set_geometry(v.sizes(), v.strides(), v.storage_offset());
        t.bump_version();  // as torch's in-place view ops
        return nb::borrow(self);
      },
      nb::arg("dim") = nb::none(),
      doc("squeeze_(dim=None) -> Tensor", "In-place form of squeeze(): self's shape changes."));
  auto narrow_fn = [](const Tensor& t, int64_t d, int64_t s, int64_t l) {
    return narrow(t, d, s, l);
  };
  both(m, cls, "narrow", narrow_fn,
       {"narrow(input, dim, start, length) -> Tensor",
        "A view of length elements of dim, beginning at start."},
       nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  auto select_fn = [](const Tensor& t, int64_t d, int64_t i) { return select(t, d, i); };
  both(m, cls, "select", select_fn,
       {"select(input, dim, index) -> Tensor",
        "A view of one index along dim, with that dim removed."},
       nb::arg("dim"), nb::arg("index"));
  cls.def(
      "unfold",
      [](const Tensor& t, int64_t d, int64_t size, int64_t step) {
        return unfold(t, d, size, step);
      },
      nb::arg("dimension"), nb::arg("size"), nb::arg("step"),
      doc("unfold(dimension, size, step) -> Tensor",
          "A view of the windows of length size, step apart, along dimension, as a new last dim."));
  auto as_strided_fn = [](const Tensor& t, nb::handle size, nb::handle stride,
                          std::optional<int64_t> off) {
    return as_strided(t, int_list(size, "size"), int_list(stride, "stride"), off);
  };
  both(m, cls, "as_strided", as_strided_fn,
       {"as_strided(input, size, stride, storage_offset=None) -> Tensor",
        "A view of the same storage with the given sizes, strides and offset (no checks on "
        "overlap)."},
       nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());
  auto flatten_fn = [](const Tensor& t, int64_t s, int64_t e) { return flatten(t, s, e); };
  both(m, cls, "flatten", flatten_fn,
       {"flatten(input, start_dim=0, end_dim=-1) -> Tensor",
        "Merges dims start_dim..end_dim into one (a view when the strides allow it)."},
       nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  auto unflatten_fn = [](const Tensor& t, int64_t d, nb::handle sizes) {
    return unflatten(t, d, int_list(sizes, "sizes"));
  };
  both(m, cls, "unflatten", unflatten_fn,
       {"unflatten(input, dim, sizes) -> Tensor",
        "Splits dim into several dims of the given sizes."},
       nb::arg("dim"), nb::arg("sizes"));
  auto diagonal_fn = [](const Tensor& t, int64_t o, int64_t a, int64_t b) {
    return diagonal(t, o, a, b);
  };
  both(m, cls, "diagonal", diagonal_fn,
       {"diagonal(input, offset=0, dim1=0, dim2=1) -> Tensor",
        "A view of a diagonal of the (dim1, dim2) planes, moved to the last dim."},
       nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  auto movedim_fn = [](const Tensor& t, nb::handle s, nb::handle d) {
    return movedim(t, int_list(s, "source"), int_list(d, "destination"));
  };
  both(
      m, cls, "movedim", movedim_fn,
      {"movedim(input, source, destination) -> Tensor",
       "A view with the source dims moved to the destination positions, the others keeping order."},
      nb::arg("source"), nb::arg("destination"));
  both(m, cls, "moveaxis", movedim_fn,
       {"moveaxis(input, source, destination) -> Tensor", "Another name for movedim()."},
       nb::arg("source"), nb::arg("destination"));
  m.def(
      "_to_dtype",
      [](const Tensor& t, ScalarType d, bool copy) {
        return to_format(t, d, MemoryFormat::Preserve, copy);  // torch's layout for to(dtype)
      },
      nb::arg("input"), nb::arg("dtype"), nb::arg("copy"),
      doc("_to_dtype(input, dtype, copy) -> Tensor",
          "input converted to dtype; without copy, input itself when it already has it."));
  cls.def("copy_", inplace([](Tensor& t, const Tensor& src, bool) {
            if (is_quantized(t.dtype()) && !is_quantized(src.dtype())) [[unlikely]]
              return quantized_copy_from_float(t, src);
            copy_(t, src);
          }),
          nb::arg("src"), nb::arg("non_blocking") = false,
          doc("copy_(src, non_blocking=False) -> Tensor",
              "Writes src, broadcast and converted to self's dtype, into self and returns self."));
  // x.copy_(-4.0): PyTorch takes a Python number as src too, as its wrapped 0-d tensor (a float
  // in double), cast to self's dtype as a tensor is: -inf into int32 is INT_MIN, as torch's
  cls.def("copy_", inplace([](Tensor& t, Scalar src, bool) {
            if (is_quantized(t.dtype())) [[unlikely]]
              return quantized_copy_from_float(t, wrap_scalar(src));
            copy_(t, wrap_scalar(src));
          }),
          nb::arg("src"), nb::arg("non_blocking") = false,
          doc("copy_(src, non_blocking=False) -> Tensor",
              "Writes src, broadcast and converted to self's dtype, into self and returns self."));
  // torch's fill_(Tensor value): a 0-d value, converted as copy_ converts (unchecked; a complex
  // one into a real self keeps the real part), its gradient the sum of self's.
  cls.def("fill_", inplace([](Tensor& t, const Tensor& v) {
            EMBER_CHECK(v.dim() == 0,
                        "fill_ only supports 0-dimension value tensor but got tensor with ",
                        v.dim(), " dimensions.");
            if (is_quantized(t.dtype())) [[unlikely]]
              return quantized_fill_(t, v);
            // a meta value sends torch's call to the meta kernel, which writes nothing
            if (v.device().type == DeviceType::Meta) return;
            if (is_complex(v.dtype()) || v.requires_grad()) {
              if (is_complex(v.dtype()) && !is_complex(t.dtype()) && t.dtype() != kBool)
                warn_complex_to_real();
              copy_(t, v);
              return;
            }
            fill_(t, v.item());
          }),
          nb::arg("value"),
          doc("fill_(value) -> Tensor", "Sets every element of self to value and returns self."));
  cls.def("fill_", inplace([](Tensor& t, Scalar v) {
            if (is_quantized(t.dtype())) [[unlikely]]
              return quantized_fill_(t, wrap_scalar(v));
            check_fill_fits(v, t);
            fill_(t, v);
          }),
          nb::arg("value"),
          doc("fill_(value) -> Tensor", "Sets every element of self to value and returns self."));
  // A Python complex (the overload above takes the real numbers), checked as masked_fill's.
  cls.def("fill_", inplace([](Tensor& t, const TL& v) {
            if (is_quantized(t.dtype())) [[unlikely]]
              no_quantized_kernel("fill_");
            check_number_fits(v, t.dtype());
            copy_(t, v.t);
          }),
          nb::arg("value"),
          doc("fill_(value) -> Tensor", "Sets every element of self to value and returns self."));
  cls.def("zero_", inplace([](Tensor& t) {
            if (is_quantized(t.dtype())) [[unlikely]]
              no_quantized_kernel("zero_");
            zero_(t);
          }),
          doc("zero_() -> Tensor", "Sets every element of self to zero and returns self."));
  m.def(
      "broadcast_tensors",
      [](nb::args args) {
        std::vector<Tensor> ts;
        for (nb::handle h : args) ts.push_back(nb::cast<Tensor>(h));
        return nb::tuple(nb::cast(broadcast_tensors(ts)));  // a tuple, as torch's
      },
      nb::arg("tensors"),
      doc("broadcast_tensors(*tensors) -> List of Tensors",
          "Views of the tensors expanded to their common broadcast shape."));
  m.def(
      "broadcast_shapes",
      [](nb::args args) {
        DimVector shape;
        for (nb::handle h : args)
          shape = broadcast_shapes(shape, int_list(h, "shape"), "broadcast_shapes");
        return make_size(shape);
      },
      nb::arg("shapes"),
      doc("broadcast_shapes(*shapes) -> Size",
          "The shape that tensors of the given shapes broadcast to, without making any tensor."));
  // Gives self the sizes, strides and offset of `view`, a view of self's storage.
  m.def(
      "_set_geometry_",
      [](nb::handle self, const Tensor& view) {
        Tensor& t = nb::cast<Tensor&>(self);
        EMBER_CHECK(view.storage().get() == t.storage().get(),
                    "_set_geometry_: expected a view of the same storage");
        t.impl()->set_geometry(view.sizes(), view.strides(), view.storage_offset());
        t.bump_version();
        return nb::borrow(self);
      },
      nb::arg("self"), nb::arg("view"),
      doc("_set_geometry_(self, view) -> Tensor",
          "Gives self the sizes, strides and offset of view, a view of the same storage (behind "
          "the in-place view ops such as transpose_)."));
}

}  // namespace ember::py
