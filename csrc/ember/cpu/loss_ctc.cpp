// CPU CTC loss: the alpha (forward) and beta (backward) recursions in log space over the
// extended label sequence l' = (blank, l1, blank, l2, ..., blank), one sample per task.
#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/loss.h"

namespace ember::cpu {

namespace {

constexpr uint32_t kCtcTypes = type_bit(kFloat) | type_bit(kDouble);

template <class T>
T neg_inf() {
  return -std::numeric_limits<T>::infinity();
}

// log(exp(a) + exp(b) + exp(c)) with -inf terms allowed.
template <class T>
T log_add3(T a, T b, T c) {
  T m = std::max(a, std::max(b, c));
  if (m == neg_inf<T>()) return m;
  return m + std::log(std::exp(a - m) + std::exp(b - m) + std::exp(c - m));
}

// Sample b's view: log-probs at (t, c) and the label at extended position s.
template <class T>
struct Sample {
  const T* lp;
  int64_t t_stride;
  const int64_t* target;
  int64_t blank;
  T at(int64_t t, int64_t c) const { return lp[t * t_stride + c]; }
  int64_t label(int64_t s) const { return s % 2 == 0 ? blank : target[s / 2]; }
  // Whether position s may be reached by skipping s - 2 (a non-blank differing from it).
  bool skip(int64_t s) const { return s > 1 && s % 2 == 1 && target[s / 2] != target[s / 2 - 1]; }
};

std::tuple<Tensor, Tensor> ctc_forward(const Tensor& log_probs, const Tensor& targets,
                                       const Tensor& offsets, const Tensor& il, const Tensor& tl,
                                       int64_t blank, bool zero_infinity) {
  Tensor lp = contiguous(log_probs);
  int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  const int64_t* tlp = tl.data_ptr<int64_t>();
  int64_t max_len = 0;
  for (int64_t b = 0; b < N; ++b) max_len = std::max(max_len, tlp[b]);
  int64_t S = 2 * max_len + 1;
  Tensor nll = empty({N}, lp.dtype(), lp.device());
  Tensor alpha = full({N, T, S}, -std::numeric_limits<double>::infinity(), lp.dtype());
  dispatch<kCtcTypes>(lp.dtype(), "ctc_loss_cpu", [&](auto tag) {
    using T_ = decltype(tag);
    const T_* lpp = lp.data_ptr<T_>();
    T_* ap = alpha.data_ptr<T_>();
    T_* np = nll.data_ptr<T_>();
    parallel_for(0, N, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        int64_t len = tlp[b], steps = il.data_ptr<int64_t>()[b], sl = 2 * len + 1;
        Sample<T_> smp{lpp + b * C, N * C,
                       targets.data_ptr<int64_t>() + offsets.data_ptr<int64_t>()[b], blank};
        T_* a = ap + b * T * S;
        if (steps == 0) {
          np[b] = len == 0 ? T_(0) : std::numeric_limits<T_>::infinity();
        } else {
          a[0] = smp.at(0, blank);
          if (len > 0) a[1] = smp.at(0, smp.label(1));
          for (int64_t t = 1; t < steps; ++t) {
            const T_* prev = a + (t - 1) * S;
            T_* cur = a + t * S;
            for (int64_t s = 0; s < sl; ++s) {
              T_ l = log_add3(prev[s], s > 0 ? prev[s - 1] : neg_inf<T_>(),
                              smp.skip(s) ? prev[s - 2] : neg_inf<T_>());
              cur[s] = l + smp.at(t, smp.label(s));
            }
          }
          const T_* last = a + (steps - 1) * S;
          np[b] = -log_add3(last[sl - 1], len > 0 ? last[sl - 2] : neg_inf<T_>(), neg_inf<T_>());
        }
        if (zero_infinity && std::isinf(np[b])) np[b] = 0;
      }
    });
  });
  return {nll, alpha};
}

Tensor ctc_backward(const Tensor& grad, const Tensor& log_probs, const Tensor& targets,
                    const Tensor& offsets, const Tensor& il, const Tensor& tl, const Tensor& alpha,
                    int64_t blank, bool zero_infinity) {
  Tensor lp = contiguous(log_probs), g = contiguous(to_dtype(grad, log_probs.dtype()));
  int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2), S = alpha.size(2);
  Tensor out = zeros({T, N, C}, lp.dtype());
  dispatch<kCtcTypes>(lp.dtype(), "ctc_loss_backward_cpu", [&](auto tag) {
    using T_ = decltype(tag);
    const T_* lpp = lp.data_ptr<T_>();
    const T_* ap = alpha.data_ptr<T_>();
    const T_* gp = g.data_ptr<T_>();
    T_* op = out.data_ptr<T_>();
    parallel_for(0, N, 1, [&](int64_t b0, int64_t b1) {
      std::vector<T_> beta(static_cast<size_t>(T * S)), lcab(static_cast<size_t>(C));
      for (int64_t b = b0; b < b1; ++b) {
        int64_t len = tl.data_ptr<int64_t>()[b], steps = il.data_ptr<int64_t>()[b];
        int64_t sl = 2 * len + 1;
        if (steps == 0) continue;
        // The stored nll may have been zeroed by zero_infinity; the alphas keep the true one.
        const T_* a = ap + b * T * S;
        const T_* a_last = a + (steps - 1) * S;
        T_ loss =
            -log_add3(a_last[sl - 1], len > 0 ? a_last[sl - 2] : neg_inf<T_>(), neg_inf<T_>());
        if (zero_infinity && std::isinf(loss)) continue;
        Sample<T_> smp{lpp + b * C, N * C,
                       targets.data_ptr<int64_t>() + offsets.data_ptr<int64_t>()[b], blank};
        std::fill(beta.begin(), beta.end(), neg_inf<T_>());
        T_* last = beta.data() + (steps - 1) * S;
        last[sl - 1] = smp.at(steps - 1, blank);
        if (len > 0) last[sl - 2] = smp.at(steps - 1, smp.label(sl - 2));
        for (int64_t t = steps - 2; t >= 0; --t) {
          const T_* next = beta.data() + (t + 1) * S;
          T_* cur = beta.data() + t * S;
          for (int64_t s = 0; s < sl; ++s) {
            T_ l = log_add3(next[s], s + 1 < sl ? next[s + 1] : neg_inf<T_>(),
                            s + 2 < sl && smp.skip(s + 2) ? next[s + 2] : neg_inf<T_>());
            cur[s] = l + smp.at(t, smp.label(s));
          }
        }
        T_ gr = gp[b];
        for (int64_t t = 0; t < steps; ++t) {
          std::fill(lcab.begin(), lcab.end(), neg_inf<T_>());
          for (int64_t s = 0; s < sl; ++s) {
            T_& acc = lcab[size_t(smp.label(s))];
            acc = log_add3(acc, a[t * S + s] + beta[size_t(t * S + s)], neg_inf<T_>());
          }
          T_* row = op + (t * N + b) * C;
          for (int64_t c = 0; c < C; ++c) {
            T_ l = smp.at(t, c);
            row[c] = (std::exp(l) - std::exp(lcab[size_t(c)] + loss - l)) * gr;
          }
        }
      }
    });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_ctc_loss, CPU, ctc_forward);
EMBER_REGISTER_KERNEL(op::_ctc_loss_backward, CPU, ctc_backward);

}  // namespace ember::cpu
