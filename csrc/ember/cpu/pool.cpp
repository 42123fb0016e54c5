// CPU pooling over (N, C, H, W) planes, one plane per task. Every pooling window is described
// per dim by its valid input taps (Note [Pool windows]), so one max loop and one mean loop serve
// the fixed and the adaptive forms; the common 2x2, stride-2 max pool has its own branch-free
// loop, which vectorizes (no-trapping-math lets the compiler if-convert the comparisons), and for
// float on AVX-512 CPUs an explicit one.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math")
#include <algorithm>
#include <climits>
#include <cmath>
#include <limits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_POOL_AVX512 1
#endif

#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/layout.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/pool.h"

namespace ember::cpu {

namespace {

// Note [Pool windows]
// Along one dim, output o reads the n[o] input positions begin[o], begin[o] + step, ... (already
// clipped to the input) and, for means, divides by span[o] (the window length counting padding)
// or by the number of taps, as count_include_pad asks. A 2-d window is the product of its
// row and column windows. The taps are computed, not listed, so the loops read no index table.
struct Windows {
  std::vector<int64_t> begin, n, span;
  int64_t step = 1;
  // Sliding windows only (stride 0 marks adaptive ones): output o's window has k taps from
  // o * stride + first before clipping.
  int64_t stride = 0, first = 0, k = 0;
  int64_t size() const { return int64_t(begin.size()); }
  // Room for `count` windows up front: an output size too large to hold fails here, at once,
  // instead of after a loop of `count` steps. The bound is checked, not left to std::bad_alloc:
  // an output dim of 2^40 could never be allocated, and sanitizer runtimes abort on a failed new.
  void reserve(int64_t count) {
    EMBER_CHECK(count <= (int64_t(1) << 40), "pool: expected an output size that fits in ",
                "memory; got ", count);
    begin.reserve(size_t(count));
    n.reserve(size_t(count));
    span.reserve(size_t(count));
  }
  void add(int64_t start, int64_t count, int64_t in, int64_t padded_len) {
    // The taps start + j * step inside [0, in); ceil(-start / step) can't overflow this way.
    const int64_t lo = start >= 0 ? 0 : (-start - 1) / step + 1;
    const int64_t hi = start > in - 1 ? 0 : std::min(count, (in - 1 - start) / step + 1);
    begin.push_back(start + lo * step);
    n.push_back(std::max<int64_t>(0, hi - lo));
    span.push_back(padded_len);
  }
  int64_t count(int64_t o) const { return n[size_t(o)]; }
  int64_t tap(int64_t o, int64_t j) const { return begin[size_t(o)] + j * step; }
};

// Sliding windows: output o starts at o * s - p; a mean's padded span stops at in + p.
Windows sliding(int64_t in, int64_t out, int64_t k, int64_t s, int64_t p, int64_t d) {
  Windows w;
  w.reserve(out);
  w.step = d;
  w.stride = s;
  w.first = -p;
  w.k = k;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * s - p;
    w.add(start, k, in, std::min(start + k, in + p) - start);
  }
  return w;
}

// Adaptive windows: [floor(o * in / out), ceil((o + 1) * in / out)).
Windows adaptive(int64_t in, int64_t out) {
  Windows w;
  w.reserve(out);
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * in / out, end = ((o + 1) * in + out - 1) / out;
    w.add(start, end - start, in, end - start);
  }
  return w;
}

// True when output o reads exactly taps 2o and 2o + 1 for every o (and so OH <= H / 2).
bool is_2x2_stride_2(const Windows& w, int64_t in) {
  if (2 * w.size() > in || w.step != 1) return false;
  for (int64_t o = 0; o < w.size(); ++o)
    if (w.count(o) != 2 || w.tap(o, 0) != 2 * o) return false;
  return true;
}

// Note [Pool rows]
// Along a row of outputs, the windows that lie wholly inside the input (full_columns) start
// `stride` apart and have the same k taps, so tap (a, b) of all of them is one strided read of
// an input row. Sweeping the taps in the generic loop's order, each as a pass over the row's
// outputs with accumulators in a small buffer, gives the generic loop's results bit for bit
// (values, indices, ties, NaNs, summation order) with vector loads across output columns; the
// clipped windows at the row's ends take the generic loop. Strides 1 and 2 are compile-time
// constants so the strided reads become vector loads and shuffles, not gathers.

// The outputs [lo, hi) whose windows are full (none for adaptive windows).
std::pair<int64_t, int64_t> full_columns(const Windows& w) {
  if (w.stride == 0) return {0, 0};
  auto full = [&](int64_t o) { return w.count(o) == w.k && w.tap(o, 0) == w.first + o * w.stride; };
  int64_t lo = 0;
  while (lo < w.size() && !full(lo)) ++lo;
  int64_t hi = lo;
  while (hi < w.size() && full(hi)) ++hi;
  return {lo, hi};
}

// True when the float fast path of Note [Pool rows] serves this pool.
bool row_sweep(const Tensor& x, const Windows& ww) {
  const auto [lo, hi] = full_columns(ww);
  return x.dtype() == kFloat && hi > lo && (ww.stride == 1 || ww.stride == 2) &&
         x.size(2) * x.size(3) <= INT32_MAX;
}

// One tap of max_pool over n full windows: src[i * S] is window i's tap, at flat position
// pos + i * S; max_pool's update rule (a larger value or a NaN replaces; so the last NaN wins).
template <int S>
void max_tap(const float* __restrict src, float* __restrict best, int32_t* __restrict arg,
             int32_t n, int32_t pos) {
  for (int32_t i = 0; i < n; ++i) {
    const float v = src[i * S];
    const bool up = (v > best[i]) | (v != v);
    best[i] = up ? v : best[i];
    arg[i] = up ? pos + i * S : arg[i];
  }
}

// Full windows [lo, lo + n) of output row oh of a plane (Note [Pool rows]); at least one row tap.
template <int S>
void max_row(const float* plane, int64_t W, const Windows& wh, int64_t oh, const Windows& ww,
             int64_t lo, int32_t n, float* best, int32_t* arg) {
  const int64_t col = ww.first + lo * S;
  const int32_t first = int32_t(wh.tap(oh, 0) * W + col);
  for (int32_t i = 0; i < n; ++i) {  // the first tap always takes
    best[i] = plane[first + i * S];
    arg[i] = first + i * S;
  }
  for (int64_t a = 0; a < wh.count(oh); ++a)
    for (int64_t b = a == 0 ? 1 : 0; b < ww.k; ++b) {
      const int32_t pos = int32_t(wh.tap(oh, a) * W + col + b * ww.step);
      max_tap<S>(plane + pos, best, arg, n, pos);
    }
}

// Sums of avg_pool's full windows [lo, lo + n) of output row oh, taps in the generic order.
template <int S>
void sum_row(const float* plane, int64_t W, const Windows& wh, int64_t oh, const Windows& ww,
             int64_t lo, int32_t n, float* __restrict sum) {
  for (int32_t i = 0; i < n; ++i) sum[i] = 0;
  for (int64_t a = 0; a < wh.count(oh); ++a)
    for (int64_t b = 0; b < ww.k; ++b) {
      const float* __restrict src = plane + wh.tap(oh, a) * W + ww.first + lo * S + b * ww.step;
      for (int32_t i = 0; i < n; ++i) sum[i] += src[i * S];
    }
}

// Accumulators: float for 16-bit floats, int64 for integers (means truncate like PyTorch's).
template <class T>
using acc = std::conditional_t<std::is_integral_v<T>, int64_t,
                               std::conditional_t<std::is_same_v<T, double>, double, float>>;

// Planes per parallel task for a loop touching `per_plane` elements of each.
int64_t plane_grain(int64_t per_plane) { return std::max<int64_t>(1, kGrainSize / per_plane); }

// Planes [c0, c1) of max_pool_2x2. The sizes come by value: read through a reference they could
// alias the int64 index stores, which kept the row loop from vectorizing.
template <class T>
void max_pool_2x2_planes(const T* px, T* po, int64_t* pi, int64_t c0, int64_t c1, int64_t H,
                         int64_t W, int64_t OH, int64_t OW) {
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t top = 2 * oh * W;
      const T* r0 = px + c * H * W + top;
      const T* r1 = r0 + W;
      T* o = po + (c * OH + oh) * OW;
      int64_t* oi = pi + (c * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ++ow) {
        // Taps in scan order; `up` is the generic loop's update rule (the last NaN wins).
        const T b = r0[2 * ow + 1], c2 = r1[2 * ow], d = r1[2 * ow + 1];
        T best = r0[2 * ow];
        int64_t arg = top + 2 * ow;
        bool up = (b > best) | (b != b);
        best = up ? b : best;
        arg = up ? top + 2 * ow + 1 : arg;
        up = (c2 > best) | (c2 != c2);
        best = up ? c2 : best;
        arg = up ? top + W + 2 * ow : arg;
        up = (d > best) | (d != d);
        best = up ? d : best;
        arg = up ? top + W + 2 * ow + 1 : arg;
        o[ow] = best;
        oi[ow] = arg;
      }
    }
}

#ifdef EMBER_POOL_AVX512
// max_pool_2x2_planes for float in explicit AVX-512, 16 outputs at a time: the compiler's
// vectorization of the loop above (stride-2 loads, int64 indices) took ~5 ns an output, as long
// as the BatchNorm before it (2 ms for 128 x 32 x 28 x 28 on 2 threads, against ~0.6 here).
// Same scan order and update rule, so the same values, indices, ties and NaNs; indices are
// built in 32 bits, so planes must hold fewer than 2^31 elements.
__attribute__((target("avx512f"))) void max_pool_2x2_planes_avx512(const float* px, float* po,
                                                                   int64_t* pi, int64_t c0,
                                                                   int64_t c1, int64_t H, int64_t W,
                                                                   int64_t OH, int64_t OW) {
  const __m512i even = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30);
  const __m512i one = _mm512_set1_epi32(1), odd = _mm512_add_epi32(even, one);
  const __m512i w0 = _mm512_set1_epi32(int32_t(W)), w1 = _mm512_set1_epi32(int32_t(W + 1));
  for (int64_t c = c0; c < c1; ++c)
    for (int64_t oh = 0; oh < OH; ++oh) {
      const int64_t top = 2 * oh * W;
      const float* r0 = px + c * H * W + top;
      const float* r1 = r0 + W;
      float* o = po + (c * OH + oh) * OW;
      int64_t* oi = pi + (c * OH + oh) * OW;
      for (int64_t ow = 0; ow < OW; ow += 16) {
        const int64_t n = std::min<int64_t>(16, OW - ow);
        // 2n inputs of each row: the low and high 16, masked at the row's end.
        const __mmask16 lo = __mmask16(n >= 8 ? 0xFFFF : (1u << (2 * n)) - 1);
        const __mmask16 hi = __mmask16(n <= 8 ? 0 : (1u << (2 * (n - 8))) - 1);
        const __m512 a0 = _mm512_maskz_loadu_ps(lo, r0 + 2 * ow);
        const __m512 a1 = _mm512_maskz_loadu_ps(hi, r0 + 2 * ow + 16);
        const __m512 b0 = _mm512_maskz_loadu_ps(lo, r1 + 2 * ow);
        const __m512 b1 = _mm512_maskz_loadu_ps(hi, r1 + 2 * ow + 16);
        const __m512 ta = _mm512_permutex2var_ps(a0, even, a1);
        const __m512 tb = _mm512_permutex2var_ps(a0, odd, a1);
        const __m512 tc = _mm512_permutex2var_ps(b0, even, b1);
        const __m512 td = _mm512_permutex2var_ps(b0, odd, b1);
        __m512 best = ta;
        __m512i off = _mm512_setzero_si512();
        __mmask16 up =
            _mm512_cmp_ps_mask(tb, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(tb, tb, _CMP_UNORD_Q);
        best = _mm512_mask_blend_ps(up, best, tb);
        off = _mm512_mask_blend_epi32(up, off, one);
        up = _mm512_cmp_ps_mask(tc, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(tc, tc, _CMP_UNORD_Q);
        best = _mm512_mask_blend_ps(up, best, tc);
        off = _mm512_mask_blend_epi32(up, off, w0);
        up = _mm512_cmp_ps_mask(td, best, _CMP_GT_OQ) | _mm512_cmp_ps_mask(td, td, _CMP_UNORD_Q);
        best = _mm512_mask_blend_ps(up, best, td);
        off = _mm512_mask_blend_epi32(up, off, w1);
        const __mmask16 keep = __mmask16((1u << n) - 1);
        _mm512_mask_storeu_ps(o + ow, keep, best);
        // Lane l's window starts at input column 2 * (ow + l): `even` holds 2 l.
        const __m512i arg =
            _mm512_add_epi32(_mm512_add_epi32(_mm512_set1_epi32(int32_t(top + 2 * ow)), even), off);
        _mm512_mask_storeu_epi64(oi + ow, __mmask8(keep),
                                 _mm512_cvtepi32_epi64(_mm512_castsi512_si256(arg)));
        _mm512_mask_storeu_epi64(oi + ow + 8, __mmask8(keep >> 8),
                                 _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(arg, 1)));
      }
    }
}
#endif

// max_pool on whole 2x2 windows at stride 2 (x contiguous, OH <= H / 2, OW <= W / 2). The taps
// are scanned in the generic loop's order with its update rule, so the values, indices, ties and
// NaNs match it; selects instead of branches let the row loop vectorize.
template <class T>
void max_pool_2x2(const Tensor& x, const Tensor& out, const Tensor& idx) {
  const int64_t planes = x.size(0) * x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = out.size(2), OW = out.size(3);
  const T* px = x.data_ptr<T>();
  T* po = out.data_ptr<T>();
  int64_t* pi = idx.data_ptr<int64_t>();
  parallel_for(0, planes, plane_grain(H * W), [&](int64_t c0, int64_t c1) {
#ifdef EMBER_POOL_AVX512
    if constexpr (std::is_same_v<T, float>) {
      if (kBestIsa == Isa::avx512 && H * W < (int64_t(1) << 31)) {
        max_pool_2x2_planes_avx512(px, po, pi, c0, c1, H, W, OH, OW);
        return;
      }
    }
#endif
    with_best_isa([&] { max_pool_2x2_planes(px, po, pi, c0, c1, H, W, OH, OW); });
  });
}

// Max over each window; the index is the flat (h * W + w) position; ties keep the first.
std::tuple<Tensor, Tensor> max_pool(const Tensor& input, const Windows& wh, const Windows& ww) {
  Tensor x = contiguous(input);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = wh.size(), OW = ww.size();
  Tensor out = empty({N, C, OH, OW}, x.dtype(), x.device());
  Tensor idx = empty({N, C, OH, OW}, kLong, x.device());
  if (out.numel() == 0) return {out, idx};
  if (x.dtype() == kFloat && is_2x2_stride_2(wh, H) && is_2x2_stride_2(ww, W)) {
    max_pool_2x2<float>(x, out, idx);
    return {out, idx};
  }
  const bool rows = row_sweep(x, ww);
  const auto [lo, hi] = full_columns(ww);
  dispatch<kNumericTypes>(x.dtype(), "max_pool2d", [&](auto tag) {
    using T = decltype(tag);
    using A = acc<T>;
    const T* px = x.data_ptr<T>();
    T* po = out.data_ptr<T>();
    int64_t* pi = idx.data_ptr<int64_t>();
    // Output (oh, ow) of a plane: max over its window in scan order.
    auto window = [&](const T* plane, T* o, int64_t* oi, int64_t oh, int64_t ow) {
      // a window wholly in the padding gives -inf for floats, as PyTorch's does
      A best = std::numeric_limits<A>::has_infinity ? -std::numeric_limits<A>::infinity()
                                                    : std::numeric_limits<A>::lowest();
      int64_t arg = -1;
      for (int64_t a = 0; a < wh.count(oh); ++a) {
        const int64_t row = wh.tap(oh, a) * W + ww.tap(ow, 0);
        for (int64_t b = 0; b < ww.count(ow); ++b) {
          const int64_t pos = row + b * ww.step;
          const A v = A(plane[pos]);
          bool nan = false;
          if constexpr (!std::is_integral_v<T>) nan = std::isnan(v);
          // As PyTorch: the last NaN wins. Selects, not a branch: the comparison's outcome
          // is data, and mispredicting it cost more than the window's loads.
          const bool take = (arg < 0) | (v > best) | nan;
          best = take ? v : best;
          arg = take ? pos : arg;
        }
      }
      o[ow] = T(best);
      oi[ow] = arg;
    };
    parallel_for(0, N * C, std::max<int64_t>(1, kGrainSize / (OH * OW * 4)),
                 [&](int64_t c0, int64_t c1) {
                   std::vector<float> best;
                   std::vector<int32_t> arg;
                   if (rows) best.resize(size_t(hi - lo)), arg.resize(size_t(hi - lo));
                   for (int64_t c = c0; c < c1; ++c) {
                     const T* plane = px + c * H * W;
                     for (int64_t oh = 0; oh < OH; ++oh) {
                       T* o = po + (c * OH + oh) * OW;
                       int64_t* oi = pi + (c * OH + oh) * OW;
                       int64_t ow = 0;
                       if constexpr (std::is_same_v<T, float>) {
                         if (rows && wh.count(oh) > 0) {
                           const int32_t n = int32_t(hi - lo);
                           float* b = best.data();
                           int32_t* a = arg.data();
                           with_best_isa([&] {
                             if (ww.stride == 1) max_row<1>(plane, W, wh, oh, ww, lo, n, b, a);
                             else max_row<2>(plane, W, wh, oh, ww, lo, n, b, a);
                             for (int32_t i = 0; i < n; ++i) o[lo + i] = b[i], oi[lo + i] = a[i];
                           });
                           for (; ow < lo; ++ow) window(plane, o, oi, oh, ow);
                           ow = hi;
                         }
                       }
                       for (; ow < OW; ++ow) window(plane, o, oi, oh, ow);
                     }
                   }
                 });
  });
  return {out, idx};
}

// Mean over each window, divided as Note [Pool windows] says (or by divisor_override).
Tensor avg_pool(const Tensor& input, const Windows& wh, const Windows& ww, bool count_pad,
                std::optional<int64_t> divisor) {
  Tensor x = contiguous(input);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = wh.size(), OW = ww.size();
  Tensor out = empty({N, C, OH, OW}, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  const bool rows = row_sweep(x, ww);
  const auto [lo, hi] = full_columns(ww);
  auto divide = [&](int64_t oh, int64_t ow) {
    return divisor     ? *divisor
           : count_pad ? wh.span[size_t(oh)] * ww.span[size_t(ow)]
                       : wh.count(oh) * ww.count(ow);
  };
  dispatch<kNumericTypes>(x.dtype(), "avg_pool2d", [&](auto tag) {
    using T = decltype(tag);
    using A = acc<T>;
    const T* px = x.data_ptr<T>();
    T* po = out.data_ptr<T>();
    // Output (oh, ow) of a plane.
    auto window = [&](const T* plane, T* o, int64_t oh, int64_t ow) {
      A s = 0;
      for (int64_t a = 0; a < wh.count(oh); ++a) {
        const T* row = plane + wh.tap(oh, a) * W + ww.tap(ow, 0);
        for (int64_t b = 0; b < ww.count(ow); ++b) s += A(row[b * ww.step]);
      }
      o[ow] = T(s / A(divide(oh, ow)));
    };
    parallel_for(
        0, N * C, std::max<int64_t>(1, kGrainSize / (OH * OW * 4)), [&](int64_t c0, int64_t c1) {
          std::vector<float> sum(rows ? size_t(hi - lo) : 0);
          for (int64_t c = c0; c < c1; ++c) {
            const T* plane = px + c * H * W;
            for (int64_t oh = 0; oh < OH; ++oh) {
              T* o = po + (c * OH + oh) * OW;
              int64_t ow = 0;
              if constexpr (std::is_same_v<T, float>) {
                if (rows) {
                  const int32_t n = int32_t(hi - lo);
                  const float div = float(divide(oh, lo));  // the same for every full window
                  with_best_isa([&] {
                    if (ww.stride == 1) sum_row<1>(plane, W, wh, oh, ww, lo, n, sum.data());
                    else sum_row<2>(plane, W, wh, oh, ww, lo, n, sum.data());
                    for (int32_t i = 0; i < n; ++i) o[lo + i] = sum[size_t(i)] / div;
                  });
                  for (; ow < lo; ++ow) window(plane, o, oh, ow);
                  ow = hi;
                }
              }
              for (; ow < OW; ++ow) window(plane, o, oh, ow);
            }
          }
        });
  });
  return out;
}

// The adjoint of avg_pool: each output gradient spread evenly over its window.
Tensor avg_pool_backward(const Tensor& grad, IntArrayRef input_size, const Windows& wh,
                         const Windows& ww, bool count_pad, std::optional<int64_t> divisor) {
  Tensor g = contiguous(grad);
  const int64_t H = input_size[2], W = input_size[3], OH = wh.size(), OW = ww.size();
  Tensor gi = zeros(input_size, g.dtype());
  if (gi.numel() == 0 || g.numel() == 0) return gi;
  dispatch<kFloatTypes>(g.dtype(), "avg_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    using A = acc<T>;
    const T* pg = g.data_ptr<T>();
    T* pi = gi.data_ptr<T>();
    parallel_for(0, input_size[0] * input_size[1], std::max<int64_t>(1, kGrainSize / (H * W * 4)),
                 [&](int64_t c0, int64_t c1) {
                   for (int64_t c = c0; c < c1; ++c) {
                     const T* go = pg + c * OH * OW;
                     T* plane = pi + c * H * W;
                     for (int64_t oh = 0; oh < OH; ++oh) {
                       for (int64_t ow = 0; ow < OW; ++ow) {
                         int64_t div = divisor     ? *divisor
                                       : count_pad ? wh.span[size_t(oh)] * ww.span[size_t(ow)]
                                                   : wh.count(oh) * ww.count(ow);
                         const A v = A(go[oh * OW + ow]) / A(div);
                         for (int64_t a = 0; a < wh.count(oh); ++a) {
                           T* row = plane + wh.tap(oh, a) * W + ww.tap(ow, 0);
                           for (int64_t b = 0; b < ww.count(ow); ++b) {
                             T& dst = row[b * ww.step];
                             dst = T(A(dst) + v);
                           }
                         }
                       }
                     }
                   }
                 });
  });
  return gi;
}

// Output size of a sliding pool along one dim (PyTorch's pooling_output_shape).
int64_t pooled(int64_t in, int64_t k, int64_t s, int64_t p, int64_t d, bool ceil_mode) {
  int64_t num = in + 2 * p - d * (k - 1) - 1 + (ceil_mode ? s - 1 : 0);
  int64_t out = (num >= 0 ? num / s : -((-num + s - 1) / s)) + 1;
  if (ceil_mode && (out - 1) * s >= in + p) --out;
  return out;
}

Windows sliding_dim(const Tensor& x, size_t i, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                    IntArrayRef d, bool ceil_mode) {
  const int64_t in = x.size(int64_t(i) + 2);
  return sliding(in, pooled(in, k[i], s[i], p[i], d[i], ceil_mode), k[i], s[i], p[i], d[i]);
}

std::tuple<Tensor, Tensor> max_pool2d_kernel(const Tensor& input, IntArrayRef k, IntArrayRef s,
                                             IntArrayRef p, IntArrayRef d, bool ceil_mode) {
  return max_pool(input, sliding_dim(input, 0, k, s, p, d, ceil_mode),
                  sliding_dim(input, 1, k, s, p, d, ceil_mode));
}

std::tuple<Tensor, Tensor> adaptive_max_pool2d_kernel(const Tensor& input, IntArrayRef size) {
  return max_pool(input, adaptive(input.size(2), size[0]), adaptive(input.size(3), size[1]));
}

// Sums each output gradient into the input position its maximum came from.
Tensor max_pool2d_backward_kernel(const Tensor& grad, const Tensor& indices,
                                  IntArrayRef input_size) {
  Tensor g = contiguous(grad), idx = contiguous(indices);
  const int64_t planes = input_size[0] * input_size[1], HW = input_size[2] * input_size[3];
  const int64_t L = planes ? g.numel() / planes : 0;
  if (HW * planes == 0 || L == 0) return zeros(input_size, g.dtype());
  Tensor gi = empty(input_size, g.dtype(), g.device());
  dispatch<kFloatTypes>(g.dtype(), "max_pool2d_backward", [&](auto tag) {
    using T = decltype(tag);
    const T* pg = g.data_ptr<T>();
    const int64_t* px = idx.data_ptr<int64_t>();
    T* pi = gi.data_ptr<T>();
    // Each plane is zeroed right before its scatter, while it is in cache.
    parallel_for(0, planes, plane_grain(HW + L), [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        std::fill_n(pi + c * HW, HW, T(0));
        for (int64_t j = 0; j < L; ++j) {
          T& dst = pi[c * HW + px[c * L + j]];
          dst = T(acc<T>(dst) + acc<T>(pg[c * L + j]));
        }
      }
    });
  });
  return gi;
}

Tensor avg_pool2d_kernel(const Tensor& input, IntArrayRef k, IntArrayRef s, IntArrayRef p,
                         bool ceil_mode, bool count_pad, std::optional<int64_t> divisor) {
  const DimVector one{1, 1};
  // torch's kernel refuses a bool input even with nothing to pool (its adaptive one does not)
  if (input.numel() == 0) dispatch<kNumericTypes>(input.dtype(), "avg_pool2d", [](auto) {});
  return avg_pool(input, sliding_dim(input, 0, k, s, p, one, ceil_mode),
                  sliding_dim(input, 1, k, s, p, one, ceil_mode), count_pad, divisor);
}

Tensor avg_pool2d_backward_kernel(const Tensor& grad, IntArrayRef input_size, IntArrayRef k,
                                  IntArrayRef s, IntArrayRef p, bool ceil_mode, bool count_pad,
                                  std::optional<int64_t> divisor) {
  auto dim = [&](size_t i) {
    const int64_t in = input_size[i + 2];
    return sliding(in, pooled(in, k[i], s[i], p[i], 1, ceil_mode), k[i], s[i], p[i], 1);
  };
  return avg_pool_backward(grad, input_size, dim(0), dim(1), count_pad, divisor);
}

Tensor adaptive_avg_pool2d_kernel(const Tensor& input, IntArrayRef size) {
  return avg_pool(input, adaptive(input.size(2), size[0]), adaptive(input.size(3), size[1]), false,
                  std::nullopt);
}

Tensor adaptive_avg_pool2d_backward_kernel(const Tensor& grad, IntArrayRef input_size) {
  return avg_pool_backward(grad, input_size, adaptive(input_size[2], grad.size(2)),
                           adaptive(input_size[3], grad.size(3)), false, std::nullopt);
}

// The kernels above in NCHW, with results laid out as Note [Channels-last kernels] says.
template <auto Kernel>
std::tuple<Tensor, Tensor> max_layout(const Tensor& input, auto... args) {
  const MemoryFormat f = spatial_format({&input});
  auto [out, idx] = Kernel(input, args...);
  return {in_format(out, f), in_format(idx, f)};
}
template <auto Kernel>
Tensor avg_layout(const Tensor& input, auto... args) {
  return in_format(Kernel(input, args...), spatial_format({&input}));
}
Tensor max_pool2d_backward_layout(const Tensor& grad, const Tensor& indices,
                                  IntArrayRef input_size) {
  Tensor out = in_format(max_pool2d_backward_kernel(grad, indices, input_size),
                         spatial_format({&indices, &grad}));
  profiler::mark_op("zero_", out);  // torch's row: the gradient zeroed before the scatter
  return out;
}
// A global (1x1) average is a mean in PyTorch, whose input gradient is row-major.
Tensor adaptive_avg_pool2d_backward_layout(const Tensor& grad, IntArrayRef input_size) {
  const bool global = grad.dim() == 4 && grad.size(2) == 1 && grad.size(3) == 1;
  return in_format(adaptive_avg_pool2d_backward_kernel(grad, input_size),
                   global ? MemoryFormat::Contiguous : spatial_format({&grad}));
}

}  // namespace

EMBER_REGISTER_KERNEL(
    op::max_pool2d_with_indices, CPU,
    (max_layout<max_pool2d_kernel, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool>));
EMBER_REGISTER_KERNEL(op::adaptive_max_pool2d, CPU,
                      (max_layout<adaptive_max_pool2d_kernel, IntArrayRef>));
EMBER_REGISTER_KERNEL(op::max_pool2d_backward, CPU, max_pool2d_backward_layout);
EMBER_REGISTER_KERNEL(op::avg_pool2d, CPU,
                      (avg_layout<avg_pool2d_kernel, IntArrayRef, IntArrayRef, IntArrayRef, bool,
                                  bool, std::optional<int64_t>>));
EMBER_REGISTER_KERNEL(op::avg_pool2d_backward, CPU,
                      (avg_layout<avg_pool2d_backward_kernel, IntArrayRef, IntArrayRef, IntArrayRef,
                                  IntArrayRef, bool, bool, std::optional<int64_t>>));
EMBER_REGISTER_KERNEL(op::adaptive_avg_pool2d, CPU,
                      (avg_layout<adaptive_avg_pool2d_kernel, IntArrayRef>));
EMBER_REGISTER_KERNEL(op::adaptive_avg_pool2d_backward, CPU, adaptive_avg_pool2d_backward_layout);

}  // namespace ember::cpu
