// Elementwise kernels of quantized tensors (schema/quantized.h): add, mul and their fused relu
// forms on the integers, requantized to the output's parameters, bit for bit as torch 2.13's.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
//
// Note [Quantized add and mul]
// torch's x86 kernels (quantized::add, mul and their _relu forms) run a vector body over each
// inner loop's leading blocks of two 256-bit vectors (64 8-bit values, 16 for qint32) when the
// operands are dense or broadcast scalars, and a scalar body on the rest; on a CPU without AVX2 (or
// under ATEN_CPU_CAPABILITY=default) the vector body is the scalar one but for add's
// requantization, round(fma(c, inv, zo)) (fbgemm's). With inv = 1.0f / float(so):
// - add: c = da + db. The vector body dequantizes as fma(s, q, -(s * z))
//   (the product rounded, then one fused rounding) and requantizes as round(c * inv) + zo; the
//   scalar body dequantizes as float(q - z) * s and requantizes as round(c * inv + zo), the
//   zero point added before the rounding (each rounded half to even, then clamped). The two
//   bodies differ at ties (sums of steps often land on them), so the split point matters.
// - mul: in both bodies c = (qa - za) * (qb - zb) in int32, q = clamp(round(float(c) * m) + zo)
//   with m = float(sa) * float(sb) * inv.
// relu (torch's max(c, 0) before requantizing add, max(q, zo) after mul) is the clamp's lower
// bound raised to zo: requantizing is monotonic and maps 0 to zo, so both give the same.
// Each body is one expression per element that GCC vectorizes in the ISA clones (nearbyint is
// vroundps, the clamps vmaxps/vminps, the narrowing vpackus); the tail and strided operands run
// the same expressions in scalar code. The AVX-512 clone is kept (unlike the memory-bound
// binary kernels): with it add and mul of 1M quint8 run as fast as torch's (0.78x with AVX2
// only), the same IEEE operations per element at either width.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "ember/cpu/isa.h"
#include "ember/cpu/loops.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/quantized.h"

namespace ember::cpu {
namespace {

// The output's integer: clamp(round(v * inv) + zo) to [lo, hi] (floats holding integers);
// zp_first: clamp(round(v * inv + zo)), the zero point added before the rounding.
struct Requant {
  float inv, zo, lo, hi;
  int32_t operator()(float v) const { return clamp(std::nearbyint(v * inv) + zo); }
  int32_t zp_first(float v) const { return clamp(std::nearbyint(v * inv + zo)); }
  int32_t fused(float v) const { return clamp(std::nearbyint(std::fma(v, inv, zo))); }
  int32_t clamp(float r) const {
    r = r > lo ? r : lo;
    r = r < hi ? r : hi;
    return int32_t(r);
  }
};

// add: the vector body's dequantize (fused) or the scalar body's.
struct AddVec {
  float sa, pa, sb, pb;  // p = s * -z, rounded
  Requant rq;
  int32_t operator()(int32_t x, int32_t y) const {
    float c = std::fma(sa, float(x), pa) + std::fma(sb, float(y), pb);
    return rq(c);
  }
};
// fused: the baseline tier's vector body (the zero point added in the fused rounding)
struct AddScalar {
  float sa;
  int32_t za;
  float sb;
  int32_t zb;
  bool fused;
  Requant rq;
  int32_t operator()(int32_t x, int32_t y) const {
    float c = float(x - za) * sa + float(y - zb) * sb;
    return fused ? rq.fused(c) : rq.zp_first(c);
  }
};
// mul: one form for both bodies.
struct Mul {
  int32_t za, zb;
  float m;
  Requant rq;
  int32_t operator()(int32_t x, int32_t y) const { return rq(float((x - za) * (y - zb)) * m); }
};

// One inner loop of n elements: the leading blocks through `vec` when the operands are dense or
// broadcast scalars, the rest through `scalar`.
template <class Q, class V, class S>
void run_inner(char** p, const int64_t* s, int64_t n, int64_t block, const V& vec,
               const S& scalar) {
  constexpr int64_t z = sizeof(Q);
  Q* o = reinterpret_cast<Q*>(p[0]);
  const Q* a = reinterpret_cast<const Q*>(p[1]);
  const Q* b = reinterpret_cast<const Q*>(p[2]);
  const bool dense = s[0] == z && (s[1] == z || s[1] == 0) && (s[2] == z || s[2] == 0) &&
                     !(s[1] == 0 && s[2] == 0);
  const int64_t nv = dense ? n - n % block : 0;
  if (nv > 0) {
    with_best_isa([o, a, b, nv, sa = s[1], sb = s[2], &vec] {
      const auto f = [vec](auto x, auto y) { return vec(int32_t(x), int32_t(y)); };
      if (sa == 0)
        dense_loop(
            o, nv, [f, av = *a](auto y) { return f(av, y); }, b);
      else if (sb == 0)
        dense_loop(
            o, nv, [f, bv = *b](auto x) { return f(x, bv); }, a);
      else dense_loop(o, nv, f, a, b);
    });
  }
  for (int64_t i = nv; i < n; ++i) {
    const Q x = *reinterpret_cast<const Q*>(p[1] + i * s[1]);
    const Q y = *reinterpret_cast<const Q*>(p[2] + i * s[2]);
    *reinterpret_cast<Q*>(p[0] + i * s[0]) = Q(scalar(int32_t(x), int32_t(y)));
  }
}

// op 0: add, 1: mul, 2: add then relu, 3: mul then relu (Note [Quantized add and mul]). The
// Python layer broadcasts (expanded operands run strided); the output takes the inputs' layout.
Tensor qbinary_kernel(const Tensor& a, double sa, int64_t za, const Tensor& b, double sb,
                      int64_t zb, int64_t op, double so, int64_t zo, int64_t qmin, int64_t qmax) {
  EMBER_CHECK(a.sizes().equals(b.sizes()) && a.dtype() == b.dtype(),
              "quantized binary op: expected operands of one shape and dtype");
  const ScalarType dt = a.dtype();
  EMBER_CHECK(dt == kByte || dt == kChar || dt == kInt,
              "quantized binary op: expected 8- or 32-bit integers; got ", dt);
  Tensor out = empty_like_inputs(a.sizes(), dt, {&a, &b});
  const bool relu = op >= 2, mul = op % 2 == 1;
  const float inv = 1.0f / float(so);
  Requant rq{inv, float(zo), float(relu ? std::max(zo, qmin) : qmin), float(qmax)};
  // A block is two of torch's AVX2 vectors, AVX-512 CPUs included: torch registers these
  // kernels without an AVX-512 version (REGISTER_DISPATCH, not ALSO_REGISTER_AVX512_DISPATCH),
  // so its AVX2 kernel runs there (seen on a Zen 4: 64-element blocks).
  const int64_t block = 2 * 8 * (dt == kInt ? 1 : 4);
  TensorIter it({&out, &a, &b});
  auto run = [&](auto tag) {
    using Q = decltype(tag);
    if (dt == kInt) {
      // qint32 (scalar body only): the integers need not be exact in float, so the sums run
      // in int64 and the clamp in double
      const double lo = double(relu ? std::max(zo, qmin) : qmin), hi = double(qmax);
      const float fa = float(sa), fb = float(sb), m = fa * fb * inv;
      it.for_each([&](char** p, const int64_t* s, int64_t n) {
        for (int64_t i = 0; i < n; ++i) {
          const int64_t x = *reinterpret_cast<const int32_t*>(p[1] + i * s[1]) - za;
          const int64_t y = *reinterpret_cast<const int32_t*>(p[2] + i * s[2]) - zb;
          // add as the scalar body: the zero point added before the rounding
          double r =
              mul ? double(std::nearbyint(float(x * y) * m)) + double(zo)
                  : double(std::nearbyint((float(x) * fa + float(y) * fb) * inv + float(zo)));
          r = r > lo ? r : lo;
          *reinterpret_cast<int32_t*>(p[0] + i * s[0]) = int32_t(r < hi ? r : hi);
        }
      });
      return;
    }
    if (mul) {
      Requant once = rq;
      once.inv = 1.0f;  // float(c) * m is the one product before the rounding
      const Mul f{int32_t(za), int32_t(zb), float(sa) * float(sb) * inv, once};
      it.for_each(
          [&](char** p, const int64_t* s, int64_t n) { run_inner<Q>(p, s, n, block, f, f); });
      return;
    }
    const float fa = float(sa), fb = float(sb);
    const AddVec vec{fa, fa * -float(za), fb, fb * -float(zb), rq};
    const AddScalar scalar{fa, int32_t(za), fb, int32_t(zb), false, rq};
    AddScalar baseline_vec = scalar;
    baseline_vec.fused = true;
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      if (kBestIsa == Isa::baseline) run_inner<Q>(p, s, n, block, baseline_vec, scalar);
      else run_inner<Q>(p, s, n, block, vec, scalar);
    });
  };
  if (dt == kByte) run(uint8_t{});
  else if (dt == kChar) run(int8_t{});
  else run(int32_t{});
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_ember_qbinary, CPU, qbinary_kernel);

}  // namespace ember::cpu
