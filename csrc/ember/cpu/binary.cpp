// CPU kernels of the binary ops: one functor each, a result-dtype rule, shared loops.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include "ember/schema/binary.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"

namespace ember::cpu {

namespace {

// Bool: the result is bool (comparisons, logical ops); Value: the result has the operands' dtype.
enum class Out { Value, Bool };

template <class T>
constexpr bool is_float_v = std::is_floating_point_v<T>;

void check_zero_div(bool is_int_zero) { EMBER_CHECK(!is_int_zero, "ZeroDivisionError"); }

// The operands as the meta step (Note [Meta step] in ops/meta.h) hands them over: all of the
// compute dtype, `out` of that dtype (or bool) and of the broadcast shape.
void check_prepared(const char* name, const Tensor& out, ScalarType ct,
                    std::initializer_list<const Tensor*> operands, bool bool_out) {
  bool ok = out.dtype() == (bool_out ? kBool : ct);
  for (const Tensor* t : operands) ok = ok && t->dtype() == ct;
  EMBER_CHECK(ok, name, ": expected operands of one dtype and an output of the result dtype ",
              "(the op's meta step prepares them); got ", out.dtype(), " output");
}

// Note [torch's vectorized fmod]
// PyTorch's CPU fmod and remainder of floating dtypes run Sleef's fmod on its vectorized path:
// exact, except that it gives NaN where the first quotient estimate |x| * (1 / |y|) (both
// rounded toward zero by an ulp, a divisor below the normal range first scaled up with x)
// overflows, e.g. fmod(3.0, 1e-40) or fmod(3e38, 0.5) in float32; the scalar path (std::fmod)
// gives the exact remainder there. That path covers, in each inner loop TensorIterator runs,
// the leading blocks of two AVX2 vectors (16 floats, 8 doubles, 32 half/bfloat16, computed in
// float) when all operands are dense or one input is a broadcast scalar; the tail and every
// other layout are scalar. Measured on torch 2.13 (tests/python/test_edges_s13.py).
template <class C>
bool vector_fmod_is_nan(C x, C y) {
  C nu = std::fabs(x), de = std::fabs(y);
  if (!(nu >= de) || de == 0) return false;  // NaN operands, |x| < |y| and 0: as std::fmod
  const C scale = sizeof(C) == 4 ? C(1 << 25) : C(UINT64_C(1) << 54);
  if (de < std::numeric_limits<C>::min()) {
    nu *= scale;
    de *= scale;
  }
  auto toward0 = [](C v) { return std::nextafter(v, C(0)); };
  return std::isinf(toward0(nu) * toward0(C(1) / de));
}

template <class T, class F>
void vector_fmod_loop(const TensorIter& it, F f) {
  using C = acc_t<T>;
  constexpr int64_t block = 64 / int64_t(sizeof(T));  // two 256-bit vectors of T
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    const int64_t z = sizeof(T);
    const bool vec =
        s[0] == z && ((s[1] == z && (s[2] == z || s[2] == 0)) || (s[1] == 0 && s[2] == z));
    const int64_t nv = vec ? n - n % block : 0;
    for (int64_t i = 0; i < n; ++i) {
      C x = load<T>(p[1] + i * s[1]), y = load<T>(p[2] + i * s[2]);
      C r = i < nv && vector_fmod_is_nan(x, y) ? std::numeric_limits<C>::quiet_NaN() : f(x, y);
      *reinterpret_cast<T*>(p[0] + i * s[0]) = T(r);
    }
  });
}

// out = f(a, s) for a float16/bfloat16 `a` and a 0-d float `b` (Note [Opmath scalars] in
// ops/meta.h): s read as float, the result rounded once.
template <class F>
void opmath_scalar_out(const char* name, Tensor& out, const Tensor& a, const Tensor& b, F f) {
  check_prepared(name, out, a.dtype(), {}, false);
  const float s = *b.data_ptr<float>();
  TensorIter it({&out, &a});
  dispatch<type_bit(kHalf) | type_bit(kBFloat16)>(a.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    unary_loop<T, T, Isa::avx2>(it, [&](float x) { return f(x, s); });
  });
}

// out = f(a, b), computed in a's dtype. `vec_fmod`: the floating dtypes follow
// Note [torch's vectorized fmod].
template <uint32_t Allowed, Out kind, bool vec_fmod = false, class F>
Tensor& binary_out(const char* name, Tensor& out, const Tensor& a, const Tensor& b, F f) {
  const ScalarType ct = a.dtype();
  if constexpr (kind == Out::Value && (Allowed & type_bit(kBFloat16))) {
    if (b.dim() == 0 && b.dtype() == kFloat && (ct == kHalf || ct == kBFloat16)) {
      opmath_scalar_out(name, out, a, b, f);
      return out;
    }
  }
  check_prepared(name, out, ct, {&b}, kind == Out::Bool);
  TensorIter it({&out, &a, &b});
  dispatch<Allowed>(ct, name, [&](auto tag) {
    using T = decltype(tag);
    // Memory-bound: AVX-512 would only cost build time (Note [ISA clones]).
    if constexpr (kind == Out::Bool) binary_loop<bool, T, T, Isa::avx2>(it, f);
    else if constexpr (vec_fmod && std::is_floating_point_v<acc_t<T>>) vector_fmod_loop<T>(it, f);
    else binary_loop<T, T, T, Isa::avx2>(it, f);
  });
  return out;
}

// `kname`: the name torch's dtype refusal quotes, its CPU kernel's ("bitwise_and_cpu" not
// implemented for 'Float'); op_cpu but for a few.
#define EMBER_BINARY_KERNEL_AS(name, kname, allowed, kind, vec, ...)         \
  Tensor& name##_out_kernel(const Tensor& a, const Tensor& b, Tensor& out) { \
    return binary_out<allowed, kind, vec>(kname, out, a, b, __VA_ARGS__);    \
  }                                                                          \
  EMBER_REGISTER_KERNEL(op::name##_out, CPU, name##_out_kernel);
#define EMBER_BINARY_KERNEL_V(name, allowed, kind, vec, ...) \
  EMBER_BINARY_KERNEL_AS(name, #name "_cpu", allowed, kind, vec, __VA_ARGS__)
#define EMBER_BINARY_KERNEL(name, allowed, kind, ...) \
  EMBER_BINARY_KERNEL_V(name, allowed, kind, false, __VA_ARGS__)

EMBER_BINARY_KERNEL(mul, kAllTypes | kComplexTypes, Out::Value, [](auto x, auto y) {
  if constexpr (std::is_same_v<decltype(x), bool>) return x && y;
  else return wrapping_mul(x, y);
})
EMBER_BINARY_KERNEL(true_divide, kFloatTypes | kComplexTypes, Out::Value,
                    [](auto x, auto y) { return x / y; })
EMBER_BINARY_KERNEL(div_trunc, kNumericTypes, Out::Value, [](auto x, auto y) {
  using T = decltype(x);
  if constexpr (is_float_v<T>) return std::trunc(x / y);
  else {
    check_zero_div(y == 0);
    return std::is_signed_v<T> && y == T(-1) ? T(-x) : T(x / y);  // no INT_MIN / -1 trap
  }
})
EMBER_BINARY_KERNEL_AS(floor_divide, "div_floor_cpu", kNumericTypes, Out::Value, false,
                       [](auto x, auto y) {
                         using T = decltype(x);
                         if constexpr (!is_float_v<T>) check_zero_div(y == 0);
                         return floor_div(x, y);
                       })
EMBER_BINARY_KERNEL_V(remainder, kNumericTypes, Out::Value, true, [](auto x, auto y) {
  using T = decltype(x);
  if constexpr (!is_float_v<T>) check_zero_div(y == 0);
  return python_mod(x, y);
})
EMBER_BINARY_KERNEL_V(fmod, kNumericTypes, Out::Value, true, [](auto x, auto y) {
  using T = decltype(x);
  if constexpr (is_float_v<T>) return std::fmod(x, y);
  else {
    check_zero_div(y == 0);
    return std::is_signed_v<T> && y == T(-1) ? T(0) : T(x % y);
  }
})
constexpr auto pow_fn = [](auto x, auto y) {
  using T = decltype(x);
  if constexpr (is_float_v<T>) {
    return std::pow(x, y);
  } else {
    if (y < 0) {
      // Exact for bases 1 and -1; other bases truncate to 0.
      return x == 1 ? T(1) : x == T(-1) ? T((y % 2) ? -1 : 1) : T(0);
    }
    T result = 1, base = x;
    auto e = y;
    while (e) {
      if (e & 1) result = wrapping_mul(result, base);
      e >>= 1;
      base = wrapping_mul(base, base);
    }
    return result;
  }
};
// A floating pow by a 0-d exponent of 2, 3, -1 or -2 (x ** 2 in losses and norms) runs as
// multiplies, as PyTorch's does, instead of a libm pow call per element (same results).
// Calls run<Allowed dtypes>(loop functor) for the exponent's case.
template <class Run>
decltype(auto) with_pow_fn(const Tensor& a, const Tensor& b, Run run) {
  if (b.dim() == 0 && is_floating_point(a.dtype())) {
    const double e = b.item().to_double();
    auto special = [&](auto f) -> decltype(auto) {
      return run.template operator()<kFloatTypes>(f);
    };
    if (e == 2) return special([](auto x, auto) { return x * x; });
    if (e == 3) return special([](auto x, auto) { return x * x * x; });
    if (e == -1) return special([](auto x, auto) { return decltype(x)(1) / x; });
    if (e == -2) return special([](auto x, auto) { return decltype(x)(1) / (x * x); });
  }
  return run.template operator()<kNumericTypes>(pow_fn);
}
Tensor& pow_out_kernel(const Tensor& a, const Tensor& b, Tensor& out) {
  // torch's pow by the number 1 copies the base and by 0 fills ones before it picks a kernel:
  // that is how a bool tensor ** True (or False) stays bool, where no bool kernel exists.
  if (out.dtype() == kBool && b.impl()->is_wrapped_number) {
    if (b.item().to_bool()) return cpu::copy_(out, a);
    return cpu::fill_(out, 1);
  }
  return with_pow_fn(a, b, [&]<uint32_t Allowed>(auto f) -> Tensor& {
    return binary_out<Allowed, Out::Value>("pow", out, a, b, f);
  });
}
EMBER_REGISTER_KERNEL(op::pow_out, CPU, pow_out_kernel);
EMBER_BINARY_KERNEL(atan2, kFloatTypes, Out::Value, [](auto x, auto y) { return std::atan2(x, y); })
EMBER_BINARY_KERNEL(hypot, kFloatTypes, Out::Value, [](auto x, auto y) { return std::hypot(x, y); })
EMBER_BINARY_KERNEL(copysign, kFloatTypes, Out::Value,
                    [](auto x, auto y) { return std::copysign(x, y); })
EMBER_BINARY_KERNEL(minimum, kAllTypes, Out::Value, [](auto x, auto y) {
  if constexpr (is_float_v<decltype(x)>) return (std::isnan(x) || x < y) ? x : y;
  else return x < y ? x : y;
})
EMBER_BINARY_KERNEL(maximum, kAllTypes, Out::Value, [](auto x, auto y) {
  if constexpr (is_float_v<decltype(x)>) return (std::isnan(x) || x > y) ? x : y;
  else return x > y ? x : y;
})
EMBER_BINARY_KERNEL(fmin, kAllTypes, Out::Value, [](auto x, auto y) {
  if constexpr (is_float_v<decltype(x)>) return std::fmin(x, y);
  else return x < y ? x : y;
})
EMBER_BINARY_KERNEL(fmax, kAllTypes, Out::Value, [](auto x, auto y) {
  if constexpr (is_float_v<decltype(x)>) return std::fmax(x, y);
  else return x > y ? x : y;
})
EMBER_BINARY_KERNEL(bitwise_and, kIntBoolTypes, Out::Value, [](auto x, auto y) { return x & y; })
EMBER_BINARY_KERNEL(bitwise_or, kIntBoolTypes, Out::Value, [](auto x, auto y) { return x | y; })
EMBER_BINARY_KERNEL(bitwise_xor, kIntBoolTypes, Out::Value, [](auto x, auto y) { return x ^ y; })
EMBER_BINARY_KERNEL_AS(bitwise_left_shift, "lshift_cpu", kIntTypes, Out::Value, false,
                       [](auto x, auto y) {
                         using T = decltype(x);
                         using U = std::make_unsigned_t<T>;
                         return (y < 0 || y >= T(sizeof(T) * 8)) ? T(0) : T(U(x) << y);
                       })
EMBER_BINARY_KERNEL_AS(bitwise_right_shift, "rshift_cpu", kIntTypes, Out::Value, false,
                       [](auto x, auto y) {
                         using T = decltype(x);
                         if (y < 0 || y >= T(sizeof(T) * 8))
                           return T(std::is_signed_v<T> && x < 0 ? -1 : 0);
                         return T(x >> y);
                       })
EMBER_BINARY_KERNEL(logical_and, kAllTypes, Out::Bool,
                    [](auto x, auto y) { return bool(x) && bool(y); })
EMBER_BINARY_KERNEL(logical_or, kAllTypes, Out::Bool,
                    [](auto x, auto y) { return bool(x) || bool(y); })
EMBER_BINARY_KERNEL(logical_xor, kAllTypes, Out::Bool,
                    [](auto x, auto y) { return bool(x) != bool(y); })
EMBER_BINARY_KERNEL(eq, kAllTypes | kComplexTypes, Out::Bool, [](auto x, auto y) { return x == y; })
EMBER_BINARY_KERNEL(ne, kAllTypes | kComplexTypes, Out::Bool, [](auto x, auto y) { return x != y; })
EMBER_BINARY_KERNEL(lt, kAllTypes, Out::Bool, [](auto x, auto y) { return x < y; })
EMBER_BINARY_KERNEL(le, kAllTypes, Out::Bool, [](auto x, auto y) { return x <= y; })
EMBER_BINARY_KERNEL(gt, kAllTypes, Out::Bool, [](auto x, auto y) { return x > y; })
EMBER_BINARY_KERNEL(ge, kAllTypes, Out::Bool, [](auto x, auto y) { return x >= y; })
#undef EMBER_BINARY_KERNEL
#undef EMBER_BINARY_KERNEL_V
#undef EMBER_BINARY_KERNEL_AS

// add/sub carry alpha: out = a + alpha * b.
template <class T>
using acc = acc_t<T>;

Tensor& add_out_kernel(const Tensor& a, const Tensor& b, const Scalar& alpha, Tensor& out) {
  const ScalarType ct = a.dtype();
  dispatch<kAllTypes | kComplexTypes>(ct, "add", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, bool>) {
      bool al = alpha.to_bool();
      binary_out<kAllTypes, Out::Value>("add", out, a, b,
                                        [al](bool x, bool y) { return x || (al && y); });
    } else {
      acc<T> al = alpha.to<acc<T>>();
      if (alpha.is_integral(true) && alpha.to_long() == 1) {
        binary_out<type_bit(dtype_of<T>), Out::Value>(
            "add", out, a, b, [](auto x, auto y) { return wrapping_add(x, y); });
      } else {
        binary_out<type_bit(dtype_of<T>), Out::Value>("add", out, a, b, [al](auto x, auto y) {
          if constexpr (std::is_integral_v<decltype(y)>)
            return wrapping_add(x, wrapping_mul(decltype(y)(al), y));
          else return x + al * y;
        });
      }
    }
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::add_out, CPU, add_out_kernel);

Tensor& where_into(Tensor& out, const Tensor& cond, const Tensor& a, const Tensor& b) {
  check_prepared("where", out, out.dtype(), {&a, &b}, false);
  EMBER_CHECK(cond.dtype() == kBool, "where: expected a bool condition; got ", cond.dtype());
  TensorIter it({&out, &cond, &a, &b});
  dispatch<kAllTypes>(out.dtype(), "where", [&](auto tag) {
    using T = decltype(tag);
    ternary_loop<T, bool, T, T, Isa::avx2>(it, [](bool m, auto x, auto y) { return m ? x : y; });
  });
  return out;
}
Tensor& where_out_kernel(const Tensor& cond, const Tensor& a, const Tensor& b, Tensor& out) {
  return where_into(out, cond, a, b);
}
EMBER_REGISTER_KERNEL(op::where_out, CPU, where_out_kernel);

// min(max(x, lo), hi) in one pass (vpmaxsb/vpminsb and kin). A bound converts to T as torch's
// does, wrapping (clamp(uint8, -1) is clamp(uint8, 255)); the int64 extremes stand for no bound.
Tensor clamp_int_kernel(const Tensor& self, int64_t lo, int64_t hi) {
  Tensor out = empty_like_inputs(self.sizes(), self.dtype(), {&self});
  TensorIter it({&out, &self});
  dispatch<kIntTypes>(self.dtype(), "clamp", [&](auto tag) {
    using T = decltype(tag);
    using L = std::numeric_limits<T>;
    const T l = lo == std::numeric_limits<int64_t>::min() ? L::min() : T(lo);
    const T h = hi == std::numeric_limits<int64_t>::max() ? L::max() : T(hi);
    unary_loop<T, T>(it, [l, h](auto x) {
      using A = decltype(x);
      const A r = x < A(l) ? A(l) : x;
      return r > A(h) ? A(h) : r;
    });
  });
  return out;
}
EMBER_REGISTER_KERNEL(op::_ember_clamp_int, CPU, clamp_int_kernel);

// torch.lerp as PyTorch's CPU kernels compute it, one rounding per output: below |w| = 0.5 it is
// fma(w, end - self, self), else fma(w - 1, end - self, end). The fused multiply-add is what
// keeps lerp(-2e38, 1.5e36, 300) finite where a rounded product would overflow. A 0-d weight of
// a float16/bfloat16 lerp arrives as float (torch's opmath scalar), so it is not rounded twice.
template <class W>
void lerp_loop(const TensorIter& it, ScalarType dt) {
  dispatch<kFloatTypes>(dt, "lerp_kernel", [&](auto tag) {
    using T = decltype(tag);
    using Wt = std::conditional_t<std::is_same_v<W, void>, T, W>;
    ternary_loop<T, T, T, Wt, Isa::avx2>(it, [](auto s, auto e, auto w) {
      using A = decltype(s);
      const A aw = A(w), d = e - s;
      return std::abs(aw) < A(0.5) ? std::fma(aw, d, s) : std::fma(aw - A(1), d, e);
    });
  });
}

Tensor& lerp_out_kernel(const Tensor& self, const Tensor& end, const Tensor& weight, Tensor& out) {
  TensorIter it({&out, &self, &end, &weight});
  if (weight.dtype() == kFloat && self.dtype() != kFloat) lerp_loop<float>(it, self.dtype());
  else lerp_loop<void>(it, self.dtype());
  return out;
}
EMBER_REGISTER_KERNEL(op::lerp_out, CPU, lerp_out_kernel);

}  // namespace

// Other kernels' where (LAPACK's triangles): a and b of one dtype, cond bool of the shape of a or
// b, broadcast against each other by TensorIter over the larger of the two.
Tensor where(const Tensor& cond, const Tensor& a, const Tensor& b) {
  const Tensor& big = a.numel() >= b.numel() ? a : b;
  Tensor out = empty_like_inputs(big.sizes(), a.dtype(), {&cond, &a, &b});
  return where_into(out, cond, a, b);
}

}  // namespace ember::cpu
