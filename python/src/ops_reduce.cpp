// Reductions (csrc/ember/ops/reduce.cpp): sum, mean, prod, amax/amin, all/any, argmax/argmin,
// max/min (wrapped into named tuples in Python), var_mean, norm, logsumexp, count_nonzero.
#include "common.h"
#include "quantized.h"

namespace ember::py {

namespace {
// An empty dim list reduces nothing for all/any, as torch's all.dims: each element's truth
// (uint8 stays uint8), where sum(dim=()) reduces every dim.
Tensor element_truth(const Tensor& t) {
  Tensor r = ne(t, wrap_scalar(int64_t(0)));
  return t.dtype() == kByte ? to_dtype(r, kByte) : r;
}
}  // namespace

void bind_reduce(nb::module_& m) {
  auto cls = tensor_class();
  auto sum_fn = [](const Tensor& t, nb::handle dim, bool keepdim, Dt dtype) {
    return sum(t, dims_arg(dim), keepdim, dtype);
  };
  auto mean_fn = [](const Tensor& t, nb::handle dim, bool keepdim, Dt dtype) {
    if (is_quantized(t.dtype())) [[unlikely]]
      return quantized_mean(t, dims_arg(dim), keepdim);
    return mean(t, dims_arg(dim), keepdim, dtype);
  };
  both(m, cls, "sum", +sum_fn,
       {"sum(input, dim=None, keepdim=False, *, dtype=None) -> Tensor",
        "Adds up the elements over the given dims (all of them for None), optionally in dtype."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
       nb::arg("dtype") = nb::none());
  both(m, cls, "mean", +mean_fn,
       {"mean(input, dim=None, keepdim=False, *, dtype=None) -> Tensor",
        "The average of the elements over the given dims (all of them for None)."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
       nb::arg("dtype") = nb::none());
  auto prod_fn = [](const Tensor& t, std::optional<int64_t> dim, bool keepdim, Dt dtype) {
    return dim ? prod(t, *dim, keepdim, dtype) : prod(t, dtype);
  };
  both(m, cls, "prod", prod_fn,
       {"prod(input, dim=None, keepdim=False, *, dtype=None) -> Tensor",
        "Multiplies the elements together, along one dim or over the whole tensor."},
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false, nb::kw_only(),
       nb::arg("dtype") = nb::none());
  auto amax_fn = [](const Tensor& t, nb::handle dim, bool keepdim) {
    return amax(t, dims_arg(dim), keepdim);
  };
  auto amin_fn = [](const Tensor& t, nb::handle dim, bool keepdim) {
    return amin(t, dims_arg(dim), keepdim);
  };
  auto all_fn = [](const Tensor& t, nb::handle dim, bool keepdim) {
    std::vector<int64_t> dims = dims_arg(dim);
    if (!dim.is_none() && dims.empty()) return element_truth(t);
    return all(t, dims, keepdim);
  };
  auto any_fn = [](const Tensor& t, nb::handle dim, bool keepdim) {
    std::vector<int64_t> dims = dims_arg(dim);
    if (!dim.is_none() && dims.empty()) return element_truth(t);
    return any(t, dims, keepdim);
  };
  auto dk = [](const char* sig, const char* text) { return Doc{sig, text}; };
  both(m, cls, "amax", +amax_fn,
       dk("amax(input, dim=None, keepdim=False) -> Tensor",
          "The largest element over the given dims (all of them for None), without indices."),
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "amin", +amin_fn,
       dk("amin(input, dim=None, keepdim=False) -> Tensor",
          "The smallest element over the given dims (all of them for None), without indices."),
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "all", +all_fn,
       dk("all(input, dim=None, keepdim=False) -> Tensor",
          "True where every element over the given dims is nonzero."),
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "any", +any_fn,
       dk("any(input, dim=None, keepdim=False) -> Tensor",
          "True where at least one element over the given dims is nonzero."),
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  m.def(
      "_max_all",
      [](const Tensor& t) { return is_quantized(t.dtype()) ? quantized_extreme(t, true) : max(t); },
      nb::arg("input"),
      doc("_max_all(input) -> Tensor",
          "The largest element of the whole tensor (behind ember.max)."));
  m.def(
      "_min_all",
      [](const Tensor& t) {
        return is_quantized(t.dtype()) ? quantized_extreme(t, false) : min(t);
      },
      nb::arg("input"),
      doc("_min_all(input) -> Tensor",
          "The smallest element of the whole tensor (behind ember.min)."));
  m.def(
      "_max_dim",
      [](const Tensor& t, int64_t d, bool k) {
        if (is_quantized(t.dtype())) check_extreme_per_tensor(t, true);
        return max(t, d, k);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("keepdim"),
      doc("_max_dim(input, dim, keepdim) -> (Tensor, Tensor)",
          "The largest values along dim and their indices (behind ember.max)."));
  m.def(
      "_min_dim",
      [](const Tensor& t, int64_t d, bool k) {
        if (is_quantized(t.dtype())) check_extreme_per_tensor(t, false);
        return min(t, d, k);
      },
      nb::arg("input"), nb::arg("dim"), nb::arg("keepdim"),
      doc("_min_dim(input, dim, keepdim) -> (Tensor, Tensor)",
          "The smallest values along dim and their indices (behind ember.min)."));
  auto argmax_fn = [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
    return argmax(t, dim, keepdim);
  };
  auto argmin_fn = [](const Tensor& t, std::optional<int64_t> dim, bool keepdim) {
    return argmin(t, dim, keepdim);
  };
  both(m, cls, "argmax", +argmax_fn,
       dk("argmax(input, dim=None, keepdim=False) -> Tensor",
          "The index of the largest element along dim, or in the flattened tensor for None."),
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  both(m, cls, "argmin", +argmin_fn,
       dk("argmin(input, dim=None, keepdim=False) -> Tensor",
          "The index of the smallest element along dim, or in the flattened tensor for None."),
       nb::arg("dim") = nb::none(), nb::arg("keepdim") = false);
  m.def(
      "_var_mean",
      [](const Tensor& t, nb::handle dim, std::optional<double> correction, bool keepdim) {
        std::optional<std::vector<int64_t>> d;
        if (!dim.is_none()) d = dims_arg(dim);
        return var_mean(t, d, correction, keepdim);
      },
      nb::arg("input"), nb::arg("dim").none(), nb::arg("correction").none(), nb::arg("keepdim"),
      doc("_var_mean(input, dim, correction, keepdim) -> (Tensor, Tensor)",
          "Variance and mean in one pass (behind var, std, var_mean and std_mean)."));
  m.def(
      "_norm",
      [](const Tensor& t, std::optional<double> p, nb::handle dim, bool keepdim, Dt dtype) {
        std::optional<Scalar> ps;
        if (p) ps = Scalar(*p);
        return norm(t, ps, dims_arg(dim), keepdim, dtype);
      },
      nb::arg("input"), nb::arg("p").none(), nb::arg("dim").none(), nb::arg("keepdim"),
      nb::arg("dtype").none(),
      doc("_norm(input, p, dim, keepdim, dtype) -> Tensor",
          "The p-norm over the given dims (behind ember.norm and ember.linalg.vector_norm)."));
  auto lse = [](const Tensor& t, nb::handle dim, bool keepdim) {
    return logsumexp(t, dims_arg(dim), keepdim);
  };
  both(m, cls, "logsumexp", lse,
       dk("logsumexp(input, dim, keepdim=False) -> Tensor",
          "log(sum(exp(x))) over the given dims, computed without overflow."),
       nb::arg("dim"), nb::arg("keepdim") = false);
  auto cnz = [](const Tensor& t, nb::handle dim) { return count_nonzero(t, dims_arg(dim)); };
  both(m, cls, "count_nonzero", cnz,
       dk("count_nonzero(input, dim=None) -> Tensor",
          "How many elements are nonzero over the given dims (all of them for None)."),
       nb::arg("dim") = nb::none());
}

}  // namespace ember::py
