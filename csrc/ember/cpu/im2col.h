#pragma once
// im2col / col2im over one contiguous (C, H, W) image, shared by the conv and unfold/fold kernels.
#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ember::cpu {

/// Geometry of a 2-d sliding window: image (C, H, W), kernel, stride, padding, dilation and the
/// output grid (OH, OW). Column matrices are (C * kh * kw, OH * OW), row-major.
struct WindowGeom {
  int64_t C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
  int64_t rows() const { return C * kh * kw; }
  int64_t cols() const { return OH * OW; }
  bool is_pointwise() const {
    return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0;
  }
};

// The output columns [lo, hi) whose input column ow * s + off lies inside [0, W).
inline void valid_range(int64_t off, int64_t s, int64_t W, int64_t OW, int64_t& lo, int64_t& hi) {
  lo = off >= 0 ? 0 : std::min(OW, (-off + s - 1) / s);
  hi = off > W - 1 ? 0 : std::min(OW, (W - 1 - off) / s + 1);
  hi = std::max(hi, lo);
}

/// cols = im2col(x); out-of-image taps read as zero.
template <class T>
void im2col(const T* x, T* cols, const WindowGeom& g) {
  const int64_t L = g.cols();
  for (int64_t c = 0; c < g.C; ++c) {
    const T* plane = x + c * g.H * g.W;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* dst = cols + ((c * g.kh + ki) * g.kw + kj) * L;
        const int64_t off = kj * g.dw - g.pw;
        int64_t lo, hi;
        valid_range(off, g.sw, g.W, g.OW, lo, hi);
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          T* d = dst + oh * g.OW;
          const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
          if (ih < 0 || ih >= g.H) {
            std::fill_n(d, g.OW, T(0));
            continue;
          }
          const T* row = plane + ih * g.W;
          std::fill_n(d, lo, T(0));
          if (g.sw == 1) std::copy(row + lo + off, row + hi + off, d + lo);
          else for (int64_t ow = lo; ow < hi; ++ow) d[ow] = row[ow * g.sw + off];
          std::fill(d + hi, d + g.OW, T(0));
        }
      }
    }
  }
}

/// x += col2im(cols): every column entry is added to the pixel it was read from.
template <class T>
void col2im(const T* cols, T* x, const WindowGeom& g) {
  const int64_t L = g.cols();
  for (int64_t c = 0; c < g.C; ++c) {
    T* plane = x + c * g.H * g.W;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* src = cols + ((c * g.kh + ki) * g.kw + kj) * L;
        const int64_t off = kj * g.dw - g.pw;
        int64_t lo, hi;
        valid_range(off, g.sw, g.W, g.OW, lo, hi);
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          T* row = plane + ih * g.W;
          const T* s = src + oh * g.OW;
          for (int64_t ow = lo; ow < hi; ++ow) {
            T& dst = row[ow * g.sw + off];
            if constexpr (std::is_floating_point_v<T>) dst += s[ow];
            else dst = T(float(dst) + float(s[ow]));  // 16-bit floats add in float
          }
        }
      }
    }
  }
}

}  // namespace ember::cpu
