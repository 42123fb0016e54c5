// CPU kernels of the fused activations and their backward (Note [Activation kernels]): one pass
// over the input in acc_t, for every floating dtype and any strides.
//
// Note [Vectorizable float math]
// libm's expf/erff/tanhf are scalar calls that block vectorization, so float kernels use the
// branch-free versions below (Cephes' expf polynomial, Abramowitz-Stegun 7.1.26 for erf, as
// PyTorch's vectorized erf; log1p is cpu/math.h's fast_log1p) and this file is compiled with the
// full vectorizer. double keeps libm.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", "no-math-errno")
#include <bit>
#include <cmath>
#include <cstdint>
#include <numbers>

#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/activation.h"

namespace ember::cpu {

namespace {

inline float vexp(float x) {
  x = std::min(std::max(x, -87.3f), 88.37f);  // keeps 2^n finite
  // n = round(x / ln2) by the 1.5 * 2^23 trick: floor() is a libm call without SSE4.1.
  const float shifted = x * 1.44269504088896341f + 12582912.0f;
  const float n = shifted - 12582912.0f;
  const int32_t ni = std::bit_cast<int32_t>(shifted) - 0x4B400000;
  const float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  return p * std::bit_cast<float>((ni + 127) << 23);
}
inline double vexp(double x) { return std::exp(x); }

inline float verf(float x) {
  const float a = std::abs(x);
  const float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  const float y = 1.0f - p * t * vexp(-a * a);
  return std::copysign(y, x);
}
inline double verf(double x) { return std::erf(x); }

inline float vtanh(float x) {
  // 1 - 2 / (exp(2x) + 1) loses relative accuracy near 0: use the odd series there.
  const float x2 = x * x;
  const float small = x * (1.0f + x2 * (-0.333333333f + x2 * (0.133333333f - x2 * 0.0539682540f)));
  const float big = 1.0f - 2.0f / (vexp(2.0f * x) + 1.0f);
  return std::abs(x) < 0.125f ? small : big;
}
inline double vtanh(double x) { return std::tanh(x); }

// exp of a non-positive argument only: no overflow, and measurably faster than 1 / (1 + exp(-x)).
template <class T>
inline T vsigmoid(T x) {
  const T e = vexp(-std::abs(x));
  const T s = T(1) / (T(1) + e);
  return x >= T(0) ? s : e * s;
}

// Contiguous operands get a plain pointer loop (restrict-qualified, so it vectorizes without
// aliasing checks) built for the best ISA (Note [ISA clones]); anything else goes through
// TensorIter.
template <class T, class F>
void map_contiguous(T* __restrict o, const T* __restrict a, int64_t n, F f) {
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    with_best_isa([&] {
      for (int64_t i = b; i < e; ++i) o[i] = T(f(acc_t<T>(a[i])));
    });
  });
}
template <class T, class F>
void map_contiguous(T* __restrict o, const T* __restrict g, const T* __restrict a, int64_t n, F f) {
  parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
    with_best_isa([&] {
      for (int64_t i = b; i < e; ++i) o[i] = T(f(acc_t<T>(g[i]), acc_t<T>(a[i])));
    });
  });
}

// `make(T{})` returns the functor for the computing type T (float or double).
template <class Make>
Tensor forward(const char* name, const Tensor& self, Make make) {
  Tensor out = empty_like_inputs(self.sizes(), self.dtype(), {&self});
  dispatch<kFloatTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if (self.is_contiguous()) {
      map_contiguous(out.data_ptr<T>(), self.data_ptr<T>(), self.numel(), make(acc_t<T>{}));
    } else {
      TensorIter it({&out, &self});
      unary_loop<T, T>(it, make(acc_t<T>{}));
    }
  });
  return out;
}

bool all_strides_zero(const Tensor& t) {
  for (int64_t st : t.strides())
    if (st != 0) return false;
  return t.numel() > 0;
}

// `make(T{})` returns f(grad, x).
template <class Make>
Tensor backward(const char* name, const Tensor& grad, const Tensor& self, Make make) {
  Tensor g = grad.dtype() == self.dtype() ? grad : to_dtype(grad, self.dtype());
  Tensor out = empty(self.sizes(), self.dtype());
  dispatch<kFloatTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if (self.is_contiguous() && g.is_contiguous()) {
      map_contiguous(out.data_ptr<T>(), g.data_ptr<T>(), self.data_ptr<T>(), self.numel(),
                     make(acc_t<T>{}));
    } else if (self.is_contiguous() && all_strides_zero(g)) {  // e.g. the gradient of sum()
      const acc_t<T> gv = acc_t<T>(*g.data_ptr<T>());
      auto f = make(acc_t<T>{});
      map_contiguous(out.data_ptr<T>(), self.data_ptr<T>(), self.numel(),
                     [gv, f](acc_t<T> x) { return f(gv, x); });
    } else {
      TensorIter it({&out, &g, &self});
      binary_loop<T, T, T>(it, make(acc_t<T>{}));
    }
  });
  return out;
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluC = 0.044715;

Tensor gelu_kernel(const Tensor& self, double tanh_mode, double, double) {
  if (tanh_mode != 0)
    return forward("GeluKernelImpl", self, [](auto t) {
      using T = decltype(t);
      return [](T x) {
        T inner = T(kSqrt2OverPi) * (x + T(kGeluC) * x * x * x);
        return T(0.5) * x * (T(1) + vtanh(inner));
      };
    });
  return forward("GeluKernelImpl", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return T(0.5) * x * (T(1) + verf(x * T(kInvSqrt2))); };
  });
}
Tensor gelu_backward_kernel(const Tensor& grad, const Tensor& self, double tanh_mode, double, double) {
  if (tanh_mode != 0)
    return backward("GeluBackwardKernelImpl", grad, self, [](auto t) {
      using T = decltype(t);
      return [](T g, T x) {
        T th = vtanh(T(kSqrt2OverPi) * (x + T(kGeluC) * x * x * x));
        T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * x * x);
        return g * (T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * dinner);
      };
    });
  return backward("GeluBackwardKernelImpl", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) {
      T cdf = T(0.5) * (T(1) + verf(x * T(kInvSqrt2)));
      return g * (cdf + x * T(kInvSqrt2Pi) * vexp(T(-0.5) * x * x));
    };
  });
}

Tensor silu_kernel(const Tensor& self, double, double, double) {
  return forward("silu_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return x * vsigmoid(x); };
  });
}
Tensor silu_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("silu_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) {
      T s = vsigmoid(x);
      return g * s * (T(1) + x * (T(1) - s));
    };
  });
}

// log(1 + exp(x)) without overflow.
template <class T>
T softplus1(T x) {
  return x > T(20) ? x : fast_log1p(vexp(x));
}

Tensor mish_kernel(const Tensor& self, double, double, double) {
  return forward("mish_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return x * vtanh(softplus1(x)); };
  });
}
Tensor mish_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("mish_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) {
      T th = vtanh(softplus1(x));
      return g * (th + x * vsigmoid(x) * (T(1) - th * th));
    };
  });
}

Tensor leaky_relu_kernel(const Tensor& self, double slope, double, double) {
  return forward("leaky_relu_cpu", self, [slope](auto t) {
    using T = decltype(t);
    return [s = T(slope)](T x) { return std::max(x, T(0)) + s * std::min(x, T(0)); };
  });
}
Tensor leaky_relu_backward_kernel(const Tensor& grad, const Tensor& self, double slope, double,
                                  double) {
  return backward("leaky_relu_backward", grad, self, [slope](auto t) {
    using T = decltype(t);
    return [s = T(slope)](T g, T x) { return x > T(0) ? g : g * s; };
  });
}

Tensor elu_kernel(const Tensor& self, double alpha, double scale, double input_scale) {
  return forward("elu_cpu", self, [=](auto t) {
    using T = decltype(t);
    return [a = T(alpha * scale), s = T(scale), is = T(input_scale)](T x) {
      return x > T(0) ? x * s : a * std::expm1(x * is);
    };
  });
}
Tensor elu_backward_kernel(const Tensor& grad, const Tensor& self, double alpha, double scale,
                           double input_scale) {
  return backward("elu_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [a = T(alpha * scale * input_scale), s = T(scale), is = T(input_scale)](T g, T x) {
      return x > T(0) ? g * s : g * a * vexp(x * is);
    };
  });
}

Tensor softplus_kernel(const Tensor& self, double beta, double threshold, double) {
  return forward("softplus_cpu", self, [=](auto t) {
    using T = decltype(t);
    return [b = T(beta), th = T(threshold)](T x) {
      return x * b > th ? x : fast_log1p(vexp(x * b)) / b;
    };
  });
}
Tensor softplus_backward_kernel(const Tensor& grad, const Tensor& self, double beta,
                                double threshold, double) {
  return backward("softplus_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [b = T(beta), th = T(threshold)](T g, T x) {
      T z = x * b;
      return z > th ? g : g * vsigmoid(z);
    };
  });
}

Tensor hardtanh_kernel(const Tensor& self, double lo, double hi, double) {
  return forward("hardtanh", self, [=](auto t) {
    using T = decltype(t);
    // NaN passes through, as in clamp.
    return [l = T(lo), h = T(hi)](T x) { return x < l ? l : (x > h ? h : x); };
  });
}
Tensor hardtanh_backward_kernel(const Tensor& grad, const Tensor& self, double lo, double hi,
                                double) {
  return backward("hardtanh_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [l = T(lo), h = T(hi)](T g, T x) { return x > l && x < h ? g : T(0); };
  });
}

Tensor hardsigmoid_kernel(const Tensor& self, double, double, double) {
  return forward("hardsigmoid_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return std::min(std::max(x + T(3), T(0)), T(6)) / T(6); };
  });
}
Tensor hardsigmoid_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("hardsigmoid_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) { return x > T(-3) && x < T(3) ? g / T(6) : T(0); };
  });
}

Tensor hardswish_kernel(const Tensor& self, double, double, double) {
  return forward("hardswish_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return x * std::min(std::max(x + T(3), T(0)), T(6)) / T(6); };
  });
}
Tensor hardswish_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("hardswish_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) { return x < T(-3) ? T(0) : (x <= T(3) ? g * (x / T(3) + T(0.5)) : g); };
  });
}

Tensor threshold_kernel(const Tensor& self, double th, double value, double) {
  return forward("threshold", self, [=](auto t) {
    using T = decltype(t);
    return [h = T(th), v = T(value)](T x) { return x <= h ? v : x; };
  });
}
// The shrink and threshold gradients pass g where the forward is the identity (up to a shift).
Tensor threshold_backward_kernel(const Tensor& grad, const Tensor& self, double th, double, double) {
  return backward("threshold_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [h = T(th)](T g, T x) { return x <= h ? T(0) : g; };
  });
}

Tensor softshrink_kernel(const Tensor& self, double lambd, double, double) {
  return forward("softshrink_check", self, [=](auto t) {
    using T = decltype(t);
    return [l = T(lambd)](T x) { return x > l ? x - l : (x < -l ? x + l : x * T(0)); };
  });
}
Tensor hardshrink_kernel(const Tensor& self, double lambd, double, double) {
  return forward("hardshrink_cpu", self, [=](auto t) {
    using T = decltype(t);
    return [l = T(lambd)](T x) { return x >= -l && x <= l ? T(0) : x; };
  });
}
Tensor shrink_backward_kernel(const Tensor& grad, const Tensor& self, double lambd, double, double) {
  return backward("shrink_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [l = T(lambd)](T g, T x) { return x >= -l && x <= l ? T(0) : g; };
  });
}

Tensor logsigmoid_kernel(const Tensor& self, double, double, double) {
  return forward("log_sigmoid_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return std::min(x, T(0)) - fast_log1p(vexp(-std::abs(x))); };
  });
}
Tensor logsigmoid_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("log_sigmoid_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) { return g / (T(1) + vexp(x)); };
  });
}

#define EMBER_REGISTER_ACT(name, fwd, bwd)              \
  EMBER_REGISTER_KERNEL(op::name, CPU, fwd);               \
  EMBER_REGISTER_KERNEL(op::name##_backward, CPU, bwd);
EMBER_REGISTER_ACT(gelu, gelu_kernel, gelu_backward_kernel)
EMBER_REGISTER_ACT(silu, silu_kernel, silu_backward_kernel)
EMBER_REGISTER_ACT(mish, mish_kernel, mish_backward_kernel)
EMBER_REGISTER_ACT(leaky_relu, leaky_relu_kernel, leaky_relu_backward_kernel)
EMBER_REGISTER_ACT(elu, elu_kernel, elu_backward_kernel)
EMBER_REGISTER_ACT(softplus, softplus_kernel, softplus_backward_kernel)
EMBER_REGISTER_ACT(hardtanh, hardtanh_kernel, hardtanh_backward_kernel)
EMBER_REGISTER_ACT(hardsigmoid, hardsigmoid_kernel, hardsigmoid_backward_kernel)
EMBER_REGISTER_ACT(hardswish, hardswish_kernel, hardswish_backward_kernel)
EMBER_REGISTER_ACT(threshold, threshold_kernel, threshold_backward_kernel)
EMBER_REGISTER_ACT(softshrink, softshrink_kernel, shrink_backward_kernel)
EMBER_REGISTER_ACT(hardshrink, hardshrink_kernel, shrink_backward_kernel)
EMBER_REGISTER_ACT(logsigmoid, logsigmoid_kernel, logsigmoid_backward_kernel)
#undef EMBER_REGISTER_ACT

}  // namespace

}  // namespace ember::cpu
