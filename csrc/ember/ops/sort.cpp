// Scans, sorting and counting: argument checks, dtype rules and derivatives (kernels in
// cpu/scan.cpp and cpu/sort.cpp). The ops that select values (sort, topk, kthvalue, median,
// mode, cummax, cummin) send the gradient back to the selected positions with
// _place_along_dim, whose own derivative is _take_along_dim, so higher orders work.
#include <limits>

#include "ember/core/dispatch_dtype.h"
#include "ember/core/reduce_shape.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"
#include "ember/schema/reduce.h"
#include "ember/schema/sort.h"

namespace ember {

namespace {

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

// Note [logcumsumexp backward]
// d result_j / d x_i = exp(x_i - result_j) for i <= j, so grad_i = exp(x_i) * sum_{j >= i}
// grad_j exp(-result_j). The suffix sum runs in the log domain (a reversed logcumsumexp), with
// the positive and negative parts of grad apart since a log needs a positive argument. The
// log of a missing part is the dtype's lowest finite value, not -inf: the backward of this
// backward subtracts results, and -inf - -inf would be NaN.
Tensor logcumsumexp_backward(const Tensor& grad, const Tensor& self, const Tensor& result,
                             int64_t dim) {
  if (self.dim() == 0) return grad;
  auto log_suffix_sum = [dim](const Tensor& t) {
    return flip(logcumsumexp(flip(t, {dim}), dim), {dim});
  };
  double lowest = 0;
  dispatch<kFloatTypes>(grad.dtype(), "logcumsumexp_backward", [&](auto tag) {
    lowest = double(std::numeric_limits<decltype(tag)>::lowest());
  });
  Tensor none = full({}, lowest, TensorOptions(grad.dtype()));
  Tensor log_abs = log(abs(grad));
  Tensor pos = where(gt(grad, wrap_scalar(0)), log_abs, none);
  Tensor neg = where(lt(grad, wrap_scalar(0)), log_abs, none);
  return exp(log_suffix_sum(pos - result) + self) - exp(log_suffix_sum(neg - result) + self);
}
}  // namespace

// The gradient of a prefix sum is the suffix sum of the gradient.
EMBER_DERIVATIVE(op::cumsum, "CumsumBackward0", (self, dim, dtype),
                 self_sizes.empty() ? grad : flip(cumsum(flip(grad, {dim}), dim), {dim}));
EMBER_DERIVATIVE(op::cumprod, "CumprodBackward0", (self, dim, dtype),
                 self_sizes.empty()
                     ? grad
                     : cumprod_backward(grad, to_dtype(self, result.dtype()), result, dim));
EMBER_DERIVATIVE(op::logcumsumexp, "LogcumsumexpBackward0", (self, dim),
                 logcumsumexp_backward(grad, self, result, dim));

namespace {

// The gradient of values picked at `indices` along `dim` of an input of shape `in`.
Tensor picked_backward(const Tensor& grad, const Tensor& indices, IntArrayRef in, int64_t dim,
                       bool keepdim) {
  int64_t size = in.empty() ? 1 : in[size_t(dim)];
  return place_picked(grad, indices, dim, size, keepdim, int64_t(in.size()));
}

// The median of all elements shares its gradient evenly among the elements equal to it (the NaNs
// when it is NaN), as PyTorch's evenly_distribute_backward.
Tensor evenly_distribute_backward(const Tensor& grad, const Tensor& self, const Tensor& result) {
  Tensor hit = logical_or(eq(self, result), logical_and(isnan(self), isnan(result)));
  Tensor mask = to_dtype(hit, grad.dtype());
  return mask * (grad / sum(mask));
}
}  // namespace

EMBER_DERIVATIVE_OUTPUTS(op::cummax, "CummaxBackward0", (self, dim), (values, indices),
                         picked_backward(grad, indices, self_sizes, dim, true));
EMBER_DERIVATIVE_OUTPUTS(op::cummin, "CumminBackward0", (self, dim), (values, indices),
                         picked_backward(grad, indices, self_sizes, dim, true));
EMBER_DERIVATIVE_OUTPUTS(op::sort, "SortBackward0", (self, dim, descending, stable),
                         (values, indices), picked_backward(grad, indices, self_sizes, dim, true));
EMBER_DERIVATIVE_OUTPUTS(op::topk, "TopkBackward0", (self, k, dim, largest, sorted),
                         (values, indices), picked_backward(grad, indices, self_sizes, dim, true));
EMBER_DERIVATIVE_OUTPUTS(op::kthvalue, "KthvalueBackward0", (self, k, dim, keepdim),
                         (values, indices),
                         picked_backward(grad, indices, self_sizes, dim, keepdim));
EMBER_DERIVATIVE_OUTPUTS(op::median_dim, "MedianBackward1", (self, dim, keepdim), (values, indices),
                         picked_backward(grad, indices, self_sizes, dim, keepdim));
EMBER_DERIVATIVE_OUTPUTS(op::mode, "ModeBackward0", (self, dim, keepdim), (values, indices),
                         picked_backward(grad, indices, self_sizes, dim, keepdim));
EMBER_DERIVATIVE(op::median, "MedianBackward0", (self),
                 evenly_distribute_backward(grad, self, result));

namespace {

// Selecting along a dim of size 0 has no answer (sort and the scans just return empty).
void check_reduction_dim(const Tensor& self, int64_t dim, const char* op) {
  EMBER_CHECK_INDEX(self.dim() == 0 || self.sizes()[size_t(dim)] != 0, op,
                    "(): Expected reduction dim ", dim, " to have non-zero size.");
}

}  // namespace

// The backend kernels (CPU and Meta) of cumsum/cumprod: the step (Note [Meta step] in
// ops/meta.h) wraps the dim and decides the result dtype (a requested one, else int64 for integer
// and bool inputs, else the input's); the out= kernel scans the input cast to it.
namespace {
template <DispatchKey K, bool Prod>
Tensor cum_structured(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  if constexpr (K == DispatchKey::Meta)
    meta::check_meta_devices(Prod ? "cumprod" : "cumsum", {&self});
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const ScalarType result = dtype.value_or(is_integral(self.dtype(), true) ? kLong : self.dtype());
  Tensor out = empty(self.sizes(), result, meta::device_of(K));
  if constexpr (K != DispatchKey::Meta)
    meta::kernel(select_op<Prod>(op::cumprod_out, op::cumsum_out), K)(meta::cast(self, result, K),
                                                                      d, dtype, out);
  return out;
}

// kthvalue, median.dim, mode: the step wraps the dim and allocates values and indices of the
// reduced shape; `run(dim, values, indices)` is the op's out= kernel (not on Meta).
template <DispatchKey K, class Run>
std::tuple<Tensor, Tensor> select_structured(const char* name, const Tensor& self, int64_t dim,
                                             bool keepdim, Run run) {
  if constexpr (K == DispatchKey::Meta) meta::check_meta_devices(name, {&self});
  const int64_t d = maybe_wrap_dim(dim, self.dim());
  const DimVector shape = reduced_shape(self, self.dim() == 0 ? 0 : uint64_t(1) << d, keepdim);
  Tensor values = empty(shape, self.dtype(), meta::device_of(K));
  Tensor indices = empty(shape, kLong, meta::device_of(K));
  if constexpr (K != DispatchKey::Meta) run(d, values, indices);
  return {values, indices};
}
template <DispatchKey K>
std::tuple<Tensor, Tensor> kthvalue_structured(const Tensor& self, int64_t k, int64_t dim,
                                               bool keepdim) {
  return select_structured<K>(
      "kthvalue", self, dim, keepdim, [&](int64_t d, Tensor& values, Tensor& indices) {
        meta::kernel(op::kthvalue_out, K)(self, k, d, keepdim, values, indices);
      });
}
template <DispatchKey K>
std::tuple<Tensor, Tensor> median_dim_structured(const Tensor& self, int64_t dim, bool keepdim) {
  return select_structured<K>(
      "median", self, dim, keepdim, [&](int64_t d, Tensor& values, Tensor& indices) {
        meta::kernel(op::median_dim_out, K)(self, d, keepdim, values, indices);
      });
}
template <DispatchKey K>
std::tuple<Tensor, Tensor> mode_structured(const Tensor& self, int64_t dim, bool keepdim) {
  return select_structured<K>("mode", self, dim, keepdim,
                              [&](int64_t d, Tensor& values, Tensor& indices) {
                                meta::kernel(op::mode_out, K)(self, d, keepdim, values, indices);
                              });
}
}  // namespace
EMBER_REGISTER_KERNEL(op::kthvalue, CPU, kthvalue_structured<DispatchKey::CPU>);
EMBER_REGISTER_KERNEL(op::kthvalue, Meta, kthvalue_structured<DispatchKey::Meta>);
EMBER_REGISTER_KERNEL(op::median_dim, CPU, median_dim_structured<DispatchKey::CPU>);
EMBER_REGISTER_KERNEL(op::median_dim, Meta, median_dim_structured<DispatchKey::Meta>);
EMBER_REGISTER_KERNEL(op::mode, CPU, mode_structured<DispatchKey::CPU>);
EMBER_REGISTER_KERNEL(op::mode, Meta, mode_structured<DispatchKey::Meta>);
EMBER_REGISTER_KERNEL(op::cumsum, CPU, (cum_structured<DispatchKey::CPU, false>));
EMBER_REGISTER_KERNEL(op::cumsum, Meta, (cum_structured<DispatchKey::Meta, false>));
EMBER_REGISTER_KERNEL(op::cumprod, CPU, (cum_structured<DispatchKey::CPU, true>));
EMBER_REGISTER_KERNEL(op::cumprod, Meta, (cum_structured<DispatchKey::Meta, true>));

Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return op::cumsum.call(self, maybe_wrap_dim(dim, self.dim()), dtype);
}

Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype) {
  return op::cumprod.call(self, maybe_wrap_dim(dim, self.dim()), dtype);
}

Tensor logcumsumexp(const Tensor& self, int64_t dim) {
  dim = maybe_wrap_dim(dim, self.dim());  // torch checks the dim before the dtype
  EMBER_CHECK_KIND(is_floating_point(self.dtype()), ErrorKind::NotImplemented,
                   "\"logcumsumexp_out_cpu\" not implemented for '", scalar_type_name(self.dtype()),
                   "'");
  return op::logcumsumexp.call(self, dim);
}

std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim) {
  return op::cummax.call(self, maybe_wrap_dim(dim, self.dim()));
}

std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim) {
  return op::cummin.call(self, maybe_wrap_dim(dim, self.dim()));
}

std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  dim = maybe_wrap_dim(dim, self.dim());
  // torch's wording, leading space included; empty inputs are refused too (meta ones pass)
  EMBER_CHECK(!is_complex(self.dtype()) || self.device().type == DeviceType::Meta,
              " Sort does not support complex dtypes on CPU");
  return op::sort.call(self, dim, descending, stable);
}

Tensor argsort(const Tensor& self, int64_t dim, bool descending, bool stable) {
  NoGradGuard g;
  return std::get<1>(sort(self, dim, descending, stable));
}

std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim, bool largest,
                                bool sorted) {
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK(k >= 0 && k <= dim_size(self, dim), "selected index k out of range");
  EMBER_CHECK(self.dtype() != kBool, "topk does not support bool dtypes on CPU");
  EMBER_CHECK(!is_complex(self.dtype()) || self.device().type == DeviceType::Meta,
              " topk does not support complex dtypes on CPU");
  return op::topk.call(self, k, dim, largest, sorted);
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  EMBER_CHECK_INDEX(dim_size(self, dim) != 0, "kthvalue(): Expected reduction dim ", dim,
                    " to have non-zero size.");
  EMBER_CHECK(k >= 1 && k <= dim_size(self, dim),
              "kthvalue(): selected number k out of range for "
              "dimension ",
              dim);
  return op::kthvalue.call(self, k, dim, keepdim);
}

Tensor median(const Tensor& self) { return op::median.call(self); }

std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_reduction_dim(self, dim, "median");
  return op::median_dim.call(self, dim, keepdim);
}

std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim, bool keepdim) {
  dim = maybe_wrap_dim(dim, self.dim());
  check_reduction_dim(self, dim, "mode");
  return op::mode.call(self, dim, keepdim);
}

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted, bool return_inverse,
                                          bool return_counts, std::optional<int64_t> dim) {
  if (dim) {
    dim = maybe_wrap_dim(*dim, self.dim(), /*scalar_ok=*/false);
    if (self.numel() == 0) {
      for (int64_t d = 0; d < self.dim(); ++d)
        EMBER_CHECK(d == *dim || self.sizes()[size_t(d)] != 0,
                    "There are 0 sized dimensions, and "
                    "they aren't selected, so unique cannot be applied");
    }
  }
  return op::unique.call(self, sorted, return_inverse, return_counts, dim);
}

Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights, int64_t minlength) {
  EMBER_CHECK(minlength >= 0, "minlength should be >= 0");
  EMBER_CHECK(self.dim() == 1, "bincount only supports 1-d non-negative integral inputs.");
  EMBER_CHECK(!weights || (weights->dim() == 1 && weights->numel() == self.numel()),
              "weights should be 1-d and have the same length as input");
  return op::bincount.call(self, weights, minlength);
}

Tensor histc(const Tensor& self, int64_t bins, double min, double max) {
  EMBER_CHECK(bins > 0, "torch.histogram(): bins must be > 0, but got ", bins, " for dimension 0");
  EMBER_CHECK(min <= max, "torch.histc: max must be larger than min");
  return op::histc.call(self, bins, min, max);
}

}  // namespace ember
