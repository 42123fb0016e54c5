// CPU kernels of batch_norm and layer_norm, forward and backward, each a fused pass over the
// data: batch_norm parallel over channels, layer_norm over rows (and over columns for the weight
// gradient), so the results never depend on the thread count. Compiled with the full vectorizer
// (see Note [Vectorizable float math] in cpu/activation.cpp).
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno")
#include <cmath>
#include <initializer_list>
#include <optional>
#include <vector>

#include "ember/core/memory_format.h"
#include "ember/core/parallel.h"
#include "ember/cpu/batch_norm_common.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/layout.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/normalization.h"

namespace ember::cpu {

void bn::update_running(OptT running_mean, OptT running_var, const std::vector<double>& mean,
                        const std::vector<double>& var, int64_t count, double momentum) {
  auto update = [&](OptT running, const std::vector<double>& batch, double factor) {
    if (!running) return;
    std::vector<double> r = param(running, int64_t(batch.size()), 0);
    for (size_t i = 0; i < r.size(); ++i)
      r[i] = (1 - momentum) * r[i] + momentum * batch[i] * factor;
    Tensor dst = *running;
    NoGradGuard no_grad;
    copy_(dst, from_doubles(r, dst.dtype()));
  };
  update(running_mean, mean, 1);
  update(running_var, var, double(count) / double(count - 1));
}

namespace {

using Stats = std::tuple<Tensor, Tensor, Tensor>;
using namespace bn;

Stats batch_norm_kernel(const Tensor& input, OptT weight, OptT bias, OptT running_mean,
                        OptT running_var, bool training, double momentum, double eps) {
  // torch's evaluation kernel folds the mean into the shift (x * scale + (bias - mean * scale))
  // when the input is contiguous or channels-last and each per-channel tensor is contiguous; its
  // other path computes (x - mean) * invstd * weight + bias. The two differ only where the scale is
  // not finite (an inf weight: inf - inf is NaN), so ember takes the folded form just there.
  auto dense = [](OptT t) { return !t || t->is_contiguous(); };
  const bool torch_folds =
      !training &&
      (input.is_contiguous() ||
       is_contiguous_as(input.sizes(), input.strides(), MemoryFormat::ChannelsLast) ||
       is_contiguous_as(input.sizes(), input.strides(), MemoryFormat::ChannelsLast3d)) &&
      dense(weight) && dense(bias) && dense(running_mean) && dense(running_var);
  Tensor x = contiguous(input);
  NCS g(x);
  const int64_t count = g.n * g.s;
  std::vector<double> w = param(weight, g.c, 1), b = param(bias, g.c, 0);
  std::vector<double> mean(size_t(g.c)), var(size_t(g.c)), invstd(size_t(g.c));
  if (!training) {
    mean = param(running_mean, g.c, 0);
    var = param(running_var, g.c, 1);
  }
  Tensor out = empty(x.sizes(), x.dtype());
  dispatch<kFloatTypes>(x.dtype(), "batch_norm", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    parallel_for(0, g.c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, count)),
                 [&](int64_t c0, int64_t c1) {
                   with_best_isa([&] {
                     for (int64_t c = c0; c < c1; ++c) {
                       if (training) channel_moments(xp, g, c, mean[size_t(c)], var[size_t(c)]);
                       invstd[size_t(c)] = 1 / std::sqrt(var[size_t(c)] + eps);
                       // (x - mean) * scale + bias: folding mean into the shift (x * scale + (bias
                       // - mean * scale)) cancels catastrophically when the variance is 0 and the
                       // mean large
                       const A scale = A(w[size_t(c)] * invstd[size_t(c)]);
                       const A mu = A(mean[size_t(c)]), shift = A(b[size_t(c)]);
                       const bool fold = torch_folds && !std::isfinite(double(scale));
                       const A folded_shift = shift - mu * scale;
                       for (int64_t i = 0; i < g.n; ++i) {
                         const T* row = xp + (i * g.c + c) * g.s;
                         T* orow = op + (i * g.c + c) * g.s;
                         if (fold) {
                           for (int64_t j = 0; j < g.s; ++j)
                             orow[j] = T(A(row[j]) * scale + folded_shift);
                         } else {
                           for (int64_t j = 0; j < g.s; ++j)
                             orow[j] = T((A(row[j]) - mu) * scale + shift);
                         }
                       }
                     }
                   });
                 });
  });
  if (training) update_running(running_mean, running_var, mean, var, count, momentum);
  ScalarType st = acc_type(x.dtype());
  return {out, from_doubles(mean, st), from_doubles(invstd, st)};
}
// torch's rows of its batch-norm kernels' buffers (Note [Profiler rows]): each `like` is an
// aten::empty_like > aten::empty, each other an aten::empty.
void buffer_rows(std::initializer_list<const Tensor*> buffers) {
  const std::nullopt_t none = std::nullopt;
  for (const Tensor* like : buffers) {
    std::optional<profiler::OpRange> el;
    if (like) el.emplace("empty_like", *like, none, none, none, none, none);
    profiler::mark_op("empty", none, none, none, none, none, none);
  }
}
// Note [Channels-last kernels]: the output keeps a channels-last input's layout.
Stats batch_norm_layout(const Tensor& input, OptT weight, OptT bias, OptT running_mean,
                        OptT running_var, bool training, double momentum, double eps) {
  if (profiler::enabled()) [[unlikely]] {  // the output, then the statistics' buffers
    if (training) buffer_rows({&input, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr});
    else buffer_rows({&input, nullptr, nullptr, nullptr, nullptr});
  }
  auto [out, mean, invstd] =
      batch_norm_kernel(input, weight, bias, running_mean, running_var, training, momentum, eps);
  return {in_format(out, spatial_format({&input})), mean, invstd};
}
EMBER_REGISTER_KERNEL(op::native_batch_norm, CPU, batch_norm_layout);

Stats batch_norm_backward_kernel(const Tensor& grad, const Tensor& input, OptT weight,
                                 const Tensor& save_mean, const Tensor& save_invstd,
                                 bool training) {
  Tensor x = contiguous(input);
  Tensor gy = contiguous(grad.dtype() == x.dtype() ? grad : to_dtype(grad, x.dtype()));
  NCS g(x);
  const double count = double(g.n * g.s);
  std::vector<double> w = param(weight, g.c, 1), mean = param(save_mean, g.c, 0),
                      invstd = param(save_invstd, g.c, 1);
  std::vector<double> gw(size_t(g.c)), gb(size_t(g.c));
  Tensor gx = empty(x.sizes(), x.dtype());
  dispatch<kFloatTypes>(x.dtype(), "batch_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* xp = x.data_ptr<T>();
    const T* gp = gy.data_ptr<T>();
    T* op = gx.data_ptr<T>();
    parallel_for(0, g.c, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, g.n * g.s)),
                 [&](int64_t c0, int64_t c1) {
                   with_best_isa([&] {
                     for (int64_t c = c0; c < c1; ++c) {
                       const double m = mean[size_t(c)], is = invstd[size_t(c)];
                       Lanes lg, lgx;
                       for (int64_t i = 0; i < g.n; ++i) {
                         const int64_t off = (i * g.c + c) * g.s;
                         lanes_for(g.s, [&](int l, int64_t j) {
                           const double gv = double(A(gp[off + j]));
                           lg.v[l] += gv;
                           lgx.v[l] += gv * (double(A(xp[off + j])) - m);
                         });
                       }
                       const double sg = lg.total(), sgx = lgx.total();
                       gb[size_t(c)] = sg;
                       gw[size_t(c)] = sgx * is;
                       const A scale = A(w[size_t(c)] * is);
                       // training: gx = scale * (g - mean(g) - xhat * mean(g * xhat)), with xhat =
                       // (x - m) * is
                       const A k1 = training && count > 0 ? A(sg / count) : A(0);
                       const A k2 = training && count > 0 ? A(sgx / count * is * is) : A(0);
                       const A am = A(m);
                       for (int64_t i = 0; i < g.n; ++i) {
                         const int64_t off = (i * g.c + c) * g.s;
                         for (int64_t j = 0; j < g.s; ++j)
                           op[off + j] =
                               T((A(gp[off + j]) - k1 - (A(xp[off + j]) - am) * k2) * scale);
                       }
                     }
                   });
                 });
  });
  ScalarType pt = weight ? weight->dtype() : acc_type(x.dtype());
  return {gx, from_doubles(gw, pt), from_doubles(gb, pt)};
}
Stats batch_norm_backward_layout(const Tensor& grad, const Tensor& input, OptT weight,
                                 const Tensor& save_mean, const Tensor& save_invstd,
                                 bool training) {
  if (profiler::enabled()) [[unlikely]]
    buffer_rows({&input, nullptr, nullptr, &input});
  auto [gx, gw, gb] =
      batch_norm_backward_kernel(grad, input, weight, save_mean, save_invstd, training);
  return {in_format(gx, spatial_format({&input})), gw, gb};
}
EMBER_REGISTER_KERNEL(op::native_batch_norm_backward, CPU, batch_norm_backward_layout);

// Sum of f(i) for i < n with eight independent accumulators (the compiler can vectorize them).
template <class A, class F>
A lanes_sum(int64_t n, F f) {
  A acc[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8)
    for (int k = 0; k < 8; ++k) acc[k] += f(i + k);
  for (; i < n; ++i) acc[0] += f(i);
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// (rows, cols) of a layer_norm input: cols is the product of the normalized dims.
std::pair<int64_t, int64_t> rows_cols(const Tensor& x, IntArrayRef normalized_shape) {
  int64_t cols = 1;
  for (int64_t d : normalized_shape) cols *= d;
  return {cols == 0 ? 0 : x.numel() / cols, cols};
}

Stats layer_norm_kernel(const Tensor& input, IntArrayRef normalized_shape, OptT weight, OptT bias,
                        double eps) {
  Tensor x = contiguous(input);
  auto [rows, cols] = rows_cols(x, normalized_shape);
  ScalarType st = acc_type(x.dtype());
  Tensor out = empty(x.sizes(), x.dtype());
  Tensor mean = empty({rows}, st), rstd = empty({rows}, st);
  // Absent parameters are ones and zeros, so the loops have no branch on them.
  Tensor w = weight ? contiguous(to_dtype(*weight, st)) : ones(normalized_shape, st);
  Tensor b = bias ? contiguous(to_dtype(*bias, st)) : zeros(normalized_shape, st);
  dispatch<kFloatTypes>(x.dtype(), "layer_norm", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* xp = x.data_ptr<T>();
    T* op = out.data_ptr<T>();
    A* mp = mean.data_ptr<A>();
    A* rp = rstd.data_ptr<A>();
    const A* wp = w.data_ptr<A>();
    const A* bp = b.data_ptr<A>();
    parallel_for(0, rows, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, cols)),
                 [&](int64_t r0, int64_t r1) {
                   with_best_isa([&] {
                     for (int64_t r = r0; r < r1; ++r) {
                       const T* row = xp + r * cols;
                       T* orow = op + r * cols;
                       const A m =
                           lanes_sum<A>(cols, [&](int64_t j) { return A(row[j]); }) / A(cols);
                       const A v = lanes_sum<A>(cols,
                                                [&](int64_t j) {
                                                  A d = A(row[j]) - m;
                                                  return d * d;
                                                }) /
                                   A(cols);
                       const A rs = A(1) / std::sqrt(v + A(eps));
                       mp[r] = m;
                       rp[r] = rs;
                       for (int64_t j = 0; j < cols; ++j)
                         orow[j] = T((A(row[j]) - m) * rs * wp[j] + bp[j]);
                     }
                   });
                 });
  });
  return {out, mean, rstd};
}
EMBER_REGISTER_KERNEL(op::native_layer_norm, CPU, layer_norm_kernel);

Stats layer_norm_backward_kernel(const Tensor& grad, const Tensor& input,
                                 IntArrayRef normalized_shape, const Tensor& mean,
                                 const Tensor& rstd, OptT weight) {
  Tensor x = contiguous(input);
  Tensor gy = contiguous(grad.dtype() == x.dtype() ? grad : to_dtype(grad, x.dtype()));
  auto [rows, cols] = rows_cols(x, normalized_shape);
  ScalarType st = acc_type(x.dtype());
  // Absent weights are ones, so the loops have no branch on them.
  Tensor w = weight ? contiguous(to_dtype(*weight, st)) : ones(normalized_shape, st);
  Tensor gx = empty(x.sizes(), x.dtype());
  Tensor gw = empty(normalized_shape, st), gb = empty(normalized_shape, st);
  dispatch<kFloatTypes>(x.dtype(), "layer_norm_backward", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const T* xp = x.data_ptr<T>();
    const T* gp = gy.data_ptr<T>();
    T* op = gx.data_ptr<T>();
    const A* mp = mean.data_ptr<A>();
    const A* rp = rstd.data_ptr<A>();
    const A* wp = w.data_ptr<A>();
    // Rows in fixed chunks (shape-dependent only): each chunk writes its rows of gx and its own
    // partial weight/bias sums, which are then added in chunk order, so results never depend on
    // the thread count.
    const int64_t chunk =
        std::max<int64_t>({1, kGrainSize / std::max<int64_t>(1, cols), (rows + 255) / 256});
    const int64_t nchunks = rows == 0 ? 0 : (rows + chunk - 1) / chunk;
    std::vector<A> partial(size_t(2 * nchunks * cols), A(0));
    parallel_for(0, nchunks, 1, [&](int64_t c0, int64_t c1) {
      with_best_isa([&] {
        for (int64_t c = c0; c < c1; ++c) {
          A* pw = partial.data() + 2 * c * cols;
          A* pb = pw + cols;
          for (int64_t r = c * chunk; r < std::min(rows, (c + 1) * chunk); ++r) {
            const T* __restrict xr = xp + r * cols;
            const T* __restrict gr = gp + r * cols;
            T* __restrict orow = op + r * cols;
            const A m = mp[r], rs = rp[r];
            const A a = lanes_sum<A>(cols, [&](int64_t j) { return A(gr[j]) * wp[j]; }) / A(cols);
            const A bsum =
                lanes_sum<A>(cols, [&](int64_t j) { return A(gr[j]) * wp[j] * (A(xr[j]) - m); }) *
                rs / A(cols);
            for (int64_t j = 0; j < cols; ++j) {
              const A xhat = (A(xr[j]) - m) * rs;
              const A gv = A(gr[j]);
              orow[j] = T(rs * (gv * wp[j] - a - xhat * bsum));
              pw[j] += gv * xhat;
              pb[j] += gv;
            }
          }
        }
      });
    });
    A* gwp = gw.data_ptr<A>();
    A* gbp = gb.data_ptr<A>();
    std::fill(gwp, gwp + cols, A(0));
    std::fill(gbp, gbp + cols, A(0));
    for (int64_t c = 0; c < nchunks; ++c) {
      const A* pw = partial.data() + 2 * c * cols;
      for (int64_t j = 0; j < cols; ++j) {
        gwp[j] += pw[j];
        gbp[j] += pw[cols + j];
      }
    }
  });
  if (weight && weight->dtype() != st) {
    gw = to_dtype(gw, weight->dtype());
    gb = to_dtype(gb, weight->dtype());
  }
  return {gx, gw, gb};
}
EMBER_REGISTER_KERNEL(op::native_layer_norm_backward, CPU, layer_norm_backward_kernel);

}  // namespace

}  // namespace ember::cpu
