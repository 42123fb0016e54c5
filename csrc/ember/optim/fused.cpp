// Fused optimizer update loops (Note [Fused optimizer math] in fused.h).
#include "ember/optim/fused.h"

#include <algorithm>
#include <cmath>

#include "ember/autograd/grad_mode.h"
#include "ember/core/parallel.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/ops/creation.h"
#include "ember/ops/view.h"

namespace ember::optim::detail {

namespace {

// Note [FMA in optimizer kernels]
// torch's vectorized CPU kernels compute add-with-alpha, lerp and addcmul with fused multiply-adds,
// so the kernels call std::fma at the same places. Built without -mfma, std::fma would be a libm
// call per element; the loops are therefore compiled a second time for AVX2+FMA and picked at run
// time (the results are the same either way: fma is exactly rounded on every path).
template <class F, class Tag>
__attribute__((target("avx2,fma"))) void range_fma(const F& f, Tag tag, int64_t b, int64_t e) {
  f(tag, b, e);
}
template <class F, class Tag>
void range_plain(const F& f, Tag tag, int64_t b, int64_t e) {
  f(tag, b, e);
}

// The tensors of one parameter as contiguous buffers: slot 0 is the parameter, slot 1 its
// gradient (read only), the rest its state. Strided tensors that are written are updated in a
// contiguous copy and copied back by finish().
class Operands {
 public:
  Operands(const char* op, const Tensor& param, const Tensor& grad,
           std::initializer_list<const Tensor*> states)
      : op_(op) {
    EMBER_CHECK(param.defined() && grad.defined(), "[", op, "] expected defined params and grads");
    EMBER_CHECK(grad.dtype() == param.dtype() && grad.sizes().equals(param.sizes()), "[", op,
                "] expected grad of the param's dtype and shape; got param ", dtype_name(param.dtype()),
                " ", param.sizes(), " and grad ", dtype_name(grad.dtype()), " ", grad.sizes());
    add(param);
    work_.push_back(contiguous(grad));
    orig_.push_back(Tensor());
    for (const Tensor* s : states) {
      EMBER_CHECK(s->defined() && s->dtype() == param.dtype() && s->numel() == param.numel(), "[",
                  op, "] expected state tensors of the param's dtype and size; got ",
                  s->defined() ? dtype_name(s->dtype()) : "undefined", " for param ",
                  dtype_name(param.dtype()), " ", param.sizes());
      add(*s);
    }
  }

  template <class T>
  T* ptr(size_t i) const {
    return static_cast<T*>(work_[i].data_ptr());
  }
  int64_t numel() const { return work_[0].numel(); }
  ScalarType dtype() const { return work_[0].dtype(); }

  // Copies strided results back and bumps the version of every written tensor.
  void finish() {
    NoGradGuard guard;
    for (size_t i = 0; i < work_.size(); ++i) {
      if (i == 1) continue;
      if (orig_[i].defined()) copy_(orig_[i], work_[i]);
      else work_[i].bump_version();
    }
  }

  // Runs f(T{}, begin, end) over the elements in parallel, with T the storage type. `f` must be
  // always_inline so that it is compiled for the target of the range function it lands in.
  template <class F>
  void run(F f) const {
    static const bool fma = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    cpu::dispatch<cpu::kFloatTypes>(dtype(), op_, [&](auto tag) {
      parallel_for(0, numel(), kGrainSize, [&](int64_t b, int64_t e) {
        if (fma) range_fma(f, tag, b, e);
        else range_plain(f, tag, b, e);
      });
    });
  }

 private:
  void add(const Tensor& t) {
    if (t.is_contiguous()) {
      work_.push_back(t);
      orig_.push_back(Tensor());
    } else {
      work_.push_back(contiguous(t.detach()));
      orig_.push_back(t);
    }
  }

  const char* op_;
  std::vector<Tensor> work_, orig_;
};

// torch.lerp with a scalar weight: the formula switches at 0.5 to stay accurate near both ends.
template <class A>
__attribute__((always_inline)) inline A lerp(A self, A end, A w) {
  return std::abs(w) < A(0.5) ? std::fma(w, end - self, self) : std::fma(w - A(1), end - self, end);
}

// Increments a 0-d step tensor and returns the new count.
double increment_step(const Tensor& step) {
  EMBER_CHECK(step.defined() && step.numel() == 1, "[optim] expected a one-element step tensor");
  double value = 0;
  cpu::dispatch<cpu::kNumericTypes>(step.dtype(), "optim step", [&](auto tag) {
    using T = decltype(tag);
    T* p = static_cast<T*>(step.data_ptr());
    *p = T(acc_t<T>(*p) + acc_t<T>(1));
    value = double(acc_t<T>(*p));
  });
  step.bump_version();
  return value;
}

void check_sizes(const char* op, size_t n, std::initializer_list<size_t> others) {
  for (size_t m : others)
    EMBER_CHECK(m == n, "[", op, "] expected one entry per param (", n, "); got a list of ", m);
}

}  // namespace

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, const SGDConfig& cfg) {
  const bool use_momentum = cfg.momentum != 0;
  if (use_momentum) momentum_buffers.resize(params.size());
  check_sizes("sgd", params.size(), {grads.size()});
  for (size_t i = 0; i < params.size(); ++i) {
    const bool first = use_momentum && !momentum_buffers[i].defined();
    if (first) momentum_buffers[i] = empty(params[i].sizes(), params[i].dtype());
    Operands ops = use_momentum ? Operands("sgd", params[i], grads[i], {&momentum_buffers[i]})
                                : Operands("sgd", params[i], grads[i], {});
    ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
      using T = decltype(tag);
      using A = acc_t<T>;
      T* p = ops.ptr<T>(0);
      const T* g = ops.ptr<T>(1);
      T* m = use_momentum ? ops.ptr<T>(2) : nullptr;
      const A wd = A(cfg.weight_decay), mom = A(cfg.momentum), damp = A(1 - cfg.dampening);
      const A neg_lr = A(-cfg.lr);
      for (int64_t j = b; j < e; ++j) {
        A d = cfg.maximize ? -A(g[j]) : A(g[j]);
        if (cfg.weight_decay != 0) d = std::fma(A(p[j]), wd, d);
        if (use_momentum) {
          A buf_j = first ? d : std::fma(d, damp, A(T(A(m[j]) * mom)));
          m[j] = T(buf_j);
          d = cfg.nesterov ? std::fma(A(m[j]), mom, d) : A(m[j]);
        }
        p[j] = T(std::fma(d, neg_lr, A(p[j])));
      }
    });
    ops.finish();
  }
}

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps,
               const AdamConfig& cfg) {
  check_sizes("adam", params.size(), {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  if (cfg.amsgrad) check_sizes("adam", params.size(), {max_exp_avg_sqs.size()});
  for (size_t i = 0; i < params.size(); ++i) {
    Operands ops = cfg.amsgrad
                       ? Operands("adam", params[i], grads[i],
                                  {&exp_avgs[i], &exp_avg_sqs[i], &max_exp_avg_sqs[i]})
                       : Operands("adam", params[i], grads[i], {&exp_avgs[i], &exp_avg_sqs[i]});
    const double step = increment_step(steps[i]);
    const double bias_correction1 = 1 - std::pow(cfg.beta1, step);
    const double bias_correction2 = 1 - std::pow(cfg.beta2, step);
    const double step_size = cfg.lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
      using T = decltype(tag);
      using A = acc_t<T>;
      T* p = ops.ptr<T>(0);
      const T* g = ops.ptr<T>(1);
      T* m = ops.ptr<T>(2);
      T* v = ops.ptr<T>(3);
      T* vmax = cfg.amsgrad ? ops.ptr<T>(4) : nullptr;
      const A wd = A(cfg.weight_decay), decay = A(1 - cfg.lr * cfg.weight_decay);
      const A w1 = A(1 - cfg.beta1), beta2 = A(cfg.beta2), w2 = A(1 - cfg.beta2);
      const A bc2 = A(bias_correction2_sqrt), eps = A(cfg.eps), neg_step = A(-step_size);
      for (int64_t j = b; j < e; ++j) {
        A d = cfg.maximize ? -A(g[j]) : A(g[j]);
        A pj = A(p[j]);
        if (cfg.weight_decay != 0) {
          if (cfg.decoupled) pj = A(T(pj * decay));
          else d = std::fma(pj, wd, d);
        }
        const T mj = T(lerp(A(m[j]), d, w1));
        const T vj = T(std::fma(w2 * d, d, A(T(A(v[j]) * beta2))));
        m[j] = mj;
        v[j] = vj;
        A second = A(vj);
        if (cfg.amsgrad) {
          const T mx = std::max(vmax[j], vj, [](T x, T y) { return A(x) < A(y); });
          vmax[j] = mx;
          second = A(mx);
        }
        const A denom = A(T(std::sqrt(second) / bc2)) + eps;
        p[j] = T(pj + (neg_step * A(mj)) / A(T(denom)));
      }
    });
    ops.finish();
  }
}

void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, const std::vector<Tensor>& steps,
                  const RMSpropConfig& cfg) {
  const bool use_momentum = cfg.momentum > 0;
  check_sizes("rmsprop", params.size(), {grads.size(), square_avgs.size(), steps.size()});
  if (cfg.centered) check_sizes("rmsprop", params.size(), {grad_avgs.size()});
  if (use_momentum) check_sizes("rmsprop", params.size(), {momentum_buffers.size()});
  for (size_t i = 0; i < params.size(); ++i) {
    // Slots after the grad: square_avg, then grad_avg if centered, then the buffer if momentum.
    Operands ops = cfg.centered && use_momentum
                       ? Operands("rmsprop", params[i], grads[i],
                                  {&square_avgs[i], &grad_avgs[i], &momentum_buffers[i]})
                   : cfg.centered ? Operands("rmsprop", params[i], grads[i], {&square_avgs[i], &grad_avgs[i]})
                   : use_momentum
                       ? Operands("rmsprop", params[i], grads[i], {&square_avgs[i], &momentum_buffers[i]})
                       : Operands("rmsprop", params[i], grads[i], {&square_avgs[i]});
    increment_step(steps[i]);
    ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
      using T = decltype(tag);
      using A = acc_t<T>;
      T* p = ops.ptr<T>(0);
      const T* g = ops.ptr<T>(1);
      T* sq = ops.ptr<T>(2);
      T* ga = cfg.centered ? ops.ptr<T>(3) : nullptr;
      T* buf = use_momentum ? ops.ptr<T>(cfg.centered ? 4 : 3) : nullptr;
      const A wd = A(cfg.weight_decay), alpha = A(cfg.alpha), w = A(1 - cfg.alpha);
      const A eps = A(cfg.eps), mom = A(cfg.momentum), neg_lr = A(-cfg.lr);
      for (int64_t j = b; j < e; ++j) {
        A d = cfg.maximize ? -A(g[j]) : A(g[j]);
        if (cfg.weight_decay != 0) d = std::fma(A(p[j]), wd, d);
        const T sqj = T(std::fma(w * d, d, A(T(A(sq[j]) * alpha))));
        sq[j] = sqj;
        A avg;
        if (cfg.centered) {
          const T gaj = T(lerp(A(ga[j]), d, w));
          ga[j] = gaj;
          avg = std::sqrt(A(T(std::fma(-A(gaj), A(gaj), A(sqj)))));
        } else {
          avg = std::sqrt(A(sqj));
        }
        avg = A(T(A(T(avg)) + eps));
        if (use_momentum) {
          const T bj = T(A(T(A(buf[j]) * mom)) + d / avg);
          buf[j] = bj;
          p[j] = T(std::fma(A(bj), neg_lr, A(p[j])));
        } else {
          p[j] = T(A(p[j]) + (neg_lr * d) / avg);
        }
      }
    });
    ops.finish();
  }
}

void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& sums, const std::vector<Tensor>& steps,
                  const AdagradConfig& cfg) {
  check_sizes("adagrad", params.size(), {grads.size(), sums.size(), steps.size()});
  for (size_t i = 0; i < params.size(); ++i) {
    Operands ops("adagrad", params[i], grads[i], {&sums[i]});
    const double step = increment_step(steps[i]);
    const double clr = cfg.lr / (1 + (step - 1) * cfg.lr_decay);
    ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
      using T = decltype(tag);
      using A = acc_t<T>;
      T* p = ops.ptr<T>(0);
      const T* g = ops.ptr<T>(1);
      T* sum = ops.ptr<T>(2);
      const A wd = A(cfg.weight_decay), eps = A(cfg.eps), neg_clr = A(-clr);
      for (int64_t j = b; j < e; ++j) {
        A d = cfg.maximize ? -A(g[j]) : A(g[j]);
        if (cfg.weight_decay != 0) d = std::fma(A(p[j]), wd, d);
        const T sj = T(std::fma(d, d, A(sum[j])));
        sum[j] = sj;
        const A std_j = A(T(std::sqrt(A(sj)))) + eps;
        p[j] = T(A(p[j]) + (neg_clr * d) / A(T(std_j)));
      }
    });
    ops.finish();
  }
}

}  // namespace ember::optim::detail
