// Factories. Filling goes through fill_/copy_ and one arange kernel; the rest is composite.
#include <cmath>

#include "ember/autograd/rename.h"
#include "ember/core/dispatch_dtype.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"
#include "ember/schema/copy.h"
#include "ember/schema/creation.h"

namespace ember {

namespace {
Tensor finish(Tensor t, const TensorOptions& o) {
  if (o.requires_grad_) t.requires_grad_(true);
  return t;
}

}  // namespace

Tensor empty(IntArrayRef sizes, const TensorOptions& o) {
  return finish(empty(sizes, o.dtype_or_default(), o.device_), o);
}

Tensor from_blob(void* data, IntArrayRef sizes, const TensorOptions& o) {
  return finish(from_blob(data, sizes, contiguous_strides(sizes), o.dtype_or_default()), o);
}

Tensor tensor(ArrayRef<int64_t> values, const TensorOptions& o) {
  Tensor t = from_blob(const_cast<int64_t*>(values.data()), {int64_t(values.size())}, kLong);
  return finish(to_dtype(t, o.dtype_.value_or(kLong), /*copy=*/true), o);
}

Tensor tensor(ArrayRef<double> values, const TensorOptions& o) {
  Tensor t = from_blob(const_cast<double*>(values.data()), {int64_t(values.size())}, kDouble);
  return finish(to_dtype(t, o.dtype_or_default(), /*copy=*/true), o);
}

Tensor zeros(IntArrayRef sizes, const TensorOptions& o) {
  Tensor t = empty(sizes, o.dtype_or_default(), o.device_);
  op::fill_.call(t, 0);  // not fill_(): a fresh tensor is at version 0, as torch's
  return finish(t, o);
}

Tensor ones(IntArrayRef sizes, const TensorOptions& o) {
  Tensor t = empty(sizes, o.dtype_or_default(), o.device_);
  op::fill_.call(t, 1);
  return finish(t, o);
}

Tensor full(IntArrayRef sizes, const Scalar& value, const TensorOptions& o) {
  Tensor t = empty(sizes, o.dtype_.value_or(value.dtype()), o.device_);
  op::fill_.call(t, value);
  return finish(t, o);
}

namespace {
TensorOptions like(const Tensor& self, const TensorOptions& o) {
  TensorOptions r = o;
  if (!r.dtype_) r.dtype_ = self.dtype();
  return r;
}
}  // namespace

Tensor empty_like(const Tensor& self, const TensorOptions& o) {
  return empty(self.sizes(), like(self, o));
}
Tensor zeros_like(const Tensor& self, const TensorOptions& o) {
  return zeros(self.sizes(), like(self, o));
}
Tensor ones_like(const Tensor& self, const TensorOptions& o) {
  return ones(self.sizes(), like(self, o));
}
Tensor full_like(const Tensor& self, const Scalar& value, const TensorOptions& o) {
  return full(self.sizes(), value, like(self, o));
}

Tensor arange(const Scalar& start, const Scalar& end, const Scalar& step, const TensorOptions& o) {
  bool all_int = start.is_integral(true) && end.is_integral(true) && step.is_integral(true);
  ScalarType dtype = o.dtype_.value_or(all_int ? kLong : default_dtype());
  double s = start.to_double(), e = end.to_double(), st = step.to_double();
  EMBER_CHECK(st != 0, "arange: step must be nonzero");
  EMBER_CHECK(std::isfinite(s) && std::isfinite(e), "arange: unsupported range: ", s, " -> ", e);
  EMBER_CHECK((st > 0 && e >= s) || (st < 0 && e <= s),
              "arange: upper bound and lower bound inconsistent with step sign");
  int64_t n = all_int ? (end.to_long() - start.to_long() + step.to_long() - (st > 0 ? 1 : -1)) /
                            step.to_long()
                      : int64_t(std::ceil((e - s) / st));
  Tensor t = empty({std::max<int64_t>(n, 0)}, dtype, o.device_);
  op::_arange_fill.call(t, start, step);
  return finish(t, o);
}

Tensor arange(const Scalar& end, const TensorOptions& o) { return arange(0, end, 1, o); }

namespace {
// torch's CPU kernel, value for value: the step in T, the first half counted from start and the
// second from end, each a fused multiply-add in T (its AVX2/AVX-512 kernels are compiled with
// FMA contraction), so that thresholds on linspace grids (x**2 + y**2 < r) fall as in torch.
template <typename T>
void linspace_fill(T* p, double s, double e, int64_t steps) {
  const T start = T(s), end = T(e);
  const T step = (end - start) / T(steps - 1);
  const int64_t halfway = steps / 2;
  for (int64_t i = 0; i < steps; ++i)
    p[i] = i < halfway ? std::fma(step, T(i), start) : std::fma(-step, T(steps - i - 1), end);
}
}  // namespace

Tensor linspace(const Scalar& start, const Scalar& end, int64_t steps, const TensorOptions& o) {
  EMBER_CHECK(steps >= 0, "linspace: number of steps must be non-negative");
  ScalarType dtype = o.dtype_or_default();
  // torch's kernel takes start (and, past one step, end) as values of dtype, converted checked:
  // an integer dtype then steps between the converted ends (-2 is 254 in uint8); one step is a
  // fill, which bool takes while its kernel has no bool loop
  EMBER_CHECK_KIND(steps <= 1 || dtype != kBool, ErrorKind::NotImplemented,
                   "\"linspace_cpu\" not implemented for 'Bool'");
  if (steps >= 1) check_scalar_fits(start, dtype);
  if (steps > 1) check_scalar_fits(end, dtype);
  if (steps > 1 && (dtype == kFloat || dtype == kDouble)) {
    Tensor out = empty({steps}, dtype, o.device_);
    if (dtype == kFloat)
      linspace_fill<float>(out.data_ptr<float>(), start.to_double(), end.to_double(), steps);
    else linspace_fill<double>(out.data_ptr<double>(), start.to_double(), end.to_double(), steps);
    return finish(out, o);
  }
  double s = start.to_double(), e = end.to_double();
  if (is_integral(dtype, true) && steps >= 1) s = scalar_tensor(start, dtype).item().to_double();
  if (is_integral(dtype, true) && steps > 1) e = scalar_tensor(end, dtype).item().to_double();
  double step = steps > 1 ? (e - s) / double(steps - 1) : 0.0;
  // Filled from both ends (as PyTorch does) so the last value is exactly `end`.
  Tensor idx = arange(0, steps, 1, TensorOptions(kDouble));
  Tensor lo = add(wrap_scalar(s), mul(idx, wrap_scalar(step)));
  Tensor hi = sub(wrap_scalar(e), mul(sub(wrap_scalar(double(steps - 1)), idx), wrap_scalar(step)));
  // A single step is `start` (the halfway rule alone would give `end`), as in PyTorch.
  const double halfway = steps == 1 ? 1.0 : double(steps / 2);
  Tensor vals = where(lt(idx, wrap_scalar(halfway)), lo, hi);
  if (is_integral(dtype, true)) vals = trunc(vals);
  return finish(to_dtype(vals, dtype, true), o);
}

Tensor logspace(const Scalar& start, const Scalar& end, int64_t steps, double base,
                const TensorOptions& o) {
  Tensor exps = linspace(start, end, steps, TensorOptions(kDouble));
  Tensor vals = pow(wrap_scalar(base), exps);
  return finish(to_dtype(vals, o.dtype_or_default(), true), o);
}

Tensor eye(int64_t n, std::optional<int64_t> m, const TensorOptions& o) {
  EMBER_CHECK(n >= 0, "n must be greater or equal to 0, got ", n);
  int64_t cols = m.value_or(n);
  EMBER_CHECK(cols >= 0, "m must be greater or equal to 0, got ", cols);
  Tensor t = zeros({n, cols}, TensorOptions(o.dtype_or_default()).device(o.device_));
  Tensor d = diagonal(t, 0, 0, 1);
  op::fill_.call(d, 1);
  return finish(t, o);
}

namespace {
// mask[i, j] = (j - i <= diagonal) for tril, (j - i >= diagonal) for triu, over the last two dims.
Tensor tri_mask(const Tensor& self, int64_t diagonal, bool lower) {
  EMBER_CHECK(self.dim() >= 2, lower ? "tril" : "triu",
              ": input tensor must have at least 2 "
              "dimensions; got shape ",
              self.sizes());
  int64_t r = self.size(-2), c = self.size(-1);
  TensorOptions o = TensorOptions(kLong).device(self.device());
  Tensor rows = unsqueeze(arange(0, r, 1, o), 1);
  Tensor cols = arange(0, c, 1, o);
  Tensor diff = sub(cols, rows);
  return lower ? le(diff, wrap_scalar(diagonal)) : ge(diff, wrap_scalar(diagonal));
}
}  // namespace

Tensor tril(const Tensor& self, int64_t diagonal) {
  Tensor out = where(tri_mask(self, diagonal, true), self, zeros({}, TensorOptions(self.dtype())));
  autograd::rename_history(out, "TrilBackward0");  // torch's node (Note [Composite node names])
  return out;
}

Tensor triu(const Tensor& self, int64_t diagonal) {
  Tensor out = where(tri_mask(self, diagonal, false), self, zeros({}, TensorOptions(self.dtype())));
  autograd::rename_history(out, "TriuBackward0");
  return out;
}

Tensor diag(const Tensor& self, int64_t k) {
  EMBER_CHECK(self.dim() == 1 || self.dim() == 2, "diag(): Supports 1D or 2D tensors. Got ",
              self.dim(), "D");
  // torch's node names: diagonal_copy's for a matrix, diag_embed's for a vector
  if (self.dim() == 2) {
    Tensor out = clone(diagonal(self, k, 0, 1));
    autograd::rename_history(out, "DiagonalBackward0_copy");
    return out;
  }
  int64_t n = self.size(0), a = std::abs(k), size = n + a;
  // M[i, j] = v[i] where j - i == k (k >= 0) or v[j] where i - j == -k (k < 0), built from
  // differentiable ops so the vector gets its gradient.
  TensorOptions o = TensorOptions(kLong).device(self.device());
  Tensor rows = unsqueeze(arange(0, size, 1, o), 1);
  Tensor cols = arange(0, size, 1, o);
  Tensor mask = eq(sub(cols, rows), wrap_scalar(k));
  Tensor padded =
      a ? cat({self, zeros({a}, TensorOptions(self.dtype()).device(self.device()))}, 0) : self;
  Tensor spread = k >= 0 ? unsqueeze(padded, 1) : unsqueeze(padded, 0);
  Tensor out = where(mask, spread, zeros({}, TensorOptions(self.dtype())));
  autograd::rename_history(out, "DiagEmbedBackward0");
  return out;
}

namespace cpu {
namespace {
Tensor& arange_fill_kernel(Tensor& out, const Scalar& start, const Scalar& step) {
  dispatch<kNumericTypes>(out.dtype(), "arange", [&](auto tag) {
    using T = decltype(tag);
    T* p = out.data_ptr<T>();
    int64_t n = out.numel();
    if constexpr (std::is_integral_v<T>) {
      if (start.is_integral(false) && step.is_integral(false)) {
        int64_t s = start.to_long(), st = step.to_long();
        for (int64_t i = 0; i < n; ++i) p[i] = T(s + i * st);
        return;
      }
    }
    double s = start.to_double(), st = step.to_double();
    for (int64_t i = 0; i < n; ++i) p[i] = T(s + double(i) * st);
  });
  return out;
}
}  // namespace
EMBER_REGISTER_KERNEL(op::_arange_fill, CPU, arange_fill_kernel);
}  // namespace cpu

}  // namespace ember
