// Quantize and dequantize (schema/quantized.h): float32 <-> the integers of a quantized tensor,
// per tensor or per channel, bit for bit as torch computes them. See Note [Quantize arithmetic].
//
// Note [Quantize arithmetic]
// torch 2.13 on x86 (measured: tests/python/test_lowp_s11.py compares every case exactly), with
// inv = 1.0f / float(scale) and round = nearbyint (half to even):
// - per tensor, qint8 / quint8:   round(fma(x, inv, zp)), one rounding of x * inv + zp;
// - per tensor qint32 and every per-channel dtype: round(float(x * inv) + float(zp));
// - per tensor quint4x2: round(x * inv) + zp (the zero point after the rounding);
// - per_channel_affine_float_qparams (float zero points): round(x * inv + zp), inv = 1 for a
//   zero scale;
// then a clamp to [qmin, qmax]. Rounding after adding zp matters at ties: 0.5 with zp 3 gives 4.
// NaN gives qmax per tensor (8-bit), 0 per channel (8-bit) and qmin for qint32, as torch's.
// Dequantize: per tensor float(q - zp) * float(scale), q - zp in int32 arithmetic (wrapping for
// qint32 values near the ends, as torch's); per channel float(q) - float(zp) in float,
// times the double scale, rounded to float (for 8-bit values the same as all-double).
// Each loop is one expression per element that GCC vectorizes in the AVX2 and AVX-512 clones of
// with_best_isa (Note [ISA clones]; nearbyint becomes vroundps, the clamp vminps/vmaxps, the
// narrowing vpmovdb); fp-contract=off keeps the unfused form unfused where FMA exists. Large
// tensors split over the thread pool; per-channel tensors whose channels are short runs (the
// last axis, say) run over whole blocks of channels with one parameter per element.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/isa.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/quantized.h"

namespace ember::cpu {
namespace {

template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

ScalarType int_type_for(int64_t qmin, int64_t qmax) {
  if (qmin >= 0 && qmax <= 255) return kByte;
  if (qmin >= -128 && qmax <= 127) return kChar;
  return kInt;
}

// The element maps (Note [Quantize arithmetic]). Clamps are written as selects whose NaN
// result is the one torch gives.
template <class Q>
struct QuantFused {  // per tensor, 8-bit: NaN -> qmax
  float lo, hi;
  Q operator()(float x, float inv, float zp) const {
    float v = std::nearbyint(std::fma(x, inv, zp));
    v = lo > v ? lo : v;
    v = v < hi ? v : hi;
    return Q(int32_t(v));
  }
};
template <class Q>
struct QuantPlain {  // per channel, 8-bit: NaN stays NaN, and converts to 0
  float lo, hi;
  Q operator()(float x, float inv, float zp) const {
    float v = std::nearbyint(x * inv + zp);
    v = lo > v ? lo : v;
    v = hi < v ? hi : v;
    return Q(int32_t(v));
  }
};
struct QuantSplit {  // per tensor, quint4x2: the zero point added after the rounding
  float lo, hi;
  uint8_t operator()(float x, float inv, float zp) const {
    float v = std::nearbyint(x * inv) + zp;
    v = lo > v ? lo : v;
    v = hi < v ? hi : v;
    return uint8_t(int32_t(v));
  }
};
struct QuantInt32 {  // qint32: the clamp in double, where 2^31 - 1 is exact; NaN -> qmin
  double lo, hi;
  int32_t operator()(float x, float inv, float zp) const {
    double v = double(std::nearbyint(x * inv + zp));
    v = lo > v ? lo : v;
    v = hi < v ? hi : v;
    return int32_t(v);
  }
};

// q[i] = f(x[i], a, b) over [0, n), split over the pool, vectorized in each chunk.
// The loops the vectorizer sees. Everything arrives by value: read through a lambda's closure,
// the bounds and parameters could alias the byte stores, and GCC gave up on the loop.
template <class X, class Q, class A, class B, class F>
inline void run_const(const X* __restrict x, Q* __restrict q, int64_t n, A a, B b, F f) {
  for (int64_t i = 0; i < n; ++i) q[i] = f(x[i], a, b);
}
template <class X, class Q, class A, class B, class F>
inline void run_each(const X* __restrict x, Q* __restrict q, int64_t n, const A* __restrict a,
                     const B* __restrict b, F f) {
  for (int64_t i = 0; i < n; ++i) q[i] = f(x[i], a[i], b[i]);
}

// q[i] = f(x[i], a, b) over [0, n), split over the pool, vectorized in each chunk.
// Elements per task: vectorized, these loops take ~0.1 ns an element, so kGrainSize's chunks
// (~3 us) cost less than waking the pool; with it, a 200k-element dequantize at 2 threads on the
// loaded 2-core machine took 0.068 ms against 0.013 on one (the same grain as copy's memcpy).
constexpr int64_t kQuantGrain = kGrainSize * 8;

template <class X, class Q, class A, class B, class F>
void map_const(const X* x, Q* q, int64_t n, A a, B b, F f) {
  parallel_for(0, n, kQuantGrain, [&](int64_t b0, int64_t b1) {
    with_best_isa([&] { run_const(x + b0, q + b0, b1 - b0, a, b, f); });
  });
}

// A tensor [outer, channels, inner] with parameters per channel: rows of one channel when they
// are long enough to vectorize, else blocks of all channels with the parameters repeated per
// element. f(x, a, b) -> Q; A and B are the parameter types.
template <class X, class Q, class A, class B, class F>
void map_channels(const X* x, Q* q, int64_t outer, int64_t channels, int64_t inner, const A* a,
                  const B* b, F f) {
  if (inner >= 16) {
    parallel_for(0, outer * channels, std::max<int64_t>(1, kQuantGrain / inner),
                 [&](int64_t r0, int64_t r1) {
                   with_best_isa([&] {
                     for (int64_t r = r0; r < r1; ++r)
                       run_const(x + r * inner, q + r * inner, inner, a[r % channels],
                                 b[r % channels], f);
                   });
                 });
    return;
  }
  const int64_t block = channels * inner;
  std::vector<A> ae(static_cast<size_t>(block));
  std::vector<B> be(static_cast<size_t>(block));
  for (int64_t i = 0; i < block; ++i) {
    ae[size_t(i)] = a[i / inner];
    be[size_t(i)] = b[i / inner];
  }
  const A* ap = ae.data();
  const B* bp = be.data();
  parallel_for(0, outer, std::max<int64_t>(1, kQuantGrain / std::max<int64_t>(1, block)),
               [&](int64_t o0, int64_t o1) {
                 with_best_isa([&] {
                   for (int64_t o = o0; o < o1; ++o)
                     run_each(x + o * block, q + o * block, block, ap, bp, f);
                 });
               });
}

// Dimensions of a tensor around `axis`: [outer, channels, inner].
void split_at(const Tensor& t, int64_t axis, int64_t channels, int64_t& outer, int64_t& inner) {
  inner = 1;
  for (int64_t d = axis + 1; d < t.dim(); ++d) inner *= t.size(d);
  outer = t.numel() / std::max<int64_t>(1, inner * channels);
}

Tensor quantize_kernel(const Tensor& self_, const Tensor& scales_, const Tensor& zps_, int64_t axis,
                       int64_t qmin, int64_t qmax) {
  EMBER_CHECK(self_.dtype() == kFloat, "quantize: expected a float32 tensor; got ",
              dtype_name(self_.dtype()));
  Tensor self = self_.contiguous();
  Tensor scales = scales_.contiguous(), zps = zps_.contiguous();
  const ScalarType it = int_type_for(qmin, qmax);
  Tensor out = empty(self.sizes(), it);
  const float* x = ptr<float>(self);
  const double* sc = ptr<double>(scales);
  const int64_t n = self.numel(), channels = scales.numel();
  const float lo = float(qmin), hi = float(qmax);
  if (axis < 0) {
    const float inv = 1.0f / float(sc[0]), zp = float(ptr<int64_t>(zps)[0]);
    if (it == kByte && qmax < 255)  // quint4x2
      map_const(x, ptr<uint8_t>(out), n, inv, zp, QuantSplit{lo, hi});
    else if (it == kByte) map_const(x, ptr<uint8_t>(out), n, inv, zp, QuantFused<uint8_t>{lo, hi});
    else if (it == kChar) map_const(x, ptr<int8_t>(out), n, inv, zp, QuantFused<int8_t>{lo, hi});
    else map_const(x, ptr<int32_t>(out), n, inv, zp, QuantInt32{double(qmin), double(qmax)});
    return out;
  }
  int64_t outer = 0, inner = 0;
  split_at(self, axis, channels, outer, inner);
  std::vector<float> inv(static_cast<size_t>(channels)), zp(static_cast<size_t>(channels));
  const bool float_zp = zps.dtype() == kDouble;  // per_channel_affine_float_qparams
  for (int64_t c = 0; c < channels; ++c) {
    const float s = float(sc[c]);
    inv[size_t(c)] = float_zp && s == 0.f ? 1.f : 1.0f / s;
    zp[size_t(c)] = float_zp ? float(ptr<double>(zps)[c]) : float(ptr<int64_t>(zps)[c]);
  }
  auto run = [&](auto* q, const auto& f) {
    map_channels(x, q, outer, channels, inner, inv.data(), zp.data(), f);
  };
  if (it == kByte) run(ptr<uint8_t>(out), QuantPlain<uint8_t>{lo, hi});
  else if (it == kChar) run(ptr<int8_t>(out), QuantPlain<int8_t>{lo, hi});
  else run(ptr<int32_t>(out), QuantInt32{double(qmin), double(qmax)});
  return out;
}

// zero_points may be float (per_channel_affine_float_qparams) or int64.
Tensor dequantize_kernel(const Tensor& self_, const Tensor& scales_, const Tensor& zps_,
                         int64_t axis) {
  Tensor self = self_.contiguous();
  Tensor scales = scales_.contiguous(), zps = zps_.contiguous();
  EMBER_CHECK(self.dtype() == kByte || self.dtype() == kChar || self.dtype() == kInt,
              "dequantize: expected integer values; got ", dtype_name(self.dtype()));
  Tensor out = empty(self.sizes(), kFloat);
  float* y = ptr<float>(out);
  const int64_t n = self.numel(), channels = scales.numel();
  const double* sc = ptr<double>(scales);
  std::vector<float> zpf(size_t(zps.numel()));
  for (int64_t i = 0; i < zps.numel(); ++i)
    zpf[size_t(i)] = zps.dtype() == kDouble  ? float(ptr<double>(zps)[i])
                     : zps.dtype() == kFloat ? ptr<float>(zps)[i]
                                             : float(ptr<int64_t>(zps)[i]);
  auto run = [&](const auto* q) {
    using Q = std::remove_cv_t<std::remove_pointer_t<decltype(q)>>;
    if (axis < 0) {
      // float(q - zp) * scale, q - zp in int32 (wrapping at qint32's ends, as torch's does).
      const uint32_t zp = uint32_t(ptr<int64_t>(zps)[0]);
      const float s = float(sc[0]);
      map_const(q, y, n, zp, s, [](Q v, uint32_t z, float scale) {
        return float(int32_t(uint32_t(int32_t(v)) - z)) * scale;
      });
      return;
    }
    int64_t outer = 0, inner = 0;
    split_at(self, axis, channels, outer, inner);
    if (zps.dtype() == kLong) {
      map_channels(q, y, outer, channels, inner, zpf.data(), sc,
                   [](Q v, float z, double s) { return float(double(float(v) - z) * s); });
    } else {  // float zero points: all in double
      map_channels(q, y, outer, channels, inner, zpf.data(), sc,
                   [](Q v, float z, double s) { return float((double(v) - double(z)) * s); });
    }
  };
  if (self.dtype() == kByte) run(ptr<const uint8_t>(self));
  else if (self.dtype() == kChar) run(ptr<const int8_t>(self));
  else run(ptr<const int32_t>(self));
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_ember_quantize, CPU, quantize_kernel);
EMBER_REGISTER_KERNEL(op::_ember_dequantize, CPU, dequantize_kernel);

}  // namespace ember::cpu
