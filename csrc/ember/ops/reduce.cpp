// Reductions: dispatch entry points, dtype rules and derivatives; composites at the end.
#include <cmath>

#include "ember/autograd/node.h"
#include "ember/core/profiler.h"
#include "ember/core/reduce_shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/meta.h"
#include "ember/ops/ops.h"
#include "ember/schema/reduce.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// Dims a reduction covered, wrapped; empty `dims` means all of them.
DimVector reduced_dims(int64_t ndim, IntArrayRef dims) {
  DimVector out;
  if (dims.empty()) {
    for (int64_t d = 0; d < ndim; ++d) out.push_back(d);
  } else if (ndim > 0) {
    uint64_t mask = dim_mask(dims, ndim, "reduce");
    for (int64_t d = 0; d < ndim; ++d)
      if (mask >> d & 1) out.push_back(d);
  }
  return out;
}

// Brings a reduced gradient back to the input's shape (re-inserting dropped dims).
Tensor unreduce(const Tensor& grad, IntArrayRef in_shape, const DimVector& dims, bool keepdim) {
  Tensor g = grad;
  if (!keepdim)
    for (int64_t d : dims) g = unsqueeze(g, d);
  return expand(g, in_shape);
}

int64_t count_of(IntArrayRef shape, const DimVector& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= shape[size_t(d)];
  return n;
}

// Exact with zeros: a lone zero gets the product of the others; two or more give 0.
Tensor prod_backward(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims,
                     bool keepdim) {
  IntArrayRef in = self.sizes();
  DimVector rd = reduced_dims(self.dim(), dims);
  Tensor is_zero = eq(self, wrap_scalar(0));
  Tensor zeros_in_slice = sum(is_zero, rd, true, std::nullopt);
  Tensor others = where(is_zero, ones({}, TensorOptions(self.dtype())), self);
  for (int64_t d : rd) others = prod(others, d, true, std::nullopt);
  Tensor res = unreduce(result, in, rd, keepdim);
  Tensor gin = unreduce(grad, in, rd, keepdim);
  Tensor lone = logical_and(is_zero, eq(zeros_in_slice, wrap_scalar(1)));
  Tensor zero = zeros({}, TensorOptions(self.dtype()));
  Tensor d = where(is_zero, where(lone, expand(others, in), zero), res / self);
  return gin * d;
}

// amax/amin: the gradient is shared evenly among the tied extremes.
Tensor extreme_grad(const Tensor& grad, const Tensor& self, const Tensor& result, IntArrayRef dims,
                    bool keepdim) {
  DimVector rd = reduced_dims(self.dim(), dims);
  Tensor mask = eq(self, unreduce(result, self.sizes(), rd, keepdim));
  Tensor fm = to_dtype(mask, grad.dtype());
  Tensor count = sum(fm, rd, true, std::nullopt);
  return unreduce(grad, self.sizes(), rd, keepdim) * fm / count;
}
}  // namespace

// The backend kernels (CPU and Meta) of the reductions: the step (Note [Meta step] in
// ops/meta.h) checks the dims, decides the result's dtype and reduced shape and allocates it,
// then (not on Meta) the op's out= kernel reduces the input, cast to the dtype it reduces in.
namespace {
constexpr DispatchKey kCPU = DispatchKey::CPU, kMeta = DispatchKey::Meta;

// torch's errors for a reduction of an empty input: IndexError for argmax/argmin, RuntimeError
// for amax/amin without a dim; an IndexError for an empty reduced dim.
void check_nonempty(const Tensor& self, uint64_t mask, const char* name, bool has_dim) {
  if (self.numel() != 0) return;
  const bool arg = std::string_view(name).substr(0, 3) == "arg";
  EMBER_CHECK_KIND(has_dim, arg ? ErrorKind::Index : ErrorKind::Runtime, name,
                   "(): Expected reduction dim to be specified for input.numel() == 0. "
                   "Specify the reduction dim with the 'dim' argument.");
  for (int64_t d = 0; d < self.dim(); ++d)
    EMBER_CHECK_INDEX(!((mask >> d & 1) && self.sizes()[size_t(d)] == 0), name,
                      "(): Expected reduction dim ", d, " to have non-zero size.");
}

uint64_t dim_bit(const Tensor& self, int64_t dim) {
  return self.dim() == 0 ? 0 : uint64_t(1) << maybe_wrap_dim(dim, self.dim());
}

// sum and prod: a requested dtype converts the input first; integer and bool inputs give int64.
template <DispatchKey K, bool Prod>
Tensor sum_structured(const Tensor& self, IntArrayRef dims, bool keepdim,
                      std::optional<ScalarType> dtype) {
  const char* name = Prod ? "prod" : "sum";
  if constexpr (K == kMeta) meta::check_meta_devices(name, {&self});
  const ScalarType in = dtype.value_or(self.dtype());
  const ScalarType result = !dtype && is_integral(in, true) ? kLong : in;
  const uint64_t mask = reduction_mask(self, dims, name);
  Tensor out = empty(reduced_shape(self, mask, keepdim), result, meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(select_op<Prod>(op::prod_out, op::sum_out), K)(meta::cast(self, in, K), dims,
                                                                keepdim, dtype, out);
  return out;
}
EMBER_REGISTER_KERNEL(op::sum, CPU, (sum_structured<kCPU, false>));
EMBER_REGISTER_KERNEL(op::sum, Meta, (sum_structured<kMeta, false>));
EMBER_REGISTER_KERNEL(op::prod, CPU, (sum_structured<kCPU, true>));
EMBER_REGISTER_KERNEL(op::prod, Meta, (sum_structured<kMeta, true>));

template <DispatchKey K, bool Max>
Tensor amax_structured(const Tensor& self, IntArrayRef dims, bool keepdim) {
  const char* name = Max ? "amax" : "amin";
  if constexpr (K == kMeta) meta::check_meta_devices(name, {&self});
  // torch checks each listed dim of an empty input, in order and as given, before it looks for
  // repeats: amin(zeros(0, 3), (0, 0)) and (0, 5) are this IndexError
  if (self.numel() == 0)
    for (int64_t d : dims)
      EMBER_CHECK_INDEX(self.sizes()[size_t(maybe_wrap_dim(d, self.dim()))] != 0, name,
                        "(): Expected reduction dim ", d, " to have non-zero size.");
  const uint64_t mask = reduction_mask(self, dims, name);
  check_nonempty(self, mask, name, !dims.empty());
  Tensor out = empty(reduced_shape(self, mask, keepdim), self.dtype(), meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(select_op<Max>(op::amax_out, op::amin_out), K)(self, dims, keepdim, out);
  return out;
}
EMBER_REGISTER_KERNEL(op::amax, CPU, (amax_structured<kCPU, true>));
EMBER_REGISTER_KERNEL(op::amax, Meta, (amax_structured<kMeta, true>));
EMBER_REGISTER_KERNEL(op::amin, CPU, (amax_structured<kCPU, false>));
EMBER_REGISTER_KERNEL(op::amin, Meta, (amax_structured<kMeta, false>));

template <DispatchKey K, bool Max>
std::tuple<Tensor, Tensor> max_dim_structured(const Tensor& self, int64_t dim, bool keepdim) {
  const char* name = Max ? "max" : "min";
  if constexpr (K == kMeta) meta::check_meta_devices(name, {&self});
  const uint64_t mask = dim_bit(self, dim);
  check_nonempty(self, mask, name, true);
  if constexpr (K != kMeta)
    EMBER_CHECK(!is_complex(self.dtype()), name, "(): does not support complex input");
  const DimVector shape = reduced_shape(self, mask, keepdim);
  Tensor values = empty(shape, self.dtype(), meta::device_of(K));
  Tensor indices = empty(shape, kLong, meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(select_op<Max>(op::max_dim_out, op::min_dim_out), K)(self, dim, keepdim, values,
                                                                      indices);
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::max_dim, CPU, (max_dim_structured<kCPU, true>));
EMBER_REGISTER_KERNEL(op::max_dim, Meta, (max_dim_structured<kMeta, true>));
EMBER_REGISTER_KERNEL(op::min_dim, CPU, (max_dim_structured<kCPU, false>));
EMBER_REGISTER_KERNEL(op::min_dim, Meta, (max_dim_structured<kMeta, false>));

// Without a dim, over all elements: a 0-d result, or all size-1 dims where keepdim.
template <DispatchKey K, bool Max>
Tensor argmax_structured(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  const char* name = Max ? "argmax" : "argmin";
  if constexpr (K == kMeta) meta::check_meta_devices(name, {&self});
  DimVector shape;
  if (dim) {
    const uint64_t mask = dim_bit(self, *dim);
    check_nonempty(self, mask, name, true);
    shape = reduced_shape(self, mask, keepdim);
  } else {
    check_nonempty(self, 0, name, false);
    if (keepdim) shape.assign(size_t(self.dim()), 1);
  }
  Tensor out = empty(shape, kLong, meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(select_op<Max>(op::argmax_out, op::argmin_out), K)(self, dim, keepdim, out);
  return out;
}
EMBER_REGISTER_KERNEL(op::argmax, CPU, (argmax_structured<kCPU, true>));
EMBER_REGISTER_KERNEL(op::argmax, Meta, (argmax_structured<kMeta, true>));
EMBER_REGISTER_KERNEL(op::argmin, CPU, (argmax_structured<kCPU, false>));
EMBER_REGISTER_KERNEL(op::argmin, Meta, (argmax_structured<kMeta, false>));

template <DispatchKey K>
std::tuple<Tensor, Tensor> var_mean_structured(const Tensor& self, IntArrayRef dims,
                                               double correction, bool keepdim) {
  if constexpr (K == kMeta) meta::check_meta_devices("var_mean", {&self});
  EMBER_CHECK(is_floating_point(self.dtype()),
              "std and var only support floating point and complex dtypes; got ",
              dtype_name(self.dtype()));
  const DimVector shape = reduced_shape(self, reduction_mask(self, dims, "var"), keepdim);
  Tensor var = empty(shape, self.dtype(), meta::device_of(K));
  Tensor mean = empty(shape, self.dtype(), meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(op::var_mean_out, K)(self, dims, correction, keepdim, var, mean);
  return {var, mean};
}
EMBER_REGISTER_KERNEL(op::var_mean, CPU, var_mean_structured<kCPU>);
EMBER_REGISTER_KERNEL(op::var_mean, Meta, var_mean_structured<kMeta>);

// all/any: bool, or uint8 for a uint8 input, as torch's.
template <DispatchKey K, bool All>
Tensor all_structured(const Tensor& self, IntArrayRef dims, bool keepdim) {
  const char* name = All ? "all" : "any";
  if constexpr (K == kMeta) meta::check_meta_devices(name, {&self});
  const uint64_t mask = reduction_mask(self, dims, name);
  Tensor out = empty(reduced_shape(self, mask, keepdim), self.dtype() == kByte ? kByte : kBool,
                     meta::device_of(K));
  if constexpr (K != kMeta)
    meta::kernel(select_op<All>(op::all_out, op::any_out), K)(self, dims, keepdim, out);
  return out;
}
EMBER_REGISTER_KERNEL(op::all, CPU, (all_structured<kCPU, true>));
EMBER_REGISTER_KERNEL(op::all, Meta, (all_structured<kMeta, true>));
EMBER_REGISTER_KERNEL(op::any, CPU, (all_structured<kCPU, false>));
EMBER_REGISTER_KERNEL(op::any, Meta, (all_structured<kMeta, false>));
}  // namespace

EMBER_DERIVATIVE(op::amax, "AmaxBackward0", (self, dim, keepdim),
                 extreme_grad(grad, self, result, dim, keepdim));
EMBER_DERIVATIVE(op::amin, "AminBackward0", (self, dim, keepdim),
                 extreme_grad(grad, self, result, dim, keepdim));

// A full sum's gradient expands as it is (torch's sum_backward: no unsqueeze rows).
EMBER_DERIVATIVE(op::sum, dim.empty() ? "SumBackward0" : "SumBackward1",
                 (self, dim, keepdim, dtype),
                 dim.empty() ? expand(grad, self_sizes)
                             : unreduce(grad, self_sizes,
                                        reduced_dims(int64_t(self_sizes.size()), dim), keepdim));
EMBER_DERIVATIVE(op::prod, dim.empty() ? "ProdBackward0" : "ProdBackward1",
                 (self, dim, keepdim, dtype), prod_backward(grad, self, result, dim, keepdim));

namespace {

// max/min along a dim: the gradient goes to the returned index.
Tensor max_dim_backward(const Tensor& grad, const Tensor& idx, IntArrayRef in, int64_t dim,
                        bool keepdim) {
  if (in.empty()) return grad;
  int64_t d = maybe_wrap_dim(dim, int64_t(in.size()));
  Tensor gi = keepdim ? grad : unsqueeze(grad, d);
  Tensor ii = keepdim ? idx : unsqueeze(idx, d);
  DimVector shape(in.size(), 1);
  shape[size_t(d)] = in[size_t(d)];
  Tensor pos =
      reshape(arange(0, in[size_t(d)], 1, TensorOptions(kLong).device(grad.device())), shape);
  Tensor hit = to_dtype(eq(pos, ii), gi.dtype());
  return hit * gi;
}

// Either gradient may be absent (only the variance or only the mean was used).
Tensor var_mean_backward(const Tensor& grad_var, const Tensor& grad_mean, const Tensor& self,
                         IntArrayRef dims, double correction, bool keepdim) {
  IntArrayRef in = self.sizes();
  DimVector rd = reduced_dims(self.dim(), dims);
  int64_t n = count_of(in, rd);
  Tensor total;
  if (grad_var.defined()) {
    Tensor centered = self - ember::mean(self, rd, true, std::nullopt);
    total = unreduce(grad_var, in, rd, keepdim) * centered * (2.0 / (double(n) - correction));
  }
  if (grad_mean.defined()) {
    Tensor gm = unreduce(grad_mean, in, rd, keepdim) / double(n);
    total = total.defined() ? total + gm : gm;
  }
  return total;
}

}  // namespace

EMBER_DERIVATIVE_OUTPUTS(op::max_dim, "MaxBackward0", (self, dim, keepdim), (values, indices),
                         max_dim_backward(grad, indices, self_sizes, dim, keepdim));
EMBER_DERIVATIVE_OUTPUTS(op::min_dim, "MinBackward0", (self, dim, keepdim), (values, indices),
                         max_dim_backward(grad, indices, self_sizes, dim, keepdim));
EMBER_DERIVATIVE_OUTPUTS(op::var_mean, "VarMeanBackward0", (self, dim, correction, keepdim),
                         (var, mean),
                         var_mean_backward(grad_var, grad_mean, self, dim, correction, keepdim));

namespace {

double correction_of(std::optional<double> c) { return c.value_or(1.0); }
IntArrayRef dims_of(const std::optional<std::vector<int64_t>>& d) {
  return d ? IntArrayRef(*d) : IntArrayRef();
}

}  // namespace

Tensor sum(const Tensor& self, std::optional<ScalarType> dtype) {
  return op::sum.call(self, {}, false, dtype);
}
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  return op::sum.call(self, dim, keepdim, dtype);
}

Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim, std::optional<ScalarType> dtype) {
  profiler::Range prof_range(profiler::RangeKind::Op, "mean");
  ScalarType t = dtype.value_or(self.dtype());
  EMBER_CHECK(is_differentiable_type(t), "mean(): could not infer output dtype. ",
              dtype ? "Optional" : "Input", " dtype must be either a floating point or complex ",
              "dtype. Got: ", scalar_type_name(t));
  DimVector rd = reduced_dims(self.dim(), dim);
  int64_t n = count_of(self.sizes(), rd);
  // 16-bit floats divide the float32 sum, as torch does: their own sum may overflow (float16)
  // where the mean does not.
  auto compute = [&] {
    if (t == kHalf || t == kBFloat16) return (sum(self, dim, keepdim, kFloat) / double(n)).to(t);
    return sum(self, dim, keepdim, dtype) / double(n);
  };
  if (!autograd::any_requires_grad({&self})) return compute();
  // Its own node, as PyTorch's MeanBackward: it keeps only the shape and the count, so a second
  // backward through a mean works (sum / n would save n as a tensor, freed after the first).
  Tensor out;
  {
    AutoGradMode no_grad(false);
    out = compute();
  }
  DimVector in(self.sizes());
  autograd::record(dim.empty() ? "MeanBackward0" : "MeanBackward1", {self}, {out},
                   [in, rd, keepdim, n, t = self.dtype()](FunctionNode&, const variable_list& g) {
                     Tensor gi = unreduce(g[0], in, rd, keepdim) / double(n);
                     return variable_list{gi.dtype() == t ? gi : gi.to(t)};
                   });
  return out;
}
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype) {
  profiler::Range prof_range(profiler::RangeKind::Op, "mean");
  return mean(self, {}, false, dtype);
}

Tensor prod(const Tensor& self, std::optional<ScalarType> dtype) {
  return op::prod.call(self, {}, false, dtype);
}
Tensor prod(const Tensor& self, int64_t dim, bool keepdim, std::optional<ScalarType> dtype) {
  return op::prod.call(self, {dim}, keepdim, dtype);
}

Tensor amax(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return op::amax.call(self, dim, keepdim);
}
Tensor amin(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return op::amin.call(self, dim, keepdim);
}

Tensor max(const Tensor& self) {
  EMBER_CHECK(self.numel() > 0,
              "max(): Expected reduction dim to be specified for input.numel() "
              "== 0. Specify the reduction dim with the 'dim' argument.");
  return amax(self);
}
Tensor min(const Tensor& self) {
  EMBER_CHECK(self.numel() > 0,
              "min(): Expected reduction dim to be specified for input.numel() "
              "== 0. Specify the reduction dim with the 'dim' argument.");
  return amin(self);
}
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim) {
  maybe_wrap_dim(dim, self.dim());  // a 0-d input takes only -1 and 0, as torch
  return op::max_dim.call(self, dim, keepdim);
}
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim) {
  maybe_wrap_dim(dim, self.dim());
  return op::min_dim.call(self, dim, keepdim);
}
Tensor argmax(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK(self.dtype() != kBool, "argmax(): does not support bool input");
  EMBER_CHECK(!is_complex(self.dtype()) || self.device().type == DeviceType::Meta,
              "argmax(): does not support complex input");
  if (dim) maybe_wrap_dim(*dim, self.dim());  // a 0-d input takes only -1 and 0, as torch
  return op::argmax.call(self, dim, keepdim);
}
Tensor argmin(const Tensor& self, std::optional<int64_t> dim, bool keepdim) {
  EMBER_CHECK(self.dtype() != kBool, "argmin(): does not support bool input");
  EMBER_CHECK(!is_complex(self.dtype()) || self.device().type == DeviceType::Meta,
              "argmin(): does not support complex input");
  if (dim) maybe_wrap_dim(*dim, self.dim());  // a 0-d input takes only -1 and 0, as torch
  return op::argmin.call(self, dim, keepdim);
}

std::tuple<Tensor, Tensor> var_mean(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                                    std::optional<double> correction, bool keepdim) {
  return op::var_mean.call(self, dims_of(dim), correction_of(correction), keepdim);
}
Tensor var(const Tensor& self, std::optional<std::vector<int64_t>> dim,
           std::optional<double> correction, bool keepdim) {
  return std::get<0>(var_mean(self, dim, correction, keepdim));
}
Tensor std(const Tensor& self, std::optional<std::vector<int64_t>> dim,
           std::optional<double> correction, bool keepdim) {
  return sqrt(var(self, dim, correction, keepdim));
}
std::tuple<Tensor, Tensor> std_mean(const Tensor& self, std::optional<std::vector<int64_t>> dim,
                                    std::optional<double> correction, bool keepdim) {
  auto [v, m] = var_mean(self, dim, correction, keepdim);
  return {sqrt(v), m};
}

Tensor norm(const Tensor& self, std::optional<Scalar> p, IntArrayRef dim, bool keepdim,
            std::optional<ScalarType> dtype) {
  Tensor x = dtype ? to_dtype(self, *dtype) : self;
  EMBER_CHECK(is_floating_point(x.dtype()),
              "linalg.vector_norm: Expected a floating point or "
              "complex tensor as input. Got ",
              scalar_type_name(x.dtype()));
  double order = p ? p->to_double() : 2.0;
  Tensor a = abs(x);
  if (std::isinf(order)) {
    if (x.numel() == 0 && order < 0) return amin(a, dim, keepdim);
    return order > 0 ? amax(a, dim, keepdim) : amin(a, dim, keepdim);
  }
  if (order == 0)
    return sum(to_dtype(ne(x, wrap_scalar(0)), x.dtype()), dim, keepdim, std::nullopt);
  if (order == 1) return sum(a, dim, keepdim, std::nullopt);
  // One element per result: its norm is |x| (x * x would overflow at 3e38, as PyTorch avoids).
  int64_t reduced = dim.empty() ? x.numel() : 1;
  if (x.dim() > 0)
    for (int64_t d : dim) reduced *= x.size(maybe_wrap_dim(d, x.dim()));
  if (reduced == 1) return sum(a, dim, keepdim, std::nullopt);
  Tensor s = order == 2 ? sum(x * x, dim, keepdim, std::nullopt)
                        : sum(pow(a, wrap_scalar(order)), dim, keepdim, std::nullopt);
  auto root = [&](const Tensor& v) {
    return order == 2 ? sqrt(v) : pow(v, wrap_scalar(1.0 / order));
  };
  if (!autograd::any_requires_grad({&x})) return root(s);
  // The norm of a zero vector has a zero subgradient in PyTorch; the root's derivative there is
  // infinite (0 * inf = NaN), so the root reads 1 where the sum is 0 and the result selects 0.
  Tensor zero = eq(s, wrap_scalar(0));
  Tensor one = ones({}, TensorOptions(s.dtype()));
  return where(zero, zeros({}, TensorOptions(s.dtype())), root(where(zero, one, s)));
}

Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim) {
  Tensor x = is_floating_point(self.dtype()) ? self : to_dtype(self, default_dtype());
  if (x.numel() == 0) return log(sum(exp(x), dim, keepdim, std::nullopt));
  // Shift by the (detached) max; infinite maxima shift by 0 so inf - inf never appears.
  Tensor m = amax(x, dim, true).detach();
  m = where(isinf(m), zeros({}, TensorOptions(m.dtype())), m);
  Tensor r = log(sum(exp(x - m), dim, true, std::nullopt)) + m;
  if (!keepdim) {
    DimVector rd = reduced_dims(x.dim(), dim);
    for (size_t i = rd.size(); i-- > 0;) r = squeeze(r, {rd[i]});
  }
  // torch computes it in one op: its node is named LogsumexpBackward0 (a pass-through node on
  // top of the composite's, as Note [Composite node names] in docs/ARCHITECTURE.md).
  if (r.grad_fn()) {
    auto node = std::make_shared<autograd::FunctionNode>(
        "LogsumexpBackward0",
        [](autograd::FunctionNode&, const autograd::variable_list& g) { return g; });
    autograd::collect_next_edges(*node, {r});
    autograd::set_history(r, node, 0);
  }
  return r;
}

Tensor all(const Tensor& self) { return op::all.call(self, {}, false); }
Tensor all(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return op::all.call(self, dim, keepdim);
}
Tensor any(const Tensor& self) { return op::any.call(self, {}, false); }
Tensor any(const Tensor& self, IntArrayRef dim, bool keepdim) {
  return op::any.call(self, dim, keepdim);
}

Tensor count_nonzero(const Tensor& self, IntArrayRef dim) {
  return sum(ne(self, wrap_scalar(0)), dim, false, std::nullopt);
}

}  // namespace ember
