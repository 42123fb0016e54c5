// CPU scans along one dim: cumsum, cumprod, logcumsumexp, cummax, cummin.
//
// The input is made contiguous and seen as (outer, size, inner) around the scanned dim. Each
// task takes one outer index and a block of up to kBlock inner positions and walks the dim
// once, so for inner > 1 the innermost loop runs over contiguous memory and vectorizes.
#include <cmath>
#include <limits>

#include "ember/core/parallel.h"
#include "ember/core/shape.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/reduce.h"

namespace ember::cpu {

namespace {

constexpr int64_t kBlock = 64;

// Calls f(base, width) for every (outer, inner block): `base` is the flat offset of the block's
// first element at position 0 of the dim, `width` its number of inner positions.
template <class F>
void for_each_block(const Rows& r, F f) {
  int64_t nblocks = (r.inner + kBlock - 1) / kBlock;
  int64_t tasks = r.outer * nblocks;
  int64_t grain =
      std::max<int64_t>(1, kGrainSize / std::max<int64_t>(r.size * std::min(r.inner, kBlock), 1));
  parallel_for(0, tasks, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / nblocks, i0 = (t % nblocks) * kBlock;
      f(o * r.size * r.inner + i0, std::min(kBlock, r.inner - i0));
    }
  });
}

// Sums and products accumulate like PyTorch on CPU: floats in double, integers in int64.
template <class T>
using scan_acc_t = std::conditional_t<std::is_floating_point_v<acc_t<T>>, double, int64_t>;

// The out= kernel: the step (ops/sort.cpp) hands it the input in the result dtype, the dim
// wrapped and the output allocated (Note [Meta step] in ops/meta.h).
template <bool Prod>
Tensor& cum_out_kernel(const Tensor& self, int64_t dim, std::optional<ScalarType>, Tensor& out) {
  const char* name = Prod ? "cumprod" : "cumsum";
  EMBER_CHECK(out.dtype() == self.dtype() && out.is_contiguous() &&
                  out.sizes().equals(self.sizes()) && dim >= 0 &&
                  dim < std::max<int64_t>(self.dim(), 1),
              name, ": expected an input of the result dtype, a wrapped dim and an output of its ",
              "shape (the op's meta step prepares them); got ", out.dtype(), " output");
  Tensor x = contiguous(self);
  Rows r = rows_of(x.sizes(), dim);
  if (out.numel() == 0) return out;
  dispatch<kAllTypes>(out.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using A = scan_acc_t<T>;
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    T* o = reinterpret_cast<T*>(out.data_ptr());
    for_each_block(r, [&](int64_t base, int64_t width) {
      if (width == 1) {  // scanning the last dim: one running value
        A acc = A(Prod ? 1 : 0);
        const T* src = in + base;
        T* dst = o + base;
        for (int64_t k = 0; k < r.size; ++k) {
          if constexpr (Prod) acc *= A(src[k * r.inner]);
          else acc += A(src[k * r.inner]);
          dst[k * r.inner] = T(acc);
        }
        return;
      }
      A acc[kBlock];
      for (int64_t i = 0; i < width; ++i) acc[i] = A(Prod ? 1 : 0);
      for (int64_t k = 0; k < r.size; ++k) {
        const T* src = in + base + k * r.inner;
        T* dst = o + base + k * r.inner;
        for (int64_t i = 0; i < width; ++i) {
          if constexpr (Prod) acc[i] *= A(src[i]);
          else acc[i] += A(src[i]);
          dst[i] = T(acc[i]);
        }
      }
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::cumsum_out, CPU, cum_out_kernel<false>);
EMBER_REGISTER_KERNEL(op::cumprod_out, CPU, cum_out_kernel<true>);

// log(exp(a) + exp(b)) without overflow; two equal infinities give that infinity, not NaN.
double log_add_exp(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return a + b;
  double hi = std::max(a, b), lo = std::min(a, b);
  if (hi == lo && std::isinf(hi)) return hi;
  return hi + std::log1p(std::exp(lo - hi));
}

// A running log-sum-exp in double: each prefix is exact to the output's rounding, however far
// apart its elements are (a shift by the row's maximum loses the small early prefixes).
Tensor logcumsumexp_kernel(const Tensor& self, int64_t dim) {
  Tensor x = contiguous(self);
  Tensor out = empty(self.sizes(), self.dtype());
  if (out.numel() == 0) return out;
  Rows r = rows_of(x.sizes(), dim);
  dispatch<kFloatTypes>(self.dtype(), "logcumsumexp_out_cpu", [&](auto tag) {
    using T = decltype(tag);
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    T* o = reinterpret_cast<T*>(out.data_ptr());
    for_each_block(r, [&](int64_t base, int64_t width) {
      double acc[kBlock];
      for (int64_t i = 0; i < width; ++i) acc[i] = -std::numeric_limits<double>::infinity();
      for (int64_t k = 0; k < r.size; ++k) {
        const T* src = in + base + k * r.inner;
        T* dst = o + base + k * r.inner;
        for (int64_t i = 0; i < width; ++i) {
          acc[i] = log_add_exp(acc[i], double(src[i]));
          dst[i] = T(acc[i]);
        }
      }
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::logcumsumexp, CPU, logcumsumexp_kernel);

// The running extreme takes a new value on ties too (so the index is the latest), and a NaN
// sticks once seen while later NaNs move the index, as in PyTorch.
template <bool Max>
std::tuple<Tensor, Tensor> cum_extreme_kernel(const Tensor& self, int64_t dim) {
  const char* name = Max ? "cummax" : "cummin";
  Tensor x = contiguous(self);
  Tensor values = empty(self.sizes(), self.dtype()), indices = empty(self.sizes(), kLong);
  if (x.numel() == 0) return {values, indices};
  Rows r = rows_of(x.sizes(), dim);
  dispatch<kAllTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* in = reinterpret_cast<const T*>(x.data_ptr());
    T* vo = reinterpret_cast<T*>(values.data_ptr());
    int64_t* io = indices.data_ptr<int64_t>();
    for_each_block(r, [&](int64_t base, int64_t width) {
      A best[kBlock];
      int64_t at[kBlock];
      for (int64_t k = 0; k < r.size; ++k) {
        int64_t off = base + k * r.inner;
        for (int64_t i = 0; i < width; ++i) {
          A v = A(in[off + i]);
          bool take = k == 0;
          if constexpr (std::is_floating_point_v<A>)
            take = take || std::isnan(v) ||
                   (!std::isnan(best[i]) && (Max ? v >= best[i] : v <= best[i]));
          else take = take || (Max ? v >= best[i] : v <= best[i]);
          if (take) {
            best[i] = v;
            at[i] = k;
          }
          vo[off + i] = T(best[i]);
          io[off + i] = at[i];
        }
      }
    });
  });
  return {values, indices};
}
EMBER_REGISTER_KERNEL(op::cummax, CPU, cum_extreme_kernel<true>);
EMBER_REGISTER_KERNEL(op::cummin, CPU, cum_extreme_kernel<false>);

}  // namespace

}  // namespace ember::cpu
