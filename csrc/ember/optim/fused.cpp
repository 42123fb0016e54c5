// Fused optimizer update loops (Note [Fused optimizer math] in fused.h).
#include "ember/optim/fused.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ember/autograd/grad_mode.h"
#include "ember/core/dispatch_dtype.h"
#include "ember/core/parallel.h"
#include "ember/ops/copy.h"
#include "ember/ops/creation.h"
#include "ember/ops/memory_format.h"
#include "ember/ops/view.h"

// Note [Vectorized optimizer loops]
// The update loops must vectorize to keep up with torch's vector kernels. At -O2 GCC's "very
// cheap" vectorizer skips loops that need an epilogue, and sqrt's errno path blocks them, so
// CMakeLists.txt builds this file alone with -O3 -fno-math-errno -fno-trapping-math (as torch
// builds its kernels; the comparisons of amsgrad need the latter)
// and -ffp-contract=off, so that only the explicit std::fma calls fuse (Note [FMA in optimizer
// kernels]).
// Loop-invariant options are template flags (with_flags) and the buffers are __restrict, so each
// loop body is branch-free.

namespace ember::optim::detail {

namespace {

// Calls f(std::bool_constant<b>...) for the runtime flags: each combination is one instantiation.
template <class F>
void with_flags(F&& f) {
  f();
}
template <class F, class... Bs>
void with_flags(F&& f, bool b, Bs... rest) {
  if (b) with_flags([&](auto... c) { f(std::true_type{}, c...); }, rest...);
  else with_flags([&](auto... c) { f(std::false_type{}, c...); }, rest...);
}

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
           const std::vector<const Tensor*>& states)
      : op_(op) {
    EMBER_CHECK(param.defined() && grad.defined(), op, ": expected defined params and grads");
    EMBER_CHECK(grad.dtype() == param.dtype() && grad.sizes().equals(param.sizes()), op,
                ": expected grad of the param's dtype and shape; got param ",
                dtype_name(param.dtype()), " ", param.sizes(), " and grad ",
                dtype_name(grad.dtype()), " ", grad.sizes());
    add(param);
    work_.push_back(contiguous(grad));
    orig_.push_back(Tensor());
    for (const Tensor* s : states) {
      EMBER_CHECK(s->defined() && s->dtype() == param.dtype() && s->numel() == param.numel(), op,
                  ": expected state tensors of the param's dtype and size; got ",
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
    dispatch<kFloatTypes>(dtype(), op_, [&](auto tag) {
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
  EMBER_CHECK(step.defined() && step.numel() == 1, "optim: expected a one-element step tensor");
  double value = 0;
  dispatch<kNumericTypes>(step.dtype(), "optim step", [&](auto tag) {
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
    EMBER_CHECK(m == n, op, ": expected one entry per param (", n, "); got a list of ", m);
}

}  // namespace

void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, const SGDConfig& cfg) {
  const bool use_momentum = cfg.momentum != 0;
  if (use_momentum) momentum_buffers.resize(params.size());
  check_sizes("sgd", params.size(), {grads.size()});
  const double sgn = cfg.maximize ? -1.0 : 1.0;  // negation is exact: maximize is a sign flip
  for (size_t i = 0; i < params.size(); ++i) {
    const bool first = use_momentum && !momentum_buffers[i].defined();
    // torch starts the buffer as a clone of the gradient, so it keeps the gradient's layout
    // (a channels_last weight's buffer is channels_last too).
    if (first && grads[i].defined())
      momentum_buffers[i] = empty_like(grads[i], params[i].dtype(), MemoryFormat::Preserve);
    std::vector<const Tensor*> states;
    if (use_momentum) states.push_back(&momentum_buffers[i]);
    Operands ops("sgd", params[i], grads[i], states);
    with_flags(
        [&](auto has_wd, auto has_mom, auto is_first, auto nesterov) {
          ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
            using T = decltype(tag);
            using A = acc_t<T>;
            T* __restrict p = ops.ptr<T>(0);
            const T* __restrict g = ops.ptr<T>(1);
            T* __restrict m = has_mom ? ops.ptr<T>(2) : nullptr;
            const A s = A(sgn), wd = A(cfg.weight_decay), mom = A(cfg.momentum);
            const A damp = A(1 - cfg.dampening), neg_lr = A(-cfg.lr);
            for (int64_t j = b; j < e; ++j) {
              A d = s * A(g[j]);
              if constexpr (decltype(has_wd)::value) d = std::fma(A(p[j]), wd, d);
              if constexpr (decltype(has_mom)::value) {
                A buf;
                if constexpr (decltype(is_first)::value) buf = A(T(d));
                else buf = A(T(std::fma(d, damp, A(T(A(m[j]) * mom)))));
                m[j] = T(buf);
                if constexpr (decltype(nesterov)::value) d = std::fma(buf, mom, d);
                else d = buf;
              }
              p[j] = T(std::fma(d, neg_lr, A(p[j])));
            }
          });
        },
        cfg.weight_decay != 0, use_momentum, first, cfg.nesterov);
    ops.finish();
  }
}

void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps,
               const AdamConfig& cfg) {
  check_sizes("adam", params.size(),
              {grads.size(), exp_avgs.size(), exp_avg_sqs.size(), steps.size()});
  if (cfg.amsgrad) check_sizes("adam", params.size(), {max_exp_avg_sqs.size()});
  const double sgn = cfg.maximize ? -1.0 : 1.0;
  const bool has_wd = cfg.weight_decay != 0;
  for (size_t i = 0; i < params.size(); ++i) {
    std::vector<const Tensor*> states{&exp_avgs[i], &exp_avg_sqs[i]};
    if (cfg.amsgrad) states.push_back(&max_exp_avg_sqs[i]);
    Operands ops("adam", params[i], grads[i], states);
    const double step = increment_step(steps[i]);
    const double bias_correction1 = 1 - std::pow(cfg.beta1, step);
    const double bias_correction2 = 1 - std::pow(cfg.beta2, step);
    const double step_size = cfg.lr / bias_correction1;
    const double bias_correction2_sqrt = std::sqrt(bias_correction2);
    with_flags(
        [&](auto coupled_wd, auto decoupled_wd, auto amsgrad) {
          ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
            using T = decltype(tag);
            using A = acc_t<T>;
            T* __restrict p = ops.ptr<T>(0);
            const T* __restrict g = ops.ptr<T>(1);
            T* __restrict m = ops.ptr<T>(2);
            T* __restrict v = ops.ptr<T>(3);
            T* __restrict vmax = amsgrad ? ops.ptr<T>(4) : nullptr;
            const A s = A(sgn), wd = A(cfg.weight_decay), decay = A(1 - cfg.lr * cfg.weight_decay);
            const A w1 = A(1 - cfg.beta1), beta2 = A(cfg.beta2), w2 = A(1 - cfg.beta2);
            const A bc2 = A(bias_correction2_sqrt), eps = A(cfg.eps), neg_step = A(-step_size);
            for (int64_t j = b; j < e; ++j) {
              A d = s * A(g[j]);
              A pj = A(p[j]);
              if constexpr (decltype(decoupled_wd)::value) pj = A(T(pj * decay));
              if constexpr (decltype(coupled_wd)::value) d = std::fma(pj, wd, d);
              const A mj = A(T(lerp(A(m[j]), d, w1)));
              A vj = A(T(std::fma(w2 * d, d, A(T(A(v[j]) * beta2)))));
              m[j] = T(mj);
              v[j] = T(vj);
              if constexpr (decltype(amsgrad)::value) {
                const A old = A(vmax[j]);
                vj = ((old < vj) | (vj != vj)) ? vj : old;  // torch.maximum propagates NaN
                vmax[j] = T(vj);
              }
              const A denom = A(T(A(T(std::sqrt(vj))) / bc2)) + eps;
              p[j] = T(pj + (neg_step * mj) / A(T(denom)));
            }
          });
        },
        has_wd && !cfg.decoupled, has_wd && cfg.decoupled, cfg.amsgrad);
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
  const double sgn = cfg.maximize ? -1.0 : 1.0;
  for (size_t i = 0; i < params.size(); ++i) {
    // Slots after the grad: square_avg, then grad_avg if centered, then the buffer if momentum.
    std::vector<const Tensor*> states{&square_avgs[i]};
    if (cfg.centered) states.push_back(&grad_avgs[i]);
    if (use_momentum) states.push_back(&momentum_buffers[i]);
    Operands ops("rmsprop", params[i], grads[i], states);
    increment_step(steps[i]);
    with_flags(
        [&](auto has_wd, auto centered, auto has_mom) {
          ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
            using T = decltype(tag);
            using A = acc_t<T>;
            T* __restrict p = ops.ptr<T>(0);
            const T* __restrict g = ops.ptr<T>(1);
            T* __restrict sq = ops.ptr<T>(2);
            T* __restrict ga = centered ? ops.ptr<T>(3) : nullptr;
            T* __restrict buf = has_mom ? ops.ptr<T>(centered ? 4 : 3) : nullptr;
            const A s = A(sgn), wd = A(cfg.weight_decay), alpha = A(cfg.alpha),
                    w = A(1 - cfg.alpha);
            const A eps = A(cfg.eps), mom = A(cfg.momentum), neg_lr = A(-cfg.lr);
            for (int64_t j = b; j < e; ++j) {
              A d = s * A(g[j]);
              if constexpr (decltype(has_wd)::value) d = std::fma(A(p[j]), wd, d);
              const A sqj = A(T(std::fma(w * d, d, A(T(A(sq[j]) * alpha)))));
              sq[j] = T(sqj);
              A avg;
              if constexpr (decltype(centered)::value) {
                const A gaj = A(T(lerp(A(ga[j]), d, w)));
                ga[j] = T(gaj);
                avg = A(T(std::sqrt(A(T(std::fma(-gaj, gaj, sqj))))));
              } else {
                avg = A(T(std::sqrt(sqj)));
              }
              avg = A(T(avg + eps));
              if constexpr (decltype(has_mom)::value) {
                const A bj = A(T(A(T(A(buf[j]) * mom)) + d / avg));
                buf[j] = T(bj);
                p[j] = T(std::fma(bj, neg_lr, A(p[j])));
              } else {
                p[j] = T(A(p[j]) + (neg_lr * d) / avg);
              }
            }
          });
        },
        cfg.weight_decay != 0, cfg.centered, use_momentum);
    ops.finish();
  }
}

void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& sums, const std::vector<Tensor>& steps,
                  const AdagradConfig& cfg) {
  check_sizes("adagrad", params.size(), {grads.size(), sums.size(), steps.size()});
  const double sgn = cfg.maximize ? -1.0 : 1.0;
  for (size_t i = 0; i < params.size(); ++i) {
    Operands ops("adagrad", params[i], grads[i], {&sums[i]});
    const double step = increment_step(steps[i]);
    const double clr = cfg.lr / (1 + (step - 1) * cfg.lr_decay);
    with_flags(
        [&](auto has_wd) {
          ops.run([&](auto tag, int64_t b, int64_t e) __attribute__((always_inline)) {
            using T = decltype(tag);
            using A = acc_t<T>;
            T* __restrict p = ops.ptr<T>(0);
            const T* __restrict g = ops.ptr<T>(1);
            T* __restrict sum = ops.ptr<T>(2);
            const A s = A(sgn), wd = A(cfg.weight_decay), eps = A(cfg.eps), neg_clr = A(-clr);
            for (int64_t j = b; j < e; ++j) {
              A d = s * A(g[j]);
              if constexpr (decltype(has_wd)::value) d = std::fma(A(p[j]), wd, d);
              const A sj = A(T(std::fma(d, d, A(sum[j]))));
              sum[j] = T(sj);
              const A std_j = A(T(A(T(std::sqrt(sj))) + eps));
              p[j] = T(A(p[j]) + (neg_clr * d) / std_j);
            }
          });
        },
        cfg.weight_decay != 0);
    ops.finish();
  }
}

}  // namespace ember::optim::detail
