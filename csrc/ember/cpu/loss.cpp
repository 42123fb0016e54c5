// CPU kernels of nll_loss and the fused class-index cross-entropy (Note [Fused cross-entropy]
// in ops/loss.cpp). Targets were range-checked by the op; rows are independent, so the per-row
// results are reduced serially afterwards (deterministic for any thread count).
#include <cmath>
#include <tuple>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/core/reduction.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/softmax_rows.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/loss.h"

namespace ember::cpu {

namespace {

constexpr uint32_t kLossTypes = type_bit(kFloat) | type_bit(kDouble);

// nll over rows: loss_i = -w[t_i] x[i, t_i]; reads x through its strides (no copy).
std::tuple<Tensor, Tensor> nll_forward(const Tensor& x, const Tensor& target,
                                       const std::optional<Tensor>& weight, int64_t reduction,
                                       int64_t ignore_index) {
  Tensor t = contiguous(target);
  Tensor w = weight ? contiguous(*weight) : Tensor();
  int64_t M = x.size(0), s0 = x.stride(0), s1 = x.stride(1);
  bool per_row = reduction == int64_t(Reduction::None);
  Tensor loss = empty(per_row ? DimVector{M} : DimVector{}, x.dtype(), x.device());
  Tensor total = empty({}, x.dtype(), x.device());
  dispatch<kLossTypes>(x.dtype(), "nll_loss_forward_out_frame", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = static_cast<const T*>(x.data_ptr());
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    T* lp = loss.data_ptr<T>();
    double tl = 0, tw = 0;
    for (int64_t i = 0; i < M; ++i) {
      int64_t ti = tp[i];
      T wt = ti == ignore_index ? T(0) : wp ? wp[ti] : T(1);
      T li = wt == T(0) ? T(0) : -wt * xp[i * s0 + ti * s1];
      if (per_row) lp[i] = li;
      tl += double(li);
      tw += double(wt);
    }
    *total.data_ptr<T>() = T(tw);
    if (!per_row) *lp = reduction == int64_t(Reduction::Mean) ? T(tl / tw) : T(tl);
  });
  return {loss, total};
}

Tensor nll_backward(const Tensor& grad, const Tensor& target, const std::optional<Tensor>& weight,
                    int64_t reduction, int64_t ignore_index, const Tensor& total, int64_t C) {
  Tensor t = contiguous(target), g = contiguous(to_dtype(grad, total.dtype()));
  Tensor w = weight ? contiguous(*weight) : Tensor();
  int64_t M = t.size(0);
  Tensor out = zeros({M, C}, g.dtype());
  // torch's nll_loss_backward takes the input (M, C) where ember's op takes C: the zeroed
  // gradient has its shape and stands in for it in the row (Note [Profiler rows]).
  const std::nullopt_t none = std::nullopt;
  profiler::OpRange row("nll_loss_backward", grad, out, target, weight, none, none, total);
  profiler::mark_op("zero_", out);  // torch's row for the zeroed gradient
  dispatch<kLossTypes>(g.dtype(), "nll_loss_backward_out_frame", [&](auto tag) {
    using T = decltype(tag);
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    const T* gp = g.data_ptr<T>();
    T* op = out.data_ptr<T>();
    bool per_row = reduction == int64_t(Reduction::None);
    T scale = reduction == int64_t(Reduction::Mean) ? gp[0] / *total.data_ptr<T>() : gp[0];
    for (int64_t i = 0; i < M; ++i) {
      int64_t ti = tp[i];
      if (ti == ignore_index) continue;
      op[i * C + ti] = -(wp ? wp[ti] : T(1)) * (per_row ? gp[i] : scale);
    }
  });
  return out;
}

std::tuple<Tensor, Tensor, Tensor> cross_entropy_forward(const Tensor& input, const Tensor& target,
                                                         const std::optional<Tensor>& weight,
                                                         int64_t reduction, int64_t ignore_index,
                                                         double eps) {
  Tensor x = contiguous(input), t = contiguous(target);
  Tensor w = weight ? contiguous(*weight) : Tensor();
  int64_t M = x.size(0), C = x.size(1);
  Tensor lse = empty({M}, x.dtype(), x.device());
  Tensor loss = reduction == int64_t(Reduction::None) ? empty({M}, x.dtype(), x.device())
                                                      : empty({}, x.dtype(), x.device());
  Tensor total = empty({}, x.dtype(), x.device());
  dispatch<kLossTypes>(x.dtype(), "cross_entropy_loss", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data_ptr<T>();
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    T* lp = lse.data_ptr<T>();
    std::vector<T> row_loss(static_cast<size_t>(M)), row_w(static_cast<size_t>(M));
    T smooth = T(eps / double(C)), keep = T(1 - eps);
    parallel_for(0, M, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t i = b; i < e; ++i) {
                     const T* xr = xp + i * C;
                     int64_t ti = tp[i];
                     if (ti == ignore_index) {
                       lp[i] = row_loss[i] = row_w[i] = T(0);
                       continue;
                     }
                     T m = row_max(xr, C);
                     T l = m + std::log(exp_affine(xr, static_cast<T*>(nullptr), C, m));
                     T wt = wp ? wp[ti] : T(1);
                     T li = keep * wt * (l - xr[ti]);
                     if (eps > 0) {
                       T s = 0;
                       for (int64_t c = 0; c < C; ++c) s += (wp ? wp[c] : T(1)) * (l - xr[c]);
                       li += smooth * s;
                     }
                     lp[i] = l;
                     row_loss[i] = li;
                     row_w[i] = wt;
                   }
                 });
    double tw = 0, tl = 0;
    for (int64_t i = 0; i < M; ++i) tw += double(row_w[i]);
    *total.data_ptr<T>() = T(tw);
    if (reduction == int64_t(Reduction::None)) {
      std::copy(row_loss.begin(), row_loss.end(), loss.data_ptr<T>());
      return;
    }
    for (int64_t i = 0; i < M; ++i) tl += double(row_loss[i]);
    *loss.data_ptr<T>() = reduction == int64_t(Reduction::Mean) ? T(tl / tw) : T(tl);
  });
  return {loss, lse, total};
}

Tensor cross_entropy_backward(const Tensor& grad, const Tensor& input, const Tensor& target,
                              const std::optional<Tensor>& weight, int64_t reduction,
                              int64_t ignore_index, double eps, const Tensor& lse,
                              const Tensor& total) {
  Tensor x = contiguous(input), t = contiguous(target),
         g = contiguous(to_dtype(grad, input.dtype()));
  Tensor w = weight ? contiguous(*weight) : Tensor();
  int64_t M = x.size(0), C = x.size(1);
  Tensor out = empty({M, C}, x.dtype(), x.device());
  dispatch<kLossTypes>(x.dtype(), "cross_entropy_loss_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* xp = x.data_ptr<T>();
    const int64_t* tp = t.data_ptr<int64_t>();
    const T* wp = w.defined() ? w.data_ptr<T>() : nullptr;
    const T* lp = lse.data_ptr<T>();
    const T* gp = g.data_ptr<T>();
    T* op = out.data_ptr<T>();
    bool per_row = reduction == int64_t(Reduction::None);
    T scale = reduction == int64_t(Reduction::Mean) ? gp[0] / *total.data_ptr<T>() : gp[0];
    T big_w = T(C);
    if (wp) {
      big_w = 0;
      for (int64_t c = 0; c < C; ++c) big_w += wp[c];
    }
    T smooth = T(eps / double(C)), keep = T(1 - eps);
    parallel_for(0, M, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(C, 1)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t i = b; i < e; ++i) {
                     T* orow = op + i * C;
                     int64_t ti = tp[i];
                     if (ti == ignore_index) {
                       std::fill(orow, orow + C, T(0));
                       continue;
                     }
                     T s = per_row ? gp[i] : scale;
                     T wt = wp ? wp[ti] : T(1);
                     T a = s * (keep * wt + smooth * big_w);
                     bool per_class = eps > 0 && wp;
                     exp_affine(xp + i * C, orow, C, lp[i], a, eps > 0 && !wp ? s * smooth : T(0));
                     if (per_class)
                       for (int64_t c = 0; c < C; ++c) orow[c] -= s * smooth * wp[c];
                     orow[ti] -= s * keep * wt;
                   }
                 });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_nll_loss_index, CPU, nll_forward);
EMBER_REGISTER_KERNEL(op::_nll_loss_index_backward, CPU, nll_backward);
EMBER_REGISTER_KERNEL(op::_cross_entropy_index, CPU, cross_entropy_forward);
EMBER_REGISTER_KERNEL(op::_cross_entropy_index_backward, CPU, cross_entropy_backward);

}  // namespace ember::cpu
