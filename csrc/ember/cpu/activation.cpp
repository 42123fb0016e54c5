// CPU kernels of the fused activations and their backward (Note [Activation kernels]): one pass
// over the input in acc_t, for every floating dtype and any strides, through TensorIter and
// cpu/loops.h (Note [Vectorized elementwise]). float math is cpu/vmath.h's (Note [Vector math]),
// the same functions as the unary ops, so e.g. silu(x) is exactly x * sigmoid(x).
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno")
#include <cmath>
#include <cstdint>
#include <limits>
#include <string_view>

#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/unary.h"

namespace ember::cpu {

namespace {

// `make(T{})` returns the functor f(x) for the computing type T (float or double).
template <class Make>
Tensor forward(const char* name, const Tensor& self, Make make) {
  Tensor out = empty_like_inputs(self.sizes(), self.dtype(), {&self});
  TensorIter it({&out, &self});
  dispatch<kFloatTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T>(it, make(acc_t<T>{}));
  });
  return out;
}

// `make(T{})` returns f(grad, x). A broadcast grad (e.g. the gradient of sum()) takes
// binary_loop's scalar path.
template <class Make>
Tensor backward(const char* name, const Tensor& grad, const Tensor& self, Make make) {
  Tensor g = grad.dtype() == self.dtype() ? grad : to_dtype(grad, self.dtype());
  // The result's layout follows the inputs in torch's operand order (Note [Output layout]):
  // the gradient first, except for leaky_relu's and threshold's backward, which list self first.
  const std::string_view op(name);
  Tensor out = op == "leaky_relu_backward" || op == "threshold_backward"
                   ? empty_like_inputs(self.sizes(), self.dtype(), {&self, &g})
                   : empty_like_inputs(self.sizes(), self.dtype(), {&g, &self});
  TensorIter it({&out, &g, &self});
  dispatch<kFloatTypes>(self.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    binary_loop<T, T, T>(it, make(acc_t<T>{}));
  });
  return out;
}

constexpr double kInvSqrt2 = 0.70710678118654752440;
constexpr double kInvSqrt2Pi = 0.39894228040143267794;
constexpr double kSqrt2OverPi = 0.79788456080286535588;
constexpr double kGeluC = 0.044715;

// Whether torch's GELU kernel takes its vectorized path for `self` with the edge behaviour below:
// a contiguous (row-major) tensor of two or more elements on a CPU where torch runs its AVX-512
// kernels; any other layout, and a single element, take its scalar path. (Measured on torch
// 2.13: a transposed, sliced-by-rows, strided or expanded input is scalar; on an AVX2-only CPU
// its vector kernel gives the scalar path's results at 3e38 and +inf for every layout.)
bool torch_vector_path(const Tensor& self) {
  return kBestIsa == Isa::avx512 && self.numel() >= 2 && self.is_contiguous();
}

Tensor gelu_kernel(const Tensor& self, double tanh_mode, double, double) {
  if (tanh_mode != 0)
    return forward("GeluKernelImpl", self, [](auto t) {
      using T = decltype(t);
      return [](T x) {
        T inner = T(kSqrt2OverPi) * (x + T(kGeluC) * x * x * x);
        return T(0.5) * x * (T(1) + fast_tanh(inner));
      };
    });
  // float32 and bfloat16 round at the edges as torch's two paths do: its vectorized kernel
  // multiplies x * (1 + erf) first (gelu(3e38) overflows to inf) and gives NaN at +inf (its
  // vector erf); its scalar kernel halves x first (gelu(3e38) = 3e38) and gives +inf there. The
  // compiled kernels (_inductor/ops.py) give NaN at +inf as eager's contiguous path (torch.compile
  // gives +inf there), and keep x * 0.5 first (3e38 stays finite).
  if (self.dtype() == kFloat || self.dtype() == kBFloat16) {
    if (!torch_vector_path(self))
      return forward("GeluKernelImpl", self, [](auto t) {
        using T = decltype(t);
        return [](T x) { return x * T(0.5) * (T(1) + fast_erf(x * T(kInvSqrt2))); };
      });
    return forward("GeluKernelImpl", self, [](auto t) {
      using T = decltype(t);
      return [](T x) {
        return x == std::numeric_limits<T>::infinity()
                   ? std::numeric_limits<T>::quiet_NaN()
                   : x * (T(1) + fast_erf(x * T(kInvSqrt2))) * T(0.5);
      };
    });
  }
  return forward("GeluKernelImpl", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return x * (T(1) + fast_erf(x * T(kInvSqrt2))) * T(0.5); };
  });
}
Tensor gelu_backward_kernel(const Tensor& grad, const Tensor& self, double tanh_mode, double,
                            double) {
  if (tanh_mode != 0)
    return backward("GeluBackwardKernelImpl", grad, self, [](auto t) {
      using T = decltype(t);
      return [](T g, T x) {
        T th = fast_tanh(T(kSqrt2OverPi) * (x + T(kGeluC) * x * x * x));
        T dinner = T(kSqrt2OverPi) * (T(1) + T(3 * kGeluC) * x * x);
        return g * (T(0.5) * (T(1) + th) + T(0.5) * x * (T(1) - th * th) * dinner);
      };
    });
  return backward("GeluBackwardKernelImpl", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) {
      T cdf = T(0.5) * (T(1) + fast_erf(x * T(kInvSqrt2)));
      return g * (cdf + x * T(kInvSqrt2Pi) * fast_exp(T(-0.5) * x * x));
    };
  });
}

Tensor silu_kernel(const Tensor& self, double, double, double) {
  return forward("silu_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return x * fast_sigmoid(x); };
  });
}
Tensor silu_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("silu_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) {
      T s = fast_sigmoid(x);
      return g * s * (T(1) + x * (T(1) - s));
    };
  });
}

// log(1 + exp(x)) without overflow.
template <class T>
T softplus1(T x) {
  return x > T(20) ? x : fast_log1p(fast_exp(x));
}

Tensor mish_kernel(const Tensor& self, double, double, double) {
  return forward("mish_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return x * fast_tanh(softplus1(x)); };
  });
}
Tensor mish_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("mish_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) {
      T th = fast_tanh(softplus1(x));
      return g * (th + x * fast_sigmoid(x) * (T(1) - th * th));
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
      return x > T(0) ? g * s : g * a * fast_exp(x * is);
    };
  });
}

Tensor softplus_kernel(const Tensor& self, double beta, double threshold, double) {
  return forward("softplus_cpu", self, [=](auto t) {
    using T = decltype(t);
    return [b = T(beta), th = T(threshold)](T x) {
      return x * b > th ? x : fast_log1p(fast_exp(x * b)) / b;
    };
  });
}
Tensor softplus_backward_kernel(const Tensor& grad, const Tensor& self, double beta,
                                double threshold, double) {
  return backward("softplus_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [b = T(beta), th = T(threshold)](T g, T x) {
      T z = x * b;
      return z > th ? g : g * fast_sigmoid(z);
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
Tensor threshold_backward_kernel(const Tensor& grad, const Tensor& self, double th, double,
                                 double) {
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
Tensor shrink_backward_kernel(const Tensor& grad, const Tensor& self, double lambd, double,
                              double) {
  return backward("shrink_backward", grad, self, [=](auto t) {
    using T = decltype(t);
    return [l = T(lambd)](T g, T x) { return x >= -l && x <= l ? T(0) : g; };
  });
}

Tensor logsigmoid_kernel(const Tensor& self, double, double, double) {
  return forward("log_sigmoid_cpu", self, [](auto t) {
    using T = decltype(t);
    return [](T x) { return std::min(x, T(0)) - fast_log1p(fast_exp(-std::abs(x))); };
  });
}
Tensor logsigmoid_backward_kernel(const Tensor& grad, const Tensor& self, double, double, double) {
  return backward("log_sigmoid_backward", grad, self, [](auto t) {
    using T = decltype(t);
    return [](T g, T x) { return g / (T(1) + fast_exp(x)); };
  });
}

// The ACT rows of the unary table (Note [Unary table] in schema/unary.h) name these kernels.
#define EMBER_REGISTER(name, kind, dtypes, node, fwd, bwd, ...) \
  EMBER_REGISTER_##kind(name, fwd, bwd)
#define EMBER_REGISTER_ACT(name, fwd, bwd)   \
  EMBER_REGISTER_KERNEL(op::name, CPU, fwd); \
  EMBER_REGISTER_KERNEL(op::name##_backward, CPU, bwd);
#define EMBER_REGISTER_FLOAT(name, fwd, bwd)
#define EMBER_REGISTER_SAME(name, fwd, bwd)
#define EMBER_REGISTER_INT(name, fwd, bwd)
#define EMBER_REGISTER_BOOL(name, fwd, bwd)
#define EMBER_REGISTER_SPECIAL(name, fwd, bwd)
#define EMBER_REGISTER_NOGRAD(name, fwd, bwd)
EMBER_UNARY_OPS(EMBER_REGISTER)
#undef EMBER_REGISTER
#undef EMBER_REGISTER_ACT
#undef EMBER_REGISTER_FLOAT
#undef EMBER_REGISTER_SAME
#undef EMBER_REGISTER_INT
#undef EMBER_REGISTER_BOOL
#undef EMBER_REGISTER_SPECIAL
#undef EMBER_REGISTER_NOGRAD

}  // namespace

}  // namespace ember::cpu
