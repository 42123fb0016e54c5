// CPU softmax and log_softmax, forward and backward: one fused pass per row (max, exp-sum,
// normalize). A dim with inner stride 1 runs row by row; otherwise blocks of the inner dims run
// together, each step over the softmax dim reading a contiguous segment.
#include <algorithm>
#include <cmath>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/softmax_rows.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/softmax.h"

namespace ember::cpu {

namespace {

constexpr uint32_t kSoftmaxTypes = type_bit(kFloat) | type_bit(kDouble);
constexpr int64_t kBlock = 128;  // inner positions processed together when inner > 1

// (outer, n, inner) view of a contiguous tensor around `dim`.
struct Geometry {
  int64_t outer = 1, n = 1, inner = 1;
  Geometry(IntArrayRef sizes, int64_t dim) {
    for (int64_t d = 0; d < int64_t(sizes.size()); ++d) {
      if (d < dim) outer *= sizes[d];
      else if (d > dim) inner *= sizes[d];
      else n = sizes[d];
    }
  }
};

// Runs row(o) for each row when inner == 1, else block(o, j0, len) over inner blocks.
template <class Row, class Block>
void for_each_slice(const Geometry& g, const Row& row, const Block& block) {
  if (g.outer * g.inner == 0 || g.n == 0) return;
  int64_t per = std::max<int64_t>(g.n, 1);
  if (g.inner == 1) {
    parallel_for(0, g.outer, std::max<int64_t>(1, kGrainSize / per), [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o) row(o);
    });
    return;
  }
  int64_t nb = (g.inner + kBlock - 1) / kBlock;
  int64_t grain = std::max<int64_t>(1, kGrainSize / (per * std::min(kBlock, g.inner)));
  parallel_for(0, g.outer * nb, grain, [&](int64_t b, int64_t e) {
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / nb, j0 = (t % nb) * kBlock;
      block(o, j0, std::min(kBlock, g.inner - j0));
    }
  });
}

template <bool Log>
Tensor softmax_forward(const Tensor& self_, int64_t dim) {
  Tensor self = contiguous(self_);
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  // torch's kernel returns an empty input before its dtype dispatch (an empty bool or int
  // tensor's softmax is that tensor's dtype)
  if (self.numel() == 0) return out;
  Geometry g(self.sizes(), dim);
  dispatch<kSoftmaxTypes>(self.dtype(),
                          Log ? "log_softmax_lastdim_kernel_impl" : "softmax_lastdim_kernel_impl",
                          [&](auto tag) {
                            using T = decltype(tag);
                            const T* x = self.data_ptr<T>();
                            T* y = out.data_ptr<T>();
                            auto row = [&](int64_t o) {
                              const T* xr = x + o * g.n;
                              T* yr = y + o * g.n;
                              T m = row_max(xr, g.n);
                              if constexpr (Log) {
                                // (x - max) - log(sum): folding max into the log-sum first would
                                // round it at max's magnitude (log_softmax of [1e5] * 4 must be
                                // exactly -log 4)
                                T ls = std::log(exp_affine(xr, static_cast<T*>(nullptr), g.n, m));
                                affine_row(xr, yr, g.n, T(1), -m);
                                affine_row(yr, yr, g.n, T(1), -ls);
                              } else {
                                affine_row(yr, yr, g.n, T(1) / exp_affine(xr, yr, g.n, m), T(0));
                              }
                            };
                            auto block = [&](int64_t o, int64_t j0, int64_t len) {
                              T m[kBlock], s[kBlock];
                              const T* xb = x + o * g.n * g.inner + j0;
                              T* yb = y + o * g.n * g.inner + j0;
                              std::fill(m, m + len, -std::numeric_limits<T>::infinity());
                              std::fill(s, s + len, T(0));
                              for (int64_t k = 0; k < g.n; ++k)
                                for (int64_t j = 0; j < len; ++j)
                                  m[j] = xb[k * g.inner + j] > m[j] ? xb[k * g.inner + j] : m[j];
                              for (int64_t k = 0; k < g.n; ++k) {
                                T* yk = yb + k * g.inner;
                                for (int64_t j = 0; j < len; ++j)
                                  yk[j] = xb[k * g.inner + j] - m[j];
                                exp_affine(yk, yk, len, T(0));
                                for (int64_t j = 0; j < len; ++j) s[j] += yk[j];
                              }
                              for (int64_t j = 0; j < len; ++j)
                                s[j] = Log ? std::log(s[j]) : T(1) / s[j];
                              for (int64_t k = 0; k < g.n; ++k) {
                                T* yk = yb + k * g.inner;
                                const T* xk = xb + k * g.inner;
                                for (int64_t j = 0; j < len; ++j)
                                  yk[j] = Log ? (xk[j] - m[j]) - s[j] : yk[j] * s[j];
                              }
                            };
                            for_each_slice(g, row, block);
                          });
  return out;
}

// softmax: gx = y * (g - sum(g * y)); log_softmax: gx = g - exp(y) * sum(g).
template <bool Log>
Tensor softmax_backward(const Tensor& grad_, const Tensor& output_, int64_t dim) {
  Tensor grad = contiguous(grad_), output = contiguous(output_);
  Tensor out = empty(output.sizes(), output.dtype(), output.device());
  Geometry g(output.sizes(), dim);
  dispatch<kSoftmaxTypes>(
      output.dtype(), Log ? "log_softmax_backward" : "softmax_backward", [&](auto tag) {
        using T = decltype(tag);
        const T* gr = grad.data_ptr<T>();
        const T* y = output.data_ptr<T>();
        T* gx = out.data_ptr<T>();
        auto row = [&](int64_t o) {
          const T* gk = gr + o * g.n;
          const T* yk = y + o * g.n;
          T* ok = gx + o * g.n;
          if constexpr (Log) {
            log_softmax_grad_row(gk, yk, ok, g.n, dot_row(gk, static_cast<const T*>(nullptr), g.n));
          } else {
            softmax_grad_row(gk, yk, ok, g.n, dot_row(gk, yk, g.n));
          }
        };
        auto block = [&](int64_t o, int64_t j0, int64_t len) {
          T acc[kBlock];
          int64_t base = o * g.n * g.inner + j0;
          std::fill(acc, acc + len, T(0));
          for (int64_t k = 0; k < g.n; ++k) {
            int64_t at = base + k * g.inner;
            for (int64_t j = 0; j < len; ++j) acc[j] += Log ? gr[at + j] : gr[at + j] * y[at + j];
          }
          for (int64_t k = 0; k < g.n; ++k) {
            int64_t at = base + k * g.inner;
            if constexpr (Log) {
              exp_affine(y + at, gx + at, len, T(0));
              for (int64_t j = 0; j < len; ++j) gx[at + j] = gr[at + j] - gx[at + j] * acc[j];
            } else {
              for (int64_t j = 0; j < len; ++j) gx[at + j] = y[at + j] * (gr[at + j] - acc[j]);
            }
          }
        };
        for_each_slice(g, row, block);
      });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_softmax, CPU, softmax_forward<false>);
EMBER_REGISTER_KERNEL(op::_log_softmax, CPU, softmax_forward<true>);
EMBER_REGISTER_KERNEL(op::_softmax_backward_data, CPU, softmax_backward<false>);
EMBER_REGISTER_KERNEL(op::_log_softmax_backward_data, CPU, softmax_backward<true>);

}  // namespace ember::cpu
