#pragma once
// im2col / col2im over one contiguous (C, H, W) image, shared by the conv and unfold/fold kernels.
#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ember::cpu {

/// Geometry of a 2-d sliding window: image (C, H, W), kernel, stride, padding, dilation and the
/// output grid (OH, OW). Column matrices are (C * kh * kw, OH * OW), row-major; their rows may lie
/// `ld` elements apart (ld >= OH * OW), so several images can fill one wide column matrix.
struct WindowGeom {
  int64_t C, H, W, kh, kw, sh, sw, ph, pw, dh, dw, OH, OW;
  int64_t rows() const { return C * kh * kw; }
  int64_t cols() const { return OH * OW; }
  /// A 1x1 kernel at unit stride without padding: the column matrix is the image itself.
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && ph == 0 && pw == 0; }
};

// The output columns [lo, hi) whose input column ow * s + off lies inside [0, W).
inline void valid_range(int64_t off, int64_t s, int64_t W, int64_t OW, int64_t& lo, int64_t& hi) {
  // ceil(-off / s) written so that a stride near INT64_MAX can't overflow it
  lo = off >= 0 ? 0 : std::min(OW, (-off - 1) / s + 1);
  hi = off > W - 1 ? 0 : std::min(OW, (W - 1 - off) / s + 1);
  hi = std::max(hi, lo);
}

// One tap's column row when the output grid has the image's width and unit strides: the row is
// the plane shifted by a constant, so it is copied in one run, and the taps that fell off the
// left or right edge (and wrapped to the neighbouring image row) or off the top or bottom are
// then zeroed. The run is clipped to the plane; the clipped entries are edge taps, zeroed too.
template <class T>
void im2col_flat(const T* plane, T* dst, const WindowGeom& g, int64_t ki, int64_t off, int64_t lo,
                 int64_t hi) {
  const int64_t OW = g.OW, top = ki * g.dh - g.ph;
  const int64_t oh0 = std::clamp<int64_t>(-top, 0, g.OH);
  const int64_t oh1 = std::clamp<int64_t>(g.H - top, oh0, g.OH);
  const int64_t shift = top * g.W + off;
  const int64_t b = std::max(oh0 * OW, -shift), e = std::min(oh1 * OW, g.H * g.W - shift);
  std::fill(dst, dst + oh0 * OW, T(0));
  if (e > b) std::copy(plane + b + shift, plane + e + shift, dst + b);
  for (int64_t oh = oh0; oh < oh1; ++oh) {
    std::fill(dst + oh * OW, dst + oh * OW + lo, T(0));
    std::fill(dst + oh * OW + hi, dst + (oh + 1) * OW, T(0));
  }
  std::fill(dst + oh1 * OW, dst + g.OH * OW, T(0));
}

/// cols = im2col(x); out-of-image taps read as zero.
template <class T>
void im2col(const T* x, T* cols, const WindowGeom& g, int64_t ld) {
  for (int64_t c = 0; c < g.C; ++c) {
    const T* plane = x + c * g.H * g.W;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* dst = cols + ((c * g.kh + ki) * g.kw + kj) * ld;
        const int64_t off = kj * g.dw - g.pw;
        int64_t lo, hi;
        valid_range(off, g.sw, g.W, g.OW, lo, hi);
        if (g.sh == 1 && g.sw == 1 && g.OW == g.W) {
          im2col_flat(plane, dst, g, ki, off, lo, hi);
          continue;
        }
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
          else
            for (int64_t ow = lo; ow < hi; ++ow) d[ow] = row[ow * g.sw + off];
          std::fill(d + hi, d + g.OW, T(0));
        }
      }
    }
  }
}

/// x += col2im(cols): every column entry is added to the pixel it was read from.
template <class T>
void col2im(const T* cols, T* x, const WindowGeom& g, int64_t ld) {
  for (int64_t c = 0; c < g.C; ++c) {
    T* plane = x + c * g.H * g.W;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        const T* src = cols + ((c * g.kh + ki) * g.kw + kj) * ld;
        const int64_t off = kj * g.dw - g.pw;
        int64_t lo, hi;
        valid_range(off, g.sw, g.W, g.OW, lo, hi);
        for (int64_t oh = 0; oh < g.OH; ++oh) {
          const int64_t ih = oh * g.sh - g.ph + ki * g.dh;
          if (ih < 0 || ih >= g.H) continue;
          T* row = plane + ih * g.W;
          const T* s = src + oh * g.OW;
          if constexpr (std::is_floating_point_v<T>) {
            if (g.sw == 1) {  // contiguous: the loop vectorizes
              T* d = row + off;
              for (int64_t ow = lo; ow < hi; ++ow) d[ow] += s[ow];
              continue;
            }
          }
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

/// x += col2im(cols) like col2im, overwriting cols: with unit strides and an output grid as wide
/// as the image, each tap's edge entries are zeroed in place so its row adds as one run (the
/// adjoint of im2col_flat; the zeros land on pixels of the neighbouring image row).
template <class T>
void col2im_consuming(T* cols, T* x, const WindowGeom& g, int64_t ld) {
  if (!(g.sh == 1 && g.sw == 1 && g.OW == g.W)) return col2im(cols, x, g, ld);
  const int64_t OW = g.OW;
  for (int64_t c = 0; c < g.C; ++c) {
    T* plane = x + c * g.H * g.W;
    for (int64_t ki = 0; ki < g.kh; ++ki) {
      const int64_t top = ki * g.dh - g.ph;
      const int64_t oh0 = std::clamp<int64_t>(-top, 0, g.OH);
      const int64_t oh1 = std::clamp<int64_t>(g.H - top, oh0, g.OH);
      for (int64_t kj = 0; kj < g.kw; ++kj) {
        T* src = cols + ((c * g.kh + ki) * g.kw + kj) * ld;
        const int64_t off = kj * g.dw - g.pw, shift = top * g.W + off;
        int64_t lo, hi;
        valid_range(off, g.sw, g.W, g.OW, lo, hi);
        for (int64_t oh = oh0; oh < oh1; ++oh) {
          std::fill(src + oh * OW, src + oh * OW + lo, T(0));
          std::fill(src + oh * OW + hi, src + (oh + 1) * OW, T(0));
        }
        const int64_t b = std::max(oh0 * OW, -shift), e = std::min(oh1 * OW, g.H * g.W - shift);
        T* d = plane + shift;
        for (int64_t l = b; l < e; ++l) d[l] += src[l];
      }
    }
  }
}

}  // namespace ember::cpu
