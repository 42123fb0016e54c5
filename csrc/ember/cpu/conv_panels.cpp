// im2col into sgemm's packed panels (Note [Conv panels]).
#include "ember/cpu/conv_panels.h"

#include <algorithm>

#include "ember/cpu/isa.h"

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBER_CONV_PANELS 1
#endif

namespace ember::cpu {

#ifdef EMBER_CONV_PANELS

namespace {

// Lanes [lo, hi) of 16, none when hi <= lo.
[[gnu::always_inline]] inline __mmask16 lane_range(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 16);
  hi = std::clamp<int64_t>(hi, 0, 16);
  if (hi <= lo) return 0;
  return __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// The panel's columns, cut where an output row (or an image) ends.
struct Run {
  int64_t off, count;     // columns [off, off + count) of the panel
  int64_t image, oh, ow;  // where the first one is
};

__attribute__((target("avx512f"))) void pack(const float* x, int64_t image_stride, int64_t c0,
                                             const WindowGeom& g, int64_t p0, int64_t kc,
                                             int64_t j0, int64_t w, float* dst) {
  const int64_t ldp = (w + 15) / 16 * 16, L = g.OH * g.OW, taps = g.kh * g.kw;
  // A pointwise conv reads each image's pixels in order: its runs cross output rows.
  const bool flat = g.pointwise();
  Run runs[64];
  int64_t nruns = 0;
  for (int64_t j = j0; j < j0 + w;) {
    const int64_t image = j / L, l = j % L, oh = l / g.OW, ow = l % g.OW;
    const int64_t count = std::min(flat ? L - l : g.OW - ow, j0 + w - j);
    runs[nruns++] = {j - j0, count, image, oh, ow};
    j += count;
  }
  // Row p is tap (ki, kj) of channel c, stepped rather than divided out (a 64-bit division per
  // row cost as much as the copies).
  int64_t c = c0 + p0 / taps, ki = p0 % taps / g.kw, kj = p0 % g.kw;
  for (int64_t p = p0; p < p0 + kc; ++p) {
    float* d = dst + (p - p0) * ldp;
    for (int64_t r = 0; r < nruns; ++r) {
      const Run& run = runs[r];
      float* o = d + run.off;
      const int64_t ih = run.oh * g.sh - g.ph + ki * g.dh;
      if (ih < 0 || ih >= g.H) {
        for (int64_t t = 0; t < run.count; t += 16)
          _mm512_mask_storeu_ps(o + t, lane_range(0, run.count - t), _mm512_setzero_ps());
        continue;
      }
      const float* row = x + run.image * image_stride + (c * g.H + ih) * g.W;
      const int64_t iw0 = run.ow * g.sw - g.pw + kj * g.dw;
      if (g.sw == 1) {
        // Lanes outside [0, W) are masked off: not read (a masked load never faults), stored 0.
        const int64_t end = flat ? iw0 + run.count : g.W;
        for (int64_t t = 0; t < run.count; t += 16) {
          const int64_t iw = iw0 + t;
          const __m512 v = _mm512_maskz_loadu_ps(lane_range(-iw, end - iw), row + iw);
          _mm512_mask_storeu_ps(o + t, lane_range(0, run.count - t), v);
        }
      } else {
        for (int64_t t = 0; t < run.count; ++t) {
          const int64_t iw = iw0 + t * g.sw;
          o[t] = iw >= 0 && iw < g.W ? row[iw] : 0.0f;
        }
      }
    }
    std::fill(d + w, d + ldp, 0.0f);
    if (++kj == g.kw) {
      kj = 0;
      if (++ki == g.kh) ki = 0, ++c;
    }
  }
}

}  // namespace

PackB im2col_panels(const float* x, int64_t image_stride, int64_t c0, const WindowGeom& g) {
  return [=](int64_t p0, int64_t kc, int64_t j0, int64_t w, float* dst) {
    pack(x, image_stride, c0, g, p0, kc, j0, w, dst);
  };
}

bool has_conv_panels() { return kBestIsa == Isa::avx512 && has_sgemm(); }

#else

PackB im2col_panels(const float*, int64_t, int64_t, const WindowGeom&) { return {}; }
bool has_conv_panels() { return false; }

#endif

}  // namespace ember::cpu
