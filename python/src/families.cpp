// Indexing, shape, scan/sort and linear-algebra ops as functions and Tensor methods.
// Ops returning (values, indices) are bound as _name and wrapped in named tuples in Python.
#include "common.h"

namespace ember::py {

namespace {

using Dt = std::optional<ScalarType>;
using TL = TensorLike;

std::vector<Tensor> tensor_seq(nb::handle seq, const char* op) {
  if (nb::isinstance<Tensor>(seq))
    throw nb::type_error((std::string(op) + "(): argument 'tensors' must be tuple of Tensors, not Tensor").c_str());
  std::vector<Tensor> out;
  for (nb::handle h : seq) {
    Tensor* t = nullptr;
    if (!nb::try_cast<Tensor*>(h, t) || !t)  // TypeError, as PyTorch raises, not a bad cast
      throw nb::type_error((std::string("[") + op + "] expected Tensor as element " +
                            std::to_string(out.size()) + "; got " +
                            nb::type_name(h.type()).c_str()).c_str());
    out.push_back(*t);
  }
  return out;
}


// Binds `fn` as ember.<name>(input, ...) and Tensor.<name>(...).
template <class F, class... Extra>
void both(nb::module_& m, nb::class_<Tensor>& cls, const char* name, F fn, const Extra&... extra) {
  m.def(name, fn, nb::arg("input"), extra...);
  cls.def(name, fn, extra...);
}

std::vector<std::optional<Tensor>> index_list(nb::handle seq) {
  std::vector<std::optional<Tensor>> out;
  for (nb::handle h : seq) {
    if (h.is_none()) out.emplace_back();
    else out.emplace_back(nb::cast<Tensor>(h));
  }
  return out;
}

void bind_index(nb::module_& m, nb::class_<Tensor>& cls) {
  both(m, cls, "index_select", [](const Tensor& t, int64_t d, const Tensor& i) { return index_select(t, d, i); },
       nb::arg("dim"), nb::arg("index"));
  both(m, cls, "gather", [](const Tensor& t, int64_t d, const Tensor& i, bool) { return gather(t, d, i); },
       nb::arg("dim"), nb::arg("index"), nb::kw_only(), nb::arg("sparse_grad") = false);
  using Red = std::optional<std::string>;
  auto scatter_fn = [](const Tensor& t, int64_t d, const Tensor& i, nb::handle src, Red reduce) {
    Scalar s;
    if (!nb::isinstance<Tensor>(src) && scalar_from_python(src, s)) return scatter(t, d, i, s, reduce);
    return scatter(t, d, i, nb::cast<Tensor>(src), reduce);
  };
  both(m, cls, "scatter", scatter_fn, nb::arg("dim"), nb::arg("index"), nb::arg("src"),
       nb::kw_only(), nb::arg("reduce") = nb::none());
  cls.def("scatter_", [](nb::handle self, int64_t d, const Tensor& i, nb::handle src, Red reduce) {
    Tensor& t = nb::cast<Tensor&>(self);
    Scalar s;
    if (!nb::isinstance<Tensor>(src) && scalar_from_python(src, s)) scatter_(t, d, i, s, reduce);
    else scatter_(t, d, i, nb::cast<Tensor>(src), reduce);
    return nb::borrow(self);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::kw_only(), nb::arg("reduce") = nb::none());
  both(m, cls, "scatter_add", [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
    return scatter_add(t, d, i, s);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  cls.def("scatter_add_", inplace([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s) {
    scatter_add_(t, d, i, s);
  }), nb::arg("dim"), nb::arg("index"), nb::arg("src"));
  both(m, cls, "scatter_reduce", [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s,
                                    const std::string& r, bool inc) {
    return scatter_reduce(t, d, i, s, r, inc);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
       nb::arg("include_self") = true);
  cls.def("scatter_reduce_", inplace([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s,
                                        const std::string& r, bool inc) {
    scatter_reduce_(t, d, i, s, r, inc);
  }), nb::arg("dim"), nb::arg("index"), nb::arg("src"), nb::arg("reduce"), nb::kw_only(),
          nb::arg("include_self") = true);
  both(m, cls, "index_add", [](const Tensor& t, int64_t d, const Tensor& i, const Tensor& s, Scalar a) {
    return index_add(t, d, i, s, a);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def("index_add_", inplace([](Tensor& t, int64_t d, const Tensor& i, const Tensor& s, Scalar a) {
    index_add_(t, d, i, s, a);
  }), nb::arg("dim"), nb::arg("index"), nb::arg("source"), nb::kw_only(), nb::arg("alpha") = 1);
  both(m, cls, "index_fill", [](const Tensor& t, int64_t d, const Tensor& i, Scalar v) {
    return index_fill(t, d, i, v);
  }, nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  cls.def("index_fill_", inplace([](Tensor& t, int64_t d, const Tensor& i, Scalar v) { index_fill_(t, d, i, v); }),
          nb::arg("dim"), nb::arg("index"), nb::arg("value"));
  both(m, cls, "masked_fill", [](const Tensor& t, const Tensor& mask, const TL& v) {
    return masked_fill(t, mask, v.t);
  }, nb::arg("mask"), nb::arg("value"));
  cls.def("masked_fill_", inplace([](Tensor& t, const Tensor& mask, const TL& v) { masked_fill_(t, mask, v.t); }),
          nb::arg("mask"), nb::arg("value"));
  both(m, cls, "masked_select", [](const Tensor& t, const Tensor& mask) { return masked_select(t, mask); },
       nb::arg("mask"));
  both(m, cls, "take", [](const Tensor& t, const Tensor& i) { return take(t, i); }, nb::arg("index"));
  both(m, cls, "nonzero", [](const Tensor& t, bool as_tuple) -> nb::object {
    if (as_tuple) return nb::tuple(nb::cast(nonzero_tuple(t)));
    return nb::cast(nonzero(t));
  }, nb::kw_only(), nb::arg("as_tuple") = false);
  both(m, cls, "argwhere", [](const Tensor& t) { return nonzero(t); });
  both(m, cls, "index_put", [](const Tensor& t, nb::handle idx, const Tensor& v, bool acc) {
    return index_put(t, index_list(idx), v, acc);
  }, nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
  cls.def("index_put_", inplace([](Tensor& t, nb::tuple idx, const Tensor& v, bool acc) {
    index_put_(t, index_list(idx), v, acc);
  }), nb::arg("indices"), nb::arg("values"), nb::arg("accumulate") = false);
}

void bind_shape(nb::module_& m, nb::class_<Tensor>& cls) {
  for (const char* name : {"cat", "concat", "concatenate"})
    m.def(name, [](nb::handle ts, int64_t dim) { return cat(tensor_seq(ts, "cat"), dim); },
          nb::arg("tensors"), nb::arg("dim") = 0);
  m.def("stack", [](nb::handle ts, int64_t dim) { return stack(tensor_seq(ts, "stack"), dim); },
        nb::arg("tensors"), nb::arg("dim") = 0);
  m.def("hstack", [](nb::handle ts) { return hstack(tensor_seq(ts, "hstack")); }, nb::arg("tensors"));
  m.def("vstack", [](nb::handle ts) { return vstack(tensor_seq(ts, "vstack")); }, nb::arg("tensors"));
  m.def("row_stack", [](nb::handle ts) { return vstack(tensor_seq(ts, "row_stack")); }, nb::arg("tensors"));
  auto split_fn = [](const Tensor& t, nb::handle size, int64_t dim) {
    if (PyLong_Check(size.ptr())) return split(t, nb::cast<int64_t>(size), dim);
    return split_with_sizes(t, int_list(size, "split_size_or_sections"), dim);
  };
  m.def("split", split_fn, nb::arg("tensor"), nb::arg("split_size_or_sections"), nb::arg("dim") = 0);
  cls.def("split", split_fn, nb::arg("split_size"), nb::arg("dim") = 0);
  both(m, cls, "split_with_sizes", [](const Tensor& t, nb::handle sizes, int64_t dim) {
    return split_with_sizes(t, int_list(sizes, "split_sizes"), dim);
  }, nb::arg("split_sizes"), nb::arg("dim") = 0);
  both(m, cls, "chunk", [](const Tensor& t, int64_t c, int64_t d) { return chunk(t, c, d); },
       nb::arg("chunks"), nb::arg("dim") = 0);
  both(m, cls, "unbind", [](const Tensor& t, int64_t d) { return unbind(t, d); }, nb::arg("dim") = 0);
  m.def("flip", [](const Tensor& t, nb::handle dims) { return flip(t, int_list(dims, "dims")); },
        nb::arg("input"), nb::arg("dims"));
  cls.def("flip", [](const Tensor& t, nb::args dims) { return flip(t, int_varargs(dims, "dims")); });
  both(m, cls, "fliplr", [](const Tensor& t) { return flip(t, {1}); });
  both(m, cls, "flipud", [](const Tensor& t) { return flip(t, {0}); });
  both(m, cls, "roll", [](const Tensor& t, nb::handle shifts, nb::handle dims) {
    return roll(t, int_list(shifts, "shifts"), dims_arg(dims));
  }, nb::arg("shifts"), nb::arg("dims") = nb::none());
  cls.def("repeat", [](const Tensor& t, nb::args sizes) { return repeat(t, int_varargs(sizes, "repeats")); });
  auto ri = [](const Tensor& t, nb::handle repeats, std::optional<int64_t> dim, nb::handle) {
    if (PyLong_Check(repeats.ptr())) return repeat_interleave(t, nb::cast<int64_t>(repeats), dim);
    return repeat_interleave(t, nb::cast<Tensor>(repeats), dim);
  };
  m.def("repeat_interleave", [ri](const Tensor& t, nb::handle repeats, std::optional<int64_t> dim,
                                  nb::handle out_size) {
    if (repeats.is_none()) return repeat_interleave(t);
    return ri(t, repeats, dim, out_size);
  }, nb::arg("input"), nb::arg("repeats") = nb::none(), nb::arg("dim") = nb::none(), nb::kw_only(),
     nb::arg("output_size") = nb::none());
  cls.def("repeat_interleave", ri, nb::arg("repeats"), nb::arg("dim") = nb::none(), nb::kw_only(),
          nb::arg("output_size") = nb::none());
  m.def("tile", [](const Tensor& t, nb::handle dims) { return tile(t, int_list(dims, "dims")); },
        nb::arg("input"), nb::arg("dims"));
  cls.def("tile", [](const Tensor& t, nb::args dims) { return tile(t, int_varargs(dims, "dims")); });
  m.def("meshgrid", [](nb::args ts, std::optional<std::string> indexing) {
    std::vector<Tensor> v = ts.size() == 1 && !nb::isinstance<Tensor>(ts[0]) ? tensor_seq(ts[0], "meshgrid")
                                                                            : tensor_seq(ts, "meshgrid");
    return meshgrid(v, indexing.value_or("ij"));
  }, nb::arg("tensors"), nb::kw_only(), nb::arg("indexing") = nb::none());
  both(m, cls, "broadcast_to", [](const Tensor& t, nb::handle shape) {
    return broadcast_to(t, int_list(shape, "size"));
  }, nb::arg("size"));

  both(m, cls, "cumsum", [](const Tensor& t, int64_t d, Dt dt) { return cumsum(t, d, dt); },
       nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  both(m, cls, "cumprod", [](const Tensor& t, int64_t d, Dt dt) { return cumprod(t, d, dt); },
       nb::arg("dim"), nb::kw_only(), nb::arg("dtype") = nb::none());
  cls.def("cumsum_", inplace([](Tensor& t, int64_t d) { copy_(t, cumsum(t, d)); }), nb::arg("dim"));
  m.def("_cummax", [](const Tensor& t, int64_t d) { return cummax(t, d); });
  m.def("_cummin", [](const Tensor& t, int64_t d) { return cummin(t, d); });
  m.def("_sort", [](const Tensor& t, int64_t d, bool desc, bool stable) { return sort(t, d, desc, stable); });
  both(m, cls, "argsort", [](const Tensor& t, int64_t d, bool desc, bool stable) {
    return argsort(t, d, desc, stable);
  }, nb::arg("dim") = -1, nb::arg("descending") = false, nb::kw_only(), nb::arg("stable") = false);
  m.def("_topk", [](const Tensor& t, int64_t k, int64_t d, bool largest, bool sorted) {
    return topk(t, k, d, largest, sorted);
  });
  m.def("_kthvalue", [](const Tensor& t, int64_t k, int64_t d, bool keep) { return kthvalue(t, k, d, keep); });
  m.def("_median_all", [](const Tensor& t) { return median(t); });
  m.def("_median_dim", [](const Tensor& t, int64_t d, bool keep) { return median(t, d, keep); });
  m.def("_mode", [](const Tensor& t, int64_t d, bool keep) { return mode(t, d, keep); });
  m.def("_unique", [](const Tensor& t, bool sorted, bool inv, bool counts, std::optional<int64_t> dim) {
    return unique(t, sorted, inv, counts, dim);
  });
  both(m, cls, "bincount", [](const Tensor& t, std::optional<Tensor> w, int64_t minlength) {
    return bincount(t, w, minlength);
  }, nb::arg("weights") = nb::none(), nb::arg("minlength") = 0);
  both(m, cls, "histc", [](const Tensor& t, int64_t bins, double lo, double hi) { return histc(t, bins, lo, hi); },
       nb::arg("bins") = 100, nb::arg("min") = 0, nb::arg("max") = 0);
}

void bind_linalg(nb::module_& m, nb::class_<Tensor>& cls) {
  both(m, cls, "matmul", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, nb::arg("other"));
  both(m, cls, "mm", [](const Tensor& a, const Tensor& b) { return mm(a, b); }, nb::arg("mat2"));
  both(m, cls, "bmm", [](const Tensor& a, const Tensor& b) { return bmm(a, b); }, nb::arg("mat2"));
  both(m, cls, "mv", [](const Tensor& a, const Tensor& b) { return mv(a, b); }, nb::arg("vec"));
  both(m, cls, "dot", [](const Tensor& a, const Tensor& b) { return dot(a, b); }, nb::arg("other"));
  both(m, cls, "inner", [](const Tensor& a, const Tensor& b) {
    return a.dim() == 1 && b.dim() == 1 ? dot(a, b) : matmul(a, matrix_transpose(b));
  }, nb::arg("other"));
  both(m, cls, "outer", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, nb::arg("vec2"));
  both(m, cls, "ger", [](const Tensor& a, const Tensor& b) { return outer(a, b); }, nb::arg("vec2"));
  both(m, cls, "addmm", [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
    return addmm(s, a, b, beta, alpha);
  }, nb::arg("mat1"), nb::arg("mat2"), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  both(m, cls, "baddbmm", [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar beta, Scalar alpha) {
    return baddbmm(s, a, b, beta, alpha);
  }, nb::arg("batch1"), nb::arg("batch2"), nb::kw_only(), nb::arg("beta") = 1, nb::arg("alpha") = 1);
  m.def("einsum", [](const std::string& eq, nb::args ops) {
    std::vector<Tensor> v = ops.size() == 1 && !nb::isinstance<Tensor>(ops[0]) ? tensor_seq(ops[0], "einsum")
                                                                              : tensor_seq(ops, "einsum");
    return einsum(eq, v);
  });
}

}  // namespace

void bind_families(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(nb::type<Tensor>());
  bind_index(m, cls);
  bind_shape(m, cls);
  bind_linalg(m, cls);
}

}  // namespace ember::py
