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

namespace {

// dst[0, n) = src[0, n), 8 floats at a time: a panel's runs are 14 to 64 floats, too short
// for memmove's call to pay.
__attribute__((target("avx2"))) void copy_run(const float* src, int64_t n, float* dst) {
  int64_t t = 0;
  for (; t + 8 <= n; t += 8) _mm256_storeu_ps(dst + t, _mm256_loadu_ps(src + t));
  for (; t < n; ++t) dst[t] = src[t];
}

void pack_padded(const float* buf, int64_t c0, const WindowGeom& g, const PaddedPlanes& pp,
                 int64_t p0, int64_t kc, int64_t j0, int64_t w, float* dst) {
  const int64_t ldp = (w + 15) / 16 * 16, taps = g.kh * g.kw, image = g.C * pp.plane;
  struct Span {
    int64_t off, count;  // columns [off, off + count) of the panel
    const float* src;    // tap (0, 0) of channel 0 under the first one
  };
  Span spans[64];
  int64_t nspans = 0;
  for (int64_t j = j0; j < j0 + w;) {
    const int64_t s = j / pp.cols, q = j % pp.cols, count = std::min(pp.cols - q, j0 + w - j);
    spans[nspans++] = {j - j0, count, buf + s * image + q};
    j += count;
  }
  int64_t c = c0 + p0 / taps, ki = p0 % taps / g.kw, kj = p0 % g.kw;
  for (int64_t p = p0; p < p0 + kc; ++p) {
    float* d = dst + (p - p0) * ldp;
    const int64_t off = c * pp.plane + ki * g.dh * pp.pw + kj * g.dw;
    for (int64_t r = 0; r < nspans; ++r)
      copy_run(spans[r].src + off, spans[r].count, d + spans[r].off);
    std::fill(d + w, d + ldp, 0.0f);
    if (++kj == g.kw) {
      kj = 0;
      if (++ki == g.kh) ki = 0, ++c;
    }
  }
}

}  // namespace

PaddedPlanes padded_planes(const WindowGeom& g) {
  // Padding past the kernel's reach makes the output row wider than W + pw: rows of OW then.
  const int64_t pw = std::max(g.W + g.pw, g.OW);
  if (g.sh != 1 || g.sw != 1 || g.OW <= 0 || 4 * (pw - g.OW) > g.OW) return {0, 0, 0};
  return {pw, (g.H + 2 * g.ph) * pw + std::max(g.pw, (g.kw - 1) * g.dw), g.OH * pw};
}

void pad_images(const float* x, int64_t count, int64_t image_stride, const WindowGeom& g,
                const PaddedPlanes& pp, float* buf) {
  std::fill(buf, buf + count * g.C * pp.plane, 0.0f);
  for (int64_t s = 0; s < count; ++s)
    for (int64_t c = 0; c < g.C; ++c) {
      const float* src = x + s * image_stride + c * g.H * g.W;
      float* plane = buf + (s * g.C + c) * pp.plane + g.ph * pp.pw + g.pw;
      for (int64_t h = 0; h < g.H; ++h) std::copy_n(src + h * g.W, g.W, plane + h * pp.pw);
    }
}

PackB padded_panels(const float* buf, int64_t c0, const WindowGeom& g, const PaddedPlanes& pp) {
  return [=](int64_t p0, int64_t kc, int64_t j0, int64_t w, float* dst) {
    pack_padded(buf, c0, g, pp, p0, kc, j0, w, dst);
  };
}

#else

PaddedPlanes padded_planes(const WindowGeom&) { return {0, 0, 0}; }
void pad_images(const float*, int64_t, int64_t, const WindowGeom&, const PaddedPlanes&, float*) {}
PackB padded_panels(const float*, int64_t, const WindowGeom&, const PaddedPlanes&) { return {}; }

PackB im2col_panels(const float*, int64_t, int64_t, const WindowGeom&) { return {}; }
bool has_conv_panels() { return false; }

#endif

}  // namespace ember::cpu
