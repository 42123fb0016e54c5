// Scans, sorting and counting: argument checks, dtype rules and derivatives (kernels in
// cpu/scan.cpp and cpu/sort.cpp). The ops that select values (sort, topk, kthvalue, median,
// mode, cummax, cummin) send the gradient back to the selected positions with
// _place_along_dim, whose own derivative is _take_along_dim, so higher orders work.
#include "ember/autograd/node.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

using CumOp = TypedOperator<Tensor(const Tensor&, int64_t, std::optional<ScalarType>)>;
using CumExtremeOp = TypedOperator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t)>;
using SortOp = TypedOperator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, bool)>;
using TopkOp = TypedOperator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool, bool)>;
using KthOp = TypedOperator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool)>;
using SelectOp = TypedOperator<std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool)>;
using MedianOp = TypedOperator<Tensor(const Tensor&)>;
using UniqueOp = TypedOperator<std::tuple<Tensor, Tensor, Tensor>(const Tensor&, bool, bool, bool,
                                                                   std::optional<int64_t>)>;
using BincountOp = TypedOperator<Tensor(const Tensor&, const std::optional<Tensor>&, int64_t)>;
using HistcOp = TypedOperator<Tensor(const Tensor&, int64_t, double, double)>;

#define EMBER_OP_HANDLE(fn, type, name) \
  const type& fn() {                    \
    static const type op(name);         \
    return op;                          \
  }
EMBER_OP_HANDLE(cumsum_op, CumOp, "cumsum")
EMBER_OP_HANDLE(cumprod_op, CumOp, "cumprod")
EMBER_OP_HANDLE(cummax_op, CumExtremeOp, "cummax")
EMBER_OP_HANDLE(cummin_op, CumExtremeOp, "cummin")
EMBER_OP_HANDLE(sort_op, SortOp, "sort")
EMBER_OP_HANDLE(topk_op, TopkOp, "topk")
EMBER_OP_HANDLE(kthvalue_op, KthOp, "kthvalue")
EMBER_OP_HANDLE(median_dim_op, SelectOp, "median.dim")
EMBER_OP_HANDLE(mode_op, SelectOp, "mode")
EMBER_OP_HANDLE(median_op, MedianOp, "median")
EMBER_OP_HANDLE(unique_op, UniqueOp, "unique")
EMBER_OP_HANDLE(bincount_op, BincountOp, "bincount")
EMBER_OP_HANDLE(histc_op, HistcOp, "histc")
#undef EMBER_OP_HANDLE

int64_t dim_size(const Tensor& t, int64_t dim) { return t.dim() == 0 ? 1 : t.sizes()[size_t(dim)]; }

// The gradient of values picked at `indices` along `dim` of an input with `size` there;
// `keepdim` false means grad and indices lack that dim.
Tensor place_picked(const Tensor& grad, const Tensor& indices, int64_t dim, int64_t size,
                    bool keepdim, int64_t in_dim) {
  if (in_dim == 0) return grad;
  Tensor g = keepdim ? grad : unsqueeze(grad, dim);
  Tensor i = keepdim ? indices : unsqueeze(indices, dim);
  return _place_along_dim(g, dim, i, size);
}

Tensor cumsum_autograd(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor out;
  {
    NoGradGuard g;
    out = cumsum_op().redispatch(backend_of(self), self, dim, dtype);
  }
  int64_t nd = self.dim();
  autograd::record("CumsumBackward0", {self}, {out}, [dim, nd](FunctionNode&, const variable_list& g) {
    // The gradient of a prefix sum is the suffix sum of the gradient.
    if (nd == 0) return variable_list{g[0]};
    return variable_list{flip(cumsum(flip(g[0], {dim}), dim), {dim})};
  });
  return out;
}
EMBER_REGISTER_KERNEL("cumsum", Autograd, cumsum_autograd);

// Note [cumprod backward]
// d out_j / d x_i = prod_{m <= j, m != i} x_m for i <= j. Before the first zero of a row this is
// out_j / x_i, so grad_i = suffix_sum(grad * out)_i / x_i. At the first zero k, grad_k =
// suffix_sum(grad * cumprod(x with x_k = 1))_k. After it every term has the zero x_k: 0.
// Exact with zeros, and built from public ops so it differentiates again.
Tensor cumprod_backward(const Tensor& grad, const Tensor& self, const Tensor& out, int64_t dim) {
  auto suffix_sum = [dim](const Tensor& t) { return flip(cumsum(flip(t, {dim}), dim), {dim}); };
  Tensor zero = zeros({}, TensorOptions(grad.dtype())), one = ones({}, TensorOptions(self.dtype()));
  Tensor is_zero = eq(self, wrap_scalar(0));
  Tensor zeros_so_far = cumsum(is_zero, dim);
  Tensor before = eq(zeros_so_far, wrap_scalar(0));
  Tensor first_zero = logical_and(is_zero, eq(zeros_so_far, wrap_scalar(1)));
  Tensor g_before = suffix_sum(grad * out) / where(before, self, one);
  Tensor g_first = suffix_sum(grad * cumprod(where(first_zero, one, self), dim));
  return where(before, g_before, where(first_zero, g_first, zero));
}

Tensor cumprod_autograd(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  Tensor out;
  {
    NoGradGuard g;
    out = cumprod_op().redispatch(backend_of(self), self, dim, dtype);
  }
  int64_t nd = self.dim();
  auto node = autograd::record("CumprodBackward0", {self}, {out},
                               [dim, nd](FunctionNode& n, const variable_list& g) {
                                 if (nd == 0) return variable_list{g[0]};
                                 Tensor self = n.saved(0), out = n.saved(1);
                                 if (self.dtype() != out.dtype()) self = to_dtype(self, out.dtype());
                                 return variable_list{cumprod_backward(g[0], self, out, dim)};
                               });
  if (node) {
    node->save(self);
    node->save(out, true);
  }
  return out;
}
EMBER_REGISTER_KERNEL("cumprod", Autograd, cumprod_autograd);

template <bool Max>
std::tuple<Tensor, Tensor> cum_extreme_autograd(const Tensor& self, int64_t dim) {
  Tensor values, indices;
  {
    NoGradGuard g;
    std::tie(values, indices) = (Max ? cummax_op() : cummin_op()).redispatch(backend_of(self), self, dim);
  }
  int64_t size = dim_size(self, dim), nd = self.dim();
  auto node = autograd::record(Max ? "CummaxBackward0" : "CumminBackward0", {self}, {values},
                               [dim, size, nd](FunctionNode& n, const variable_list& g) {
                                 return variable_list{place_picked(g[0], n.saved(0), dim, size, true, nd)};
                               });
  if (node) node->save(indices);
  return {values, indices};
}
EMBER_REGISTER_KERNEL("cummax", Autograd, cum_extreme_autograd<true>);
EMBER_REGISTER_KERNEL("cummin", Autograd, cum_extreme_autograd<false>);

// Records `name` for values selected at `indices` along `dim`.
void record_picked(const char* name, const Tensor& self, const Tensor& values,
                   const Tensor& indices, int64_t dim, bool keepdim) {
  int64_t size = dim_size(self, dim), nd = self.dim();
  auto node = autograd::record(name, {self}, {values},
                               [dim, size, keepdim, nd](FunctionNode& n, const variable_list& g) {
                                 return variable_list{
                                     place_picked(g[0], n.saved(0), dim, size, keepdim, nd)};
                               });
  if (node) node->save(indices);
}

std::tuple<Tensor, Tensor> sort_autograd(const Tensor& self, int64_t dim, bool descending, bool stable) {
  Tensor values, indices;
  {
    NoGradGuard g;
    std::tie(values, indices) = sort_op().redispatch(backend_of(self), self, dim, descending, stable);
  }
  record_picked("SortBackward0", self, values, indices, dim, true);
  return {values, indices};
}
EMBER_REGISTER_KERNEL("sort", Autograd, sort_autograd);

std::tuple<Tensor, Tensor> topk_autograd(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                         bool sorted) {
  Tensor values, indices;
  {
    NoGradGuard g;
    std::tie(values, indices) = topk_op().redispatch(backend_of(self), self, k, dim, largest, sorted);
  }
  record_picked("TopkBackward0", self, values, indices, dim, true);
  return {values, indices};
}
EMBER_REGISTER_KERNEL("topk", Autograd, topk_autograd);

std::tuple<Tensor, Tensor> kthvalue_autograd(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  Tensor values, indices;
  {
    NoGradGuard g;
    std::tie(values, indices) = kthvalue_op().redispatch(backend_of(self), self, k, dim, keepdim);
  }
  record_picked("KthvalueBackward0", self, values, indices, dim, keepdim);
  return {values, indices};
}
EMBER_REGISTER_KERNEL("kthvalue", Autograd, kthvalue_autograd);

template <bool Median>
std::tuple<Tensor, Tensor> select_autograd(const Tensor& self, int64_t dim, bool keepdim) {
  Tensor values, indices;
  {
    NoGradGuard g;
    std::tie(values, indices) =
        (Median ? median_dim_op() : mode_op()).redispatch(backend_of(self), self, dim, keepdim);
  }
  record_picked(Median ? "MedianBackward1" : "ModeBackward0", self, values, indices, dim, keepdim);
  return {values, indices};
}
EMBER_REGISTER_KERNEL("median.dim", Autograd, select_autograd<true>);
EMBER_REGISTER_KERNEL("mode", Autograd, select_autograd<false>);

// The median of all elements shares its gradient evenly among the elements equal to it (the NaNs
// when it is NaN), as PyTorch's evenly_distribute_backward.
Tensor median_autograd(const Tensor& self) {
  Tensor out;
  {
    NoGradGuard g;
    out = median_op().redispatch(backend_of(self), self);
  }
  auto node = autograd::record("MedianBackward0", {self}, {out}, [](FunctionNode& n, const variable_list& g) {
    Tensor self = n.saved(0), result = n.saved(1);
    Tensor hit = logical_or(eq(self, result), logical_and(isnan(self), isnan(result)));
    Tensor mask = to_dtype(hit, g[0].dtype());
    return variable_list{mask * (g[0] / sum(mask))};
  });
  if (node) {
    node->save(self);
    node->save(out, true);
  }
  return out;
}
EMBER_REGISTER_KERNEL("median", Autograd, median_autograd);

// Selecting along a dim of size 0 has no answer (sort and the scans just return empty).
void check_reduction_dim(const Tensor& self, int64_t dim, const char* op) {
  EMBER_CHECK_INDEX(self.dim() == 0 || self.sizes()[size_t(dim)] != 0, op,
                    "(): Expected reduction dim ", dim, " to have non-zero size.");
}

}  // namespace

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return cumsum_op().call(self, maybe_wrap_dim(dim, self.dim()), dtype);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return cumprod_op().call(self, maybe_wrap_dim(dim, self.dim()), dtype);
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return cummax_op().call(self, maybe_wrap_dim(dim, self.dim()));
}

std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  return cummin_op().call(self, maybe_wrap_dim(dim, self.dim()));
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  return sort_op().call(self, maybe_wrap_dim(dim, self.dim()), descending, stable);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  NoGradGuard g;
  return std::get<1>(sort(self, dim, descending, stable));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest, bool sorted) {
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(k >= 0 && k <= dim_size(self, dim), "selected index k out of range");
  EMBER_CHECK(self.dtype() != kBool, "topk does not support bool dtypes on CPU");
  return topk_op().call(self, k, dim, largest, sorted);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(k >= 1 && k <= dim_size(self, dim), "kthvalue(): selected number k out of range for "
              "dimension ", dim);
  return kthvalue_op().call(self, k, dim, keepdim);
}

Tensor median(const Tensor& self) { return median_op().call(self); }

std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_reduction_dim(self, dim, "median");
  return median_dim_op().call(self, dim, keepdim);
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_reduction_dim(self, dim, "mode");
  return mode_op().call(self, dim, keepdim);
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted, bool return_inverse,
                                          bool return_counts, std::optional<int64_t> dim) {
  if (dim) {
    dim = maybe_wrap_dim(*dim, self.dim(), /*scalar_ok=*/false);
    if (self.numel() == 0) {
      for (int64_t d = 0; d < self.dim(); ++d)
        EMBER_CHECK(d == *dim || self.sizes()[size_t(d)] != 0, "There are 0 sized dimensions, and "
                    "they aren't selected, so unique cannot be applied");
    }
  }
  NoGradGuard g;  // unique is not differentiable
  return unique_op().call(self, sorted, return_inverse, return_counts, dim);
}

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  EMBER_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  EMBER_CHECK(!weights || (weights->dim() == 1 && weights->numel() == self.numel()),
              "weights should be 1-d and have the same length as input");
  NoGradGuard g;  // bincount is not differentiable
  return bincount_op().call(self, weights, minlength);
}

Tensor histc(const Tensor& self, int64_t bins, double min, double max) {
  EMBER_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  EMBER_CHECK(min <= max, "torch.histc: max must be larger than min");
  NoGradGuard g;  // histc is not differentiable
  return histc_op().call(self, bins, min, max);
}

}  // namespace ember
