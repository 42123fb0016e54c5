// Indexing ops (csrc/ember/ops/index.cpp, indexing.cpp): index_select, gather/scatter,
// index_add/fill/put, masked_fill/select, take, nonzero.
#include "common.h"
#include "ember/autograd/rename.h"
#include "quantized.h"

namespace ember::py {

void check_item_fits(const Tensor& v, ScalarType dtype);  // module.cpp

namespace {
std::vector<std::optional<Tensor>> index_list(nb::handle seq) {
  std::vector<std::optional<Tensor>> out;
  for (nb::handle h : seq) {
    if (h.is_none()) out.emplace_back();
    else out.emplace_back(nb::cast<Tensor>(h));
  }
  return out;
}
}  // namespace

void bind_index(nb::module_& m) {
  auto cls = tensor_class();
  both(
      m, cls, "index_select",
      [](const Tensor& t, int64_t d, const Tensor& i) { return index_select(t, d, i); },
      {"index_select(input, dim, index) -> Tensor",
       "The entries of input along dim at the positions listed in the 1-D tensor index."},
      nb::arg("dim"), nb::arg("index"));
  both(
      m, cls, "gather",
      [](const Tensor& t, int64_t d, const Tensor& i, bool) { return gather(t, d, i); },
      {"gather(input, dim, index, *, sparse_grad=False) -> Tensor",
       "Reads input along dim at the positions in index: out[i][j] = input[index[i][j]][j] for dim "
       "0."},
      nb::arg("dim"), nb::arg("index"), nb::kw_only(), nb::arg("sparse_grad") = false);
  using Red = std::optional<std::string>;
  auto scatter_fn = [](const Tensor& t, int64_t d, const Tensor& i, nb::handle src, Red reduce) {
    Scalar s;
    if (!nb::isinstance<Tensor>(src) && scalar_from_python(src, s))
      return scatter(t, d, i, s, reduce);
    return scatter(t, d, i, nb::cast<Tensor>(src), reduce);
  };
  both(m, cls, "scatter", scatter_fn,
       {"scatter(input, dim, index, src, *, reduce=None) -> Tensor",
        "A copy of input with src (a tensor or a number) written along dim at the positions in "
        "index; the reverse of gather()."},
       nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::kw_only(),
       nb::arg("reduce") = nb::none());
  cls.def(
      "scatter_",
      [](nb::handle self, int64_t d, const Tensor& i, nb::handle src, Red reduce) {
        Tensor& t = nb::cast<Tensor&>(self);
        Scalar s;
        if (!nb::isinstance<Tensor>(src) && scalar_from_python(src, s))
          scatter_(t, d, i, s, reduce);
        else scatter_(t, d, i, nb::cast<Tensor>(src), reduce);
        return nb::borrow(self);
      },
      nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::kw_only(),
      nb::arg("reduce") = nb::none(),
      doc("scatter_(dim, index, src, *, reduce=None) -> Tensor", "In-place form of scatter()."));
  both(
      m, cls, "scatter_add",
      [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
        return scatter_add(t, d, i, s);
      },
      {"scatter_add(input, dim, index, src) -> Tensor",
       "A copy of input with the values of src added along dim at the positions in index."},
      nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  cls.def("scatter_add_", inplace([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
            scatter_add_(t, d, i, s);
          }),
          nb::arg("dim"), nb::arg("index"), nb::arg("src"),
          doc("scatter_add_(dim, index, src) -> Tensor", "In-place form of scatter_add()."));
  both(
      m, cls, "scatter_reduce",
      [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s, const std::string& r,
         bool inc) { return scatter_reduce(t, d, i, s, r, inc); },
      {"scatter_reduce(input, dim, index, src, reduce, *, include_self=True) -> Tensor",
       "Combines the values of src into input along dim at the positions in index with reduce "
       "('sum', 'prod', 'mean', 'amax' or 'amin')."},
      nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
      nb::arg("include_self") = true);
  cls.def("scatter_reduce_",
          inplace([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s, const std::string& r,
                     bool inc) { scatter_reduce_(t, d, i, s, r, inc); }),
          nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
          nb::arg("include_self") = true,
          doc("scatter_reduce_(dim, index, src, reduce, *, include_self=True) -> Tensor",
              "In-place form of scatter_reduce()."));
  both(
      m, cls, "index_add",
      [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s, Scalar a) {
        return index_add(t, d, i, s, a);
      },
      {"index_add(input, dim, index, source, *, alpha=1) -> Tensor",
       "A copy of input with alpha * source added to the slices along dim listed in index."},
      nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def(
      "index_add_", inplace([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s, Scalar a) {
        index_add_(t, d, i, s, a);
      }),
      nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1,
      doc("index_add_(dim, index, source, *, alpha=1) -> Tensor", "In-place form of index_add()."));
  // torch's index_fill takes a number or a 0-d tensor (its Tensor overload checks that first)
  auto fill_value = [](const TL& v) {
    EMBER_CHECK(v.t.dim() == 0,
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
                v.t.dim(), " dimension(s).");
    return v.t.item();
  };
  // A complex value (a Scalar cannot hold one) fills a complex self through a mask of the listed
  // slices; a real self refuses it, as torch's index_fill does.
  auto complex_fill_mask = [](const Tensor& t, int64_t d, const Tensor& i, const TL& v) {
    EMBER_CHECK(v.t.dim() == 0,
                "index_fill_ only supports a 0-dimensional value tensor, but got tensor with ",
                v.t.dim(), " dimension(s).");
    EMBER_CHECK(is_complex(t.dtype()),
                "index_fill_(): Converting complex Scalar to non-complex type is not supported");
    return index_fill(zeros(t.sizes(), TensorOptions(kBool).device(t.device())), d, i, true);
  };
  both(
      m, cls, "index_fill",
      [fill_value, complex_fill_mask](const Tensor& t, int64_t d, const Tensor& i, const TL& v) {
        if (is_complex(v.t.dtype())) return masked_fill(t, complex_fill_mask(t, d, i, v), v.t);
        Tensor out = index_fill(t, d, i, fill_value(v));
        // torch's node of the number overload, or of the 0-d tensor one
        autograd::rename_history(
            out, v.t.impl()->is_wrapped_number ? "IndexFillBackward0" : "IndexFillBackward1");
        return out;
      },
      {"index_fill(input, dim, index, value) -> Tensor",
       "A copy of input with the slices along dim listed in index set to value."},
      nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  cls.def(
      "index_fill_",
      inplace([fill_value, complex_fill_mask](Tensor& t, int64_t d, const Tensor& i, const TL& v) {
        if (is_complex(v.t.dtype())) masked_fill_(t, complex_fill_mask(t, d, i, v), v.t);
        else index_fill_(t, d, i, fill_value(v));
      }),
      nb::arg("dim"), nb::arg("index"), nb::arg("value"),
      doc("index_fill_(dim, index, value) -> Tensor", "In-place form of index_fill()."));
  both(
      m, cls, "masked_fill",
      [](const Tensor& t, const Tensor& mask, const TL& v) {
        if (is_quantized(t.dtype())) [[unlikely]]
          return quantized_masked_fill(t, mask, v.t, false);
        if (v.t.dim() == 0) check_item_fits(v.t, t.dtype());  // torch checks value.item()
        return masked_fill(t, mask, v.t);
      },
      {"masked_fill(input, mask, value) -> Tensor",
       "A copy of input with value written where the (broadcast) bool mask is true."},
      nb::arg("mask"), nb::arg("value"));
  cls.def("masked_fill_", inplace([](Tensor& t, const Tensor& mask, const TL& v) {
            if (is_quantized(t.dtype())) [[unlikely]] {
              quantized_masked_fill(t, mask, v.t, true);
              return;
            }
            if (v.t.dim() == 0) check_item_fits(v.t, t.dtype());  // torch checks value.item()
            masked_fill_(t, mask, v.t);
          }),
          nb::arg("mask"), nb::arg("value"),
          doc("masked_fill_(mask, value) -> Tensor", "In-place form of masked_fill()."));
  both(
      m, cls, "masked_select",
      [](const Tensor& t, const Tensor& mask) { return masked_select(t, mask); },
      {"masked_select(input, mask) -> Tensor",
       "A 1-D tensor of the elements of input where the (broadcast) bool mask is true."},
      nb::arg("mask"));
  both(
      m, cls, "take", [](const Tensor& t, const Tensor& i) { return take(t, i); },
      {"take(input, index) -> Tensor",
       "The elements of input, read as a flat 1-D tensor, at the positions in index."},
      nb::arg("index"));
  both(
      m, cls, "nonzero",
      [](const Tensor& t, bool as_tuple) -> nb::object {
        if (as_tuple) return nb::tuple(nb::cast(nonzero_tuple(t)));
        return nb::cast(nonzero(t));
      },
      {"nonzero(input, *, as_tuple=False) -> Tensor",
       "The indices of the nonzero elements, one row each, or one index tensor per dim with "
       "as_tuple."},
      nb::kw_only(), nb::arg("as_tuple") = false);
  both(m, cls, "argwhere", [](const Tensor& t) { return nonzero(t); },
       {"argwhere(input) -> Tensor", "The indices of the nonzero elements, one row each."});
  both(
      m, cls, "index_put",
      [](const Tensor& t, nb::handle idx, const Tensor& v, bool acc) {
        return index_put(t, index_list(idx), v, acc);
      },
      {"index_put(input, indices, values, accumulate=False) -> Tensor",
       "A copy of input with values written (or added, with accumulate) at the positions that the "
       "tuple of index tensors selects."},
      nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  cls.def("index_put_", inplace([](Tensor& t, nb::tuple idx, const Tensor& v, bool acc) {
            index_put_(t, index_list(idx), v, acc);
          }),
          nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false,
          doc("index_put_(indices, values, accumulate=False) -> Tensor",
              "In-place form of index_put()."));
}

}  // namespace ember::py
