// Operators as ember.<op> functions and Tensor methods (torch's names and argument names).
#include "common.h"

namespace ember::py {

namespace {

using Dt = std::optional<ScalarType>;
using TL = TensorLike;


void bind_elementwise(nb::module_& m, nb::class_<Tensor>& cls) {
#define EMBER_BIND_UNARY(name, node)                                           \
  m.def(#name, [](const Tensor& t) { return name(t); }, nb::arg("input"));     \
  cls.def(#name, [](const Tensor& t) { return name(t); });                     \
  cls.def(#name "_", inplace([](Tensor& t) { name##_(t); }));
  EMBER_UNARY_FLOAT_OPS(EMBER_BIND_UNARY)
  EMBER_UNARY_SAME_OPS(EMBER_BIND_UNARY)
#undef EMBER_BIND_UNARY

#define EMBER_BIND_PRED(name)                                                  \
  m.def(#name, [](const Tensor& t) { return name(t); }, nb::arg("input"));     \
  cls.def(#name, [](const Tensor& t) { return name(t); });
  EMBER_BIND_PRED(isnan)
  EMBER_BIND_PRED(isinf)
  EMBER_BIND_PRED(isfinite)
  EMBER_BIND_PRED(isposinf)
  EMBER_BIND_PRED(isneginf)
  EMBER_BIND_PRED(signbit)
  EMBER_BIND_PRED(logical_not)
  EMBER_BIND_PRED(square)
#undef EMBER_BIND_PRED
  cls.def("logical_not_", inplace([](Tensor& t) { copy_(t, logical_not(t)); }));
  cls.def("square_", inplace([](Tensor& t) { mul_(t, t); }));

#define EMBER_BIND_BINARY(name, node)                                                         \
  m.def(#name, [](const TL& a, const TL& b) { return name(a.t, b.t); }, nb::arg("input"),     \
        nb::arg("other"));                                                                    \
  cls.def(#name, [](const Tensor& a, const TL& b) { return name(a, b.t); }, nb::arg("other")); \
  cls.def(#name "_", inplace([](Tensor& a, const TL& b) { name##_(a, b.t); }), nb::arg("other"));
  EMBER_BINARY_OPS(EMBER_BIND_BINARY)
#undef EMBER_BIND_BINARY

  m.def("add", [](const TL& a, const TL& b, Scalar alpha) { return add(a.t, b.t, alpha); },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def("add", [](const Tensor& a, const TL& b, Scalar alpha) { return add(a, b.t, alpha); },
          nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def("add_", inplace([](Tensor& a, const TL& b, Scalar alpha) { add_(a, b.t, alpha); }),
          nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  m.def("sub", [](const TL& a, const TL& b, Scalar alpha) { return sub(a.t, b.t, alpha); },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def("sub", [](const Tensor& a, const TL& b, Scalar alpha) { return sub(a, b.t, alpha); },
          nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  cls.def("sub_", inplace([](Tensor& a, const TL& b, Scalar alpha) { sub_(a, b.t, alpha); }),
          nb::arg("other"), nb::kw_only(), nb::arg("alpha") = 1);
  using Mode = std::optional<std::string>;
  m.def("div", [](const TL& a, const TL& b, Mode mode) { return div(a.t, b.t, mode); },
        nb::arg("input"), nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  cls.def("div", [](const Tensor& a, const TL& b, Mode mode) { return div(a, b.t, mode); },
          nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  cls.def("div_", inplace([](Tensor& a, const TL& b, Mode mode) { div_(a, b.t, mode); }),
          nb::arg("other"), nb::kw_only(), nb::arg("rounding_mode") = nb::none());
  m.def("round", [](const Tensor& t, int64_t decimals) { return round(t, decimals); },
        nb::arg("input"), nb::kw_only(), nb::arg("decimals") = 0);
  cls.def("round", [](const Tensor& t, int64_t decimals) { return round(t, decimals); },
          nb::kw_only(), nb::arg("decimals") = 0);

  auto opt_tensor = [](nb::handle h) -> std::optional<Tensor> {
    if (h.is_none()) return std::nullopt;
    return nb::cast<TL>(h).t;
  };
  m.def("clamp", [opt_tensor](const Tensor& t, nb::handle lo, nb::handle hi) {
    return clamp(t, opt_tensor(lo), opt_tensor(hi));
  }, nb::arg("input"), nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  cls.def("clamp", [opt_tensor](const Tensor& t, nb::handle lo, nb::handle hi) {
    return clamp(t, opt_tensor(lo), opt_tensor(hi));
  }, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  cls.def("clamp_", [opt_tensor](nb::handle self, nb::handle lo, nb::handle hi) {
    clamp_(nb::cast<Tensor&>(self), opt_tensor(lo), opt_tensor(hi));
    return nb::borrow(self);
  }, nb::arg("min") = nb::none(), nb::arg("max") = nb::none());
  m.def("nan_to_num", [](const Tensor& t, std::optional<double> nan, std::optional<double> pi,
                         std::optional<double> ni) { return nan_to_num(t, nan, pi, ni); },
        nb::arg("input"), nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
  cls.def("nan_to_num", [](const Tensor& t, std::optional<double> nan, std::optional<double> pi,
                           std::optional<double> ni) { return nan_to_num(t, nan, pi, ni); },
          nb::arg("nan") = 0.0, nb::arg("posinf") = nb::none(), nb::arg("neginf") = nb::none());
  m.def("_where", [](const Tensor& c, const TL& a, const TL& b) { return where(c, a.t, b.t); });
  m.def("lerp", [](const Tensor& a, const Tensor& b, const TL& w) { return lerp(a, b, w.t); },
        nb::arg("input"), nb::arg("end"), nb::arg("weight"));
  cls.def("lerp", [](const Tensor& a, const Tensor& b, const TL& w) { return lerp(a, b, w.t); },
          nb::arg("end"), nb::arg("weight"));
  m.def("addcmul", [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar v) { return addcmul(s, a, b, v); },
        nb::arg("input"), nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  cls.def("addcmul", [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar v) { return addcmul(s, a, b, v); },
          nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  cls.def("addcmul_", inplace([](Tensor& s, const Tensor& a, const Tensor& b, Scalar v) {
    add_(s, mul(a, b), v);
  }), nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  m.def("addcdiv", [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar v) { return addcdiv(s, a, b, v); },
        nb::arg("input"), nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  cls.def("addcdiv", [](const Tensor& s, const Tensor& a, const Tensor& b, Scalar v) { return addcdiv(s, a, b, v); },
          nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  cls.def("addcdiv_", inplace([](Tensor& s, const Tensor& a, const Tensor& b, Scalar v) {
    add_(s, true_divide(a, b), v);
  }), nb::arg("tensor1"), nb::arg("tensor2"), nb::kw_only(), nb::arg("value") = 1);
  m.def("result_type", [](const TL& a, const TL& b) { return result_type({a.t, b.t}); });
}

void bind_operators(nb::class_<Tensor>& cls) {
  auto op = nb::is_operator();
  cls.def("__add__", [](const Tensor& a, const TL& b) { return add(a, b.t); }, op)
      .def("__radd__", [](const Tensor& a, const TL& b) { return add(b.t, a); }, op)
      .def("__sub__", [](const Tensor& a, const TL& b) { return sub(a, b.t); }, op)
      .def("__rsub__", [](const Tensor& a, const TL& b) { return sub(b.t, a); }, op)
      .def("__mul__", [](const Tensor& a, const TL& b) { return mul(a, b.t); }, op)
      .def("__rmul__", [](const Tensor& a, const TL& b) { return mul(b.t, a); }, op)
      .def("__truediv__", [](const Tensor& a, const TL& b) { return true_divide(a, b.t); }, op)
      .def("__rtruediv__", [](const Tensor& a, const TL& b) { return true_divide(b.t, a); }, op)
      .def("__floordiv__", [](const Tensor& a, const TL& b) { return floor_divide(a, b.t); }, op)
      .def("__rfloordiv__", [](const Tensor& a, const TL& b) { return floor_divide(b.t, a); }, op)
      .def("__mod__", [](const Tensor& a, const TL& b) { return remainder(a, b.t); }, op)
      .def("__rmod__", [](const Tensor& a, const TL& b) { return remainder(b.t, a); }, op)
      .def("__pow__", [](const Tensor& a, const TL& b) { return pow(a, b.t); }, op)
      .def("__rpow__", [](const Tensor& a, const TL& b) { return pow(b.t, a); }, op)
      .def("__and__", [](const Tensor& a, const TL& b) { return bitwise_and(a, b.t); }, op)
      .def("__rand__", [](const Tensor& a, const TL& b) { return bitwise_and(b.t, a); }, op)
      .def("__or__", [](const Tensor& a, const TL& b) { return bitwise_or(a, b.t); }, op)
      .def("__ror__", [](const Tensor& a, const TL& b) { return bitwise_or(b.t, a); }, op)
      .def("__xor__", [](const Tensor& a, const TL& b) { return bitwise_xor(a, b.t); }, op)
      .def("__rxor__", [](const Tensor& a, const TL& b) { return bitwise_xor(b.t, a); }, op)
      .def("__lshift__", [](const Tensor& a, const TL& b) { return bitwise_left_shift(a, b.t); }, op)
      .def("__rshift__", [](const Tensor& a, const TL& b) { return bitwise_right_shift(a, b.t); }, op)
      .def("__rlshift__", [](const Tensor& a, const TL& b) { return bitwise_left_shift(b.t, a); }, op)
      .def("__rrshift__", [](const Tensor& a, const TL& b) { return bitwise_right_shift(b.t, a); }, op)
      .def("__eq__", [](const Tensor& a, const TL& b) { return eq(a, b.t); }, op)
      .def("__ne__", [](const Tensor& a, const TL& b) { return ne(a, b.t); }, op)
      .def("__lt__", [](const Tensor& a, const TL& b) { return lt(a, b.t); }, op)
      .def("__le__", [](const Tensor& a, const TL& b) { return le(a, b.t); }, op)
      .def("__gt__", [](const Tensor& a, const TL& b) { return gt(a, b.t); }, op)
      .def("__ge__", [](const Tensor& a, const TL& b) { return ge(a, b.t); }, op)
      .def("__neg__", [](const Tensor& a) { return neg(a); })
      .def("__pos__", [](const Tensor& a) { return a; })
      .def("__abs__", [](const Tensor& a) { return abs(a); })
      .def("__invert__", [](const Tensor& a) {
        if (is_floating_point(a.dtype()))
          throw nb::type_error("~ (operator.invert) is only implemented on integer and Boolean-type tensors");
        return bitwise_not(a);
      })
      .def("__matmul__", [](const Tensor& a, const Tensor& b) { return matmul(a, b); }, op)
      .def("__rmatmul__", [](const Tensor& a, const Tensor& b) { return matmul(b, a); }, op);
#define EMBER_BIND_IOP(dunder, fn)                                                 \
  cls.def(dunder, [](nb::handle self, const TL& b) {                               \
    fn(nb::cast<Tensor&>(self), b.t);                                              \
    return nb::borrow(self);                                                       \
  }, op);
  EMBER_BIND_IOP("__iadd__", [](Tensor& a, const Tensor& b) { add_(a, b); })
  EMBER_BIND_IOP("__isub__", [](Tensor& a, const Tensor& b) { sub_(a, b); })
  EMBER_BIND_IOP("__imul__", mul_)
  EMBER_BIND_IOP("__itruediv__", true_divide_)
  EMBER_BIND_IOP("__ifloordiv__", floor_divide_)
  EMBER_BIND_IOP("__imod__", remainder_)
  EMBER_BIND_IOP("__ipow__", pow_)
  EMBER_BIND_IOP("__iand__", bitwise_and_)
  EMBER_BIND_IOP("__ior__", bitwise_or_)
  EMBER_BIND_IOP("__ixor__", bitwise_xor_)
  EMBER_BIND_IOP("__ilshift__", bitwise_left_shift_)
  EMBER_BIND_IOP("__irshift__", bitwise_right_shift_)
#undef EMBER_BIND_IOP
}

void bind_reductions(nb::module_& m, nb::class_<Tensor>& cls) {
  auto sum_fn = [](const Tensor& t, nb::handle dim, bool keepdim, Dt dtype) {
    return sum(t, dims_arg(dim), keepdim, dtype);
  };
  auto mean_fn = [](const Tensor& t, nb::handle dim, bool keepdim, Dt dtype) {
    return mean(t, dims_arg(dim), keepdim, dtype);
  };
  for (auto [name, fn] : {std::pair{"sum", +sum_fn}, std::pair{"mean", +mean_fn}}) {
    m.def(name, fn, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false,
          nb::kw_only(), nb::arg("dtype") = nb::none());
    cls.def(name, fn, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
            nb::arg("dtype") = nb::none());
  }
  auto prod_fn = [](const Tensor& t, std::optional<int64_t> dim, bool keepdim, Dt dtype) {
    return dim ? prod(t, *dim, keepdim, dtype) : prod(t, dtype);
  };
  m.def("prod", prod_fn, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false,
        nb::kw_only(), nb::arg("dtype") = nb::none());
  cls.def("prod", prod_fn, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
          nb::arg("dtype") = nb::none());
  auto amax_fn = [](const Tensor& t, nb::handle dim, bool keepdim) { return amax(t, dims_arg(dim), keepdim); };
  auto amin_fn = [](const Tensor& t, nb::handle dim, bool keepdim) { return amin(t, dims_arg(dim), keepdim); };
  auto all_fn = [](const Tensor& t, nb::handle dim, bool keepdim) { return all(t, dims_arg(dim), keepdim); };
  auto any_fn = [](const Tensor& t, nb::handle dim, bool keepdim) { return any(t, dims_arg(dim), keepdim); };
  for (auto [name, fn] : {std::pair{"amax", +amax_fn}, std::pair{"amin", +amin_fn},
                          std::pair{"all", +all_fn}, std::pair{"any", +any_fn}}) {
    m.def(name, fn, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
    cls.def(name, fn, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  }
  m.def("_max_all", [](const Tensor& t) { return max(t); });
  m.def("_min_all", [](const Tensor& t) { return min(t); });
  m.def("_max_dim", [](const Tensor& t, int64_t d, bool k) { return max(t, d, k); });
  m.def("_min_dim", [](const Tensor& t, int64_t d, bool k) { return min(t, d, k); });
  auto argmax_fn = [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return argmax(t, dim, keepdim); };
  auto argmin_fn = [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) { return argmin(t, dim, keepdim); };
  for (auto [name, fn] : {std::pair{"argmax", +argmax_fn}, std::pair{"argmin", +argmin_fn}}) {
    m.def(name, fn, nb::arg("input"), nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
    cls.def(name, fn, nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  }
  m.def("_var_mean", [](const Tensor& t, nb::handle dim, std::optional<double> correction, bool keepdim) {
    std::optional<std::vector<int64_t>> d;
    if (!dim.is_none()) d = dims_arg(dim);
    return var_mean(t, d, correction, keepdim);
  }, nb::arg("input"), nb::arg("dim").none(), nb::arg("correction").none(), nb::arg("keepdim"));
  m.def("_norm", [](const Tensor& t, std::optional<double> p, nb::handle dim, bool keepdim, Dt dtype) {
    std::optional<Scalar> ps;
    if (p) ps = Scalar(*p);
    return norm(t, ps, dims_arg(dim), keepdim, dtype);
  }, nb::arg("input"), nb::arg("p").none(), nb::arg("dim").none(), nb::arg("keepdim"),
     nb::arg("dtype").none());
  auto lse = [](const Tensor& t, nb::handle dim, bool keepdim) { return logsumexp(t, dims_arg(dim), keepdim); };
  m.def("logsumexp", lse, nb::arg("input"), nb::arg("dim"), nb::arg("keepdim") = false);
  cls.def("logsumexp", lse, nb::arg("dim"), nb::arg("keepdim") = false);
  auto cnz = [](const Tensor& t, nb::handle dim) { return count_nonzero(t, dims_arg(dim)); };
  m.def("count_nonzero", cnz, nb::arg("input"), nb::arg("dim") = nb::none());
  cls.def("count_nonzero", cnz, nb::arg("dim") = nb::none());
}

void bind_views(nb::module_& m, nb::class_<Tensor>& cls) {
  cls.def("view", [](const Tensor& t, nb::args args) {
    if (args.size() == 1) {
      if (auto dt = to_scalar_type(args[0])) return view_dtype(t, *dt);
    }
    return view(t, int_varargs(args, "view(): argument 'size'"));
  });
  cls.def("view_as", [](const Tensor& t, const Tensor& o) { return view(t, o.sizes()); });
  cls.def("reshape", [](const Tensor& t, nb::args args) { return reshape(t, int_varargs(args, "reshape(): argument 'shape'")); });
  m.def("reshape", [](const Tensor& t, nb::handle shape) { return reshape(t, int_list(shape, "reshape(): argument 'shape'")); },
        nb::arg("input"), nb::arg("shape"));
  cls.def("reshape_as", [](const Tensor& t, const Tensor& o) { return reshape(t, o.sizes()); });
  cls.def("permute", [](const Tensor& t, nb::args args) { return permute(t, int_varargs(args, "permute(): argument 'dims'")); });
  m.def("permute", [](const Tensor& t, nb::handle dims) { return permute(t, int_list(dims, "dims")); },
        nb::arg("input"), nb::arg("dims"));
  cls.def("expand", [](const Tensor& t, nb::args args) { return expand(t, int_varargs(args, "expand(): argument 'size'")); });
  cls.def("expand_as", [](const Tensor& t, const Tensor& o) { return expand(t, o.sizes()); });
  auto transpose_fn = [](const Tensor& t, int64_t a, int64_t b) { return transpose(t, a, b); };
  m.def("transpose", transpose_fn, nb::arg("input"), nb::arg("dim0"), nb::arg("dim1"));
  cls.def("transpose", transpose_fn, nb::arg("dim0"), nb::arg("dim1"));
  m.def("swapaxes", transpose_fn);
  cls.def("swapaxes", transpose_fn);
  m.def("swapdims", transpose_fn);
  cls.def("swapdims", transpose_fn);
  m.def("t", [](const Tensor& x) { return t(x); }, nb::arg("input"));
  cls.def("t", [](const Tensor& x) { return t(x); });
  cls.def_prop_ro("T", [](const Tensor& x) {
    DimVector d;
    for (int64_t i = x.dim() - 1; i >= 0; --i) d.push_back(i);
    return permute(x, d);
  });
  cls.def_prop_ro("mT", [](const Tensor& x) { return matrix_transpose(x); });
  auto squeeze_fn = [](const Tensor& t, nb::handle dim) {
    if (dim.is_none()) return squeeze(t);
    return squeeze(t, int_list(dim, "dim"));
  };
  m.def("squeeze", squeeze_fn, nb::arg("input"), nb::arg("dim") = nb::none());
  cls.def("squeeze", squeeze_fn, nb::arg("dim") = nb::none());
  auto unsq = [](const Tensor& t, int64_t d) { return unsqueeze(t, d); };
  m.def("unsqueeze", unsq, nb::arg("input"), nb::arg("dim"));
  cls.def("unsqueeze", unsq, nb::arg("dim"));
  cls.def("unsqueeze_", [](nb::handle self, int64_t d) {
    Tensor& t = nb::cast<Tensor&>(self);
    Tensor v = unsqueeze(t, d);
    t.impl()->set_geometry(v.sizes(), v.strides(), v.storage_offset());
    return nb::borrow(self);
  });
  cls.def("squeeze_", [](nb::handle self, nb::handle dim) {
    Tensor& t = nb::cast<Tensor&>(self);
    Tensor v = dim.is_none() ? squeeze(t) : squeeze(t, int_list(dim, "dim"));
    t.impl()->set_geometry(v.sizes(), v.strides(), v.storage_offset());
    return nb::borrow(self);
  }, nb::arg("dim") = nb::none());
  auto narrow_fn = [](const Tensor& t, int64_t d, int64_t s, int64_t l) { return narrow(t, d, s, l); };
  m.def("narrow", narrow_fn, nb::arg("input"), nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  cls.def("narrow", narrow_fn, nb::arg("dim"), nb::arg("start"), nb::arg("length"));
  auto select_fn = [](const Tensor& t, int64_t d, int64_t i) { return select(t, d, i); };
  m.def("select", select_fn, nb::arg("input"), nb::arg("dim"), nb::arg("index"));
  cls.def("select", select_fn, nb::arg("dim"), nb::arg("index"));
  cls.def("unfold", [](const Tensor& t, int64_t d, int64_t size, int64_t step) { return unfold(t, d, size, step); },
          nb::arg("dimension"), nb::arg("size"), nb::arg("step"));
  auto as_strided_fn = [](const Tensor& t, nb::handle size, nb::handle stride, std::optional<int64_t> off) {
    return as_strided(t, int_list(size, "size"), int_list(stride, "stride"), off);
  };
  m.def("as_strided", as_strided_fn, nb::arg("input"), nb::arg("size"), nb::arg("stride"),
        nb::arg("storage_offset") = nb::none());
  cls.def("as_strided", as_strided_fn, nb::arg("size"), nb::arg("stride"), nb::arg("storage_offset") = nb::none());
  auto flatten_fn = [](const Tensor& t, int64_t s, int64_t e) { return flatten(t, s, e); };
  m.def("flatten", flatten_fn, nb::arg("input"), nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  cls.def("flatten", flatten_fn, nb::arg("start_dim") = 0, nb::arg("end_dim") = -1);
  auto unflatten_fn = [](const Tensor& t, int64_t d, nb::handle sizes) {
    return unflatten(t, d, int_list(sizes, "sizes"));
  };
  m.def("unflatten", unflatten_fn, nb::arg("input"), nb::arg("dim"), nb::arg("sizes"));
  cls.def("unflatten", unflatten_fn, nb::arg("dim"), nb::arg("sizes"));
  auto diagonal_fn = [](const Tensor& t, int64_t o, int64_t a, int64_t b) { return diagonal(t, o, a, b); };
  m.def("diagonal", diagonal_fn, nb::arg("input"), nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  cls.def("diagonal", diagonal_fn, nb::arg("offset") = 0, nb::arg("dim1") = 0, nb::arg("dim2") = 1);
  auto movedim_fn = [](const Tensor& t, nb::handle s, nb::handle d) {
    return movedim(t, int_list(s, "source"), int_list(d, "destination"));
  };
  for (const char* name : {"movedim", "moveaxis"}) {
    m.def(name, movedim_fn, nb::arg("input"), nb::arg("source"), nb::arg("destination"));
    cls.def(name, movedim_fn, nb::arg("source"), nb::arg("destination"));
  }
  cls.def("contiguous", [](nb::handle self, nb::handle) -> nb::object {
    Tensor& t = nb::cast<Tensor&>(self);
    if (t.is_contiguous()) return nb::borrow(self);
    return nb::cast(contiguous(t));
  }, nb::arg("memory_format") = nb::none());
  m.def("clone", [](const Tensor& t, nb::handle) { return clone(t); }, nb::arg("input"), nb::kw_only(),
        nb::arg("memory_format") = nb::none());
  cls.def("clone", [](const Tensor& t, nb::handle) { return clone(t); }, nb::kw_only(),
          nb::arg("memory_format") = nb::none());
  m.def("_to_dtype", [](const Tensor& t, ScalarType d, bool copy) { return to_dtype(t, d, copy); });
  cls.def("copy_", inplace([](Tensor& t, const Tensor& src, bool) { copy_(t, src); }), nb::arg("src"),
          nb::arg("non_blocking") = false);
  cls.def("fill_", inplace([](Tensor& t, Scalar v) { fill_(t, v); }), nb::arg("value"));
  cls.def("zero_", inplace([](Tensor& t) { zero_(t); }));
  m.def("broadcast_tensors", [](nb::args args) {
    std::vector<Tensor> ts;
    for (nb::handle h : args) ts.push_back(nb::cast<Tensor>(h));
    return broadcast_tensors(ts);
  });
  m.def("broadcast_shapes", [](nb::args args) {
    DimVector shape;
    for (nb::handle h : args) shape = broadcast_shapes(shape, int_list(h, "shape"), "broadcast_shapes");
    return make_size(shape);
  });
}

}  // namespace

void bind_ops(nb::module_& m) {
  auto cls = nb::borrow<nb::class_<Tensor>>(nb::type<Tensor>());
  bind_elementwise(m, cls);
  bind_operators(cls);
  bind_reductions(m, cls);
  bind_views(m, cls);
}

}  // namespace ember::py
