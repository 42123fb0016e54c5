#pragma once
// Pieces shared by batch_norm's kernels (cpu/normalization.cpp) and the fused BatchNorm + ReLU +
// max-pool kernels (cpu/batch_norm_relu_pool.cpp), so both compute the statistics and update the
// running ones the same way, bit for bit. Included only by those two files.
#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"

namespace ember::cpu::bn {

using OptT = const std::optional<Tensor>&;

inline ScalarType acc_type(ScalarType t) { return t == kDouble ? kDouble : kFloat; }

// A parameter vector as `n` doubles (`fill` when absent).
inline std::vector<double> param(OptT t, int64_t n, double fill) {
  if (!t) return std::vector<double>(size_t(n), fill);
  Tensor d = contiguous(to_dtype(*t, kDouble));
  const double* p = d.data_ptr<double>();
  return std::vector<double>(p, p + n);
}

inline Tensor from_doubles(const std::vector<double>& v, ScalarType dtype) {
  Tensor t = empty({int64_t(v.size())}, kDouble);
  std::copy(v.begin(), v.end(), t.data_ptr<double>());
  return to_dtype(t, dtype);
}

// Eight partial sums in double: one accumulator would chain every add on the previous one's
// latency and keep the loop from vectorizing. The lanes depend only on the index, so results are
// the same for any thread count.
struct Lanes {
  double v[8] = {};
  double total() const { return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7])); }
};
// Calls f(lane, j) for j < n, lane = j % 8 for the full blocks of eight, 0 for the tail.
template <class F>
inline void lanes_for(int64_t n, F&& f) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) f(l, j + l);
  for (; j < n; ++j) f(0, j);
}

// (N, C, S) geometry of a contiguous batch_norm input.
struct NCS {
  int64_t n, c, s;
  explicit NCS(const Tensor& x)
      : n(x.size(0)), c(x.size(1)), s(x.numel() / std::max<int64_t>(1, x.size(0) * x.size(1))) {}
};

// Batch mean and (biased) variance of channel c of xp, in one pass with sums shifted by the
// channel's first value, which keeps the variance accurate when the mean is large compared with
// the spread. Call it inside with_best_isa.
template <class T>
inline void channel_moments(const T* xp, const NCS& g, int64_t c, double& mean, double& var) {
  using A = acc_t<T>;
  const int64_t count = g.n * g.s;
  const double k = count > 0 ? double(A(xp[c * g.s])) : 0.0;
  Lanes s1, s2;
  for (int64_t i = 0; i < g.n; ++i) {
    const T* row = xp + (i * g.c + c) * g.s;
    lanes_for(g.s, [&](int l, int64_t j) {
      const double d = double(A(row[j])) - k;
      s1.v[l] += d;
      s2.v[l] += d * d;
    });
  }
  const double t1 = s1.total(), t2 = s2.total();
  mean = k + t1 / double(count);
  const double v = (t2 - t1 * t1 / double(count)) / double(count);
  var = std::isnan(v) ? v : std::max(0.0, v);  // an inf input gives nan
}

// Folds a training batch's statistics into the running ones, in doubles, so float64 running
// statistics match torch to the last bit.
void update_running(OptT running_mean, OptT running_var, const std::vector<double>& mean,
                    const std::vector<double>& var, int64_t count, double momentum);

}  // namespace ember::cpu::bn
