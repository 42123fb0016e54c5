// CPU convolution: one GEMM per chunk of samples and group over the chunk's column matrix, which
// the float32 forward never stores (sgemm computes it panel by panel, Note [Conv panels]) and
// the rest builds by im2col. See Note [Conv chunks] and Note [Conv threading].
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#include <algorithm>
#include <atomic>
#include <memory>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/core/shape.h"
#include "ember/cpu/blas_threads.h"
#include "ember/cpu/conv_chunks.h"
#include "ember/cpu/conv_panels.h"
#include "ember/cpu/conv_routes.h"
#include "ember/cpu/conv_winograd.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/im2col.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/kernels.h"
#include "ember/cpu/layout.h"
#include "ember/cpu/onednn.h"
#include "ember/cpu/sgemm.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/conv.h"

namespace ember::cpu {

namespace {

// Note [Conv chunks]
// A GEMM per sample is small (e.g. 64 x 288 x 196) and spends much of its time packing. A chunk of
// samples is laid out as one column matrix (C*kh*kw, samples * OH*OW), so each chunk is one wide
// GEMM; its output (C_out, samples * OH*OW) is copied out sample by sample. A chunk's column matrix
// is kept near kColumnBytes so it stays in cache between im2col and the GEMM. The weight gradient
// is one GEMM per chunk over the gradient rearranged the same way.
//
// Note [Conv threading]
// The chunks depend only on the shapes, never on the thread count. With at least as many chunks
// as threads, chunks run on ember's pool (Note [BLAS threads]); otherwise chunks run in order and
// each GEMM uses OpenBLAS's (or sgemm's) threads.
// The weight gradient is summed per chunk, then over chunks in order, so the result is the same
// for any thread count.

constexpr int64_t kColumnBytes = int64_t(1) << 21;
constexpr int64_t kMinChunks = 16;

CBLAS_TRANSPOSE flag(bool t) { return t ? CblasTrans : CblasNoTrans; }

// Row-major c (m x n) = op(a) (m x k) @ op(b) (k x n) + beta * c, with leading dims lda, ldb, ldc.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float beta, const float* a,
          int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, flag(ta), flag(tb), int(m), int(n), int(k), 1.0f, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double beta, const double* a,
          int64_t lda, const double* b, int64_t ldb, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, flag(ta), flag(tb), int(m), int(n), int(k), 1.0, a, int(lda), b,
              int(ldb), beta, c, int(ldc));
}

// Samples per chunk: a column matrix near kColumnBytes, and at least kMinChunks chunks when the
// batch allows, so that there is work for every thread.
int64_t chunk_size(int64_t n, const WindowGeom& g, size_t elem) {
  const int64_t per_sample = std::max<int64_t>(1, g.rows() * g.cols() * int64_t(elem));
  const int64_t by_cache = std::max<int64_t>(1, kColumnBytes / per_sample);
  return std::min(by_cache, std::max<int64_t>(1, (n + kMinChunks - 1) / kMinChunks));
}

// Images per forward GEMM when sgemm computes the column matrix (Note [Conv panels]), which is
// then never stored: enough for ~1024 columns, so that the ragged last panel of 64 is a small
// part of the work (a 14 x 14 image alone spent 7% of the time in its 4-column panel), and chunks
// spread evenly over the threads; one image per chunk when it fills that, its product then
// written straight into the output.
int64_t panel_chunk_size(int64_t n, int64_t L) {
  const int64_t grain = std::clamp<int64_t>((1024 + L - 1) / L, 1, n);
  const int64_t chunks = (n + grain - 1) / grain, threads = get_num_threads();
  if (chunks < threads) return grain;  // one chunk after another, each GEMM threaded
  const int64_t even = (chunks + threads - 1) / threads * threads;
  return (n + even - 1) / even;
}

// c = a @ b, b a wide column matrix: the forward and input-gradient GEMMs, in float with sgemm
// where the CPU has it (Note [SGEMM]).
void gemm_wide(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
               int64_t ldb, float* c, int64_t ldc) {
  if (has_sgemm()) sgemm(m, n, k, 1.0f, a, lda, 1, b, ldb, 1, 0.0f, c, ldc);
  else gemm(false, false, m, n, k, 0.0f, a, lda, b, ldb, c, ldc);
}
void gemm_wide(int64_t m, int64_t n, int64_t k, const double* a, int64_t lda, const double* b,
               int64_t ldb, double* c, int64_t ldc) {
  gemm(false, false, m, n, k, 0.0, a, lda, b, ldb, c, ldc);
}

template <class T>
std::unique_ptr<T[]> scratch(int64_t n) {
  return std::unique_ptr<T[]>(new T[size_t(n)]);
}

WindowGeom geom_of(const Tensor& input, const Tensor& weight, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, int64_t OH, int64_t OW) {
  return {input.size(1),
          input.size(2),
          input.size(3),
          weight.size(2),
          weight.size(3),
          stride[0],
          stride[1],
          padding[0],
          padding[1],
          dilation[0],
          dilation[1],
          OH,
          OW};
}

template <class T>
void forward_impl(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                  const Tensor& y, const WindowGeom& g, int64_t groups) {
  const int64_t N = x.size(0), O = w.size(0), Og = O / groups, L = g.cols();
  const int64_t CKg = g.rows() / groups, in_numel = g.C * g.H * g.W;
  const T* px = x.data_ptr<T>();
  const T* pw = w.data_ptr<T>();
  const T* pb = bias ? bias->data_ptr<T>() : nullptr;
  T* py = y.data_ptr<T>();
  // Note [Conv panels]: sgemm computes the column matrix itself; on AVX2 from zero-bordered
  // copies of the images (Note [Padded panels]), whose products have pp.pw columns per row.
  const bool panels = std::is_same_v<T, float> && has_conv_panels();
  const PaddedPlanes pp = std::is_same_v<T, float> && !panels && has_sgemm() && !g.pointwise()
                              ? padded_planes(g)
                              : PaddedPlanes{0, 0, 0};
  const bool padded = pp.pw > 0;
  const int64_t cols = padded ? pp.cols : L, row = padded ? pp.pw : g.OW;
  const int64_t grain = panels || padded ? panel_chunk_size(N, cols) : chunk_size(N, g, sizeof(T));
  for_each_chunk(N, grain, [&](int64_t n0, int64_t n1) {
    const int64_t ld = (n1 - n0) * cols;
    // One image's product goes straight to y; several images' products interleave theirs.
    const bool direct = n1 - n0 == 1 && !padded;
    auto out = direct ? nullptr : scratch<T>(O * ld);
    T* prod = direct ? py + n0 * O * L : out.get();
    if constexpr (std::is_same_v<T, float>) {
      // A single pointwise image is its own column matrix: sgemm packs it as a plain matrix.
      const float* image = px + n0 * in_numel;
      if (panels)
        for (int64_t grp = 0; grp < groups; ++grp) {
          const float* a = pw + grp * Og * CKg;
          if (direct && g.pointwise())
            sgemm(Og, ld, CKg, 1.0f, a, CKg, 1, image + grp * CKg * L, L, 1, 0.0f,
                  prod + grp * Og * ld, ld);
          else
            sgemm(Og, ld, CKg, a, CKg, 1, im2col_panels(image, in_numel, grp * (g.C / groups), g),
                  prod + grp * Og * ld, ld);
        }
    }
    if constexpr (std::is_same_v<T, float>) {
      if (padded) {
        auto buf = scratch<float>((n1 - n0) * g.C * pp.plane);
        pad_images(px + n0 * in_numel, n1 - n0, in_numel, g, pp, buf.get());
        for (int64_t grp = 0; grp < groups; ++grp)
          sgemm(Og, ld, CKg, pw + grp * Og * CKg, CKg, 1,
                padded_panels(buf.get(), grp * (g.C / groups), g, pp), prod + grp * Og * ld, ld);
      }
    }
    if (!panels && !padded) {
      auto cols = scratch<T>(g.rows() * ld);
      for (int64_t n = n0; n < n1; ++n) im2col(px + n * in_numel, cols.get() + (n - n0) * L, g, ld);
      for (int64_t grp = 0; grp < groups; ++grp)
        gemm_wide(Og, ld, CKg, pw + grp * Og * CKg, CKg, cols.get() + grp * CKg * ld, ld,
                  prod + grp * Og * ld, ld);
    }
    for (int64_t n = n0; n < n1; ++n)
      for (int64_t o = 0; o < O; ++o) {
        const T* src = prod + o * ld + (n - n0) * cols;
        T* dst = py + (n * O + o) * L;
        const T b = pb ? pb[o] : T(0);
        for (int64_t oh = 0; oh < g.OH; ++oh)
          for (int64_t ow = 0; ow < g.OW; ++ow) dst[oh * g.OW + ow] = src[oh * row + ow] + b;
      }
  });
}

// Note [Depthwise forward]
// A depthwise convolution (one input and one output channel per group) has a few multiply-adds
// per output and no reduction over channels: it is bound by memory, not by a GEMM, and an im2col
// GEMM per group (ember's kernels, 10.4 ms for 3x3 128 channels at 56 x 56, batch 8, 1 thread)
// or oneDNN's NCHW <-> blocked reorders around its kernel (5.8 ms) cost more than the arithmetic.
// This kernel runs it directly, plane by plane: the plane is copied into a zero-bordered buffer
// (so no tap needs a bounds check and every row is alike), and each output is the sum of its
// taps in tap order (rows, then columns) starting from zero, then the bias. For 3x3, 5x5 and 7x7
// kernels at unit column stride the sum stays in registers, 16 outputs at a time; other kernels
// and strides loop over the taps per output. Planes run on the pool, each on one thread, so
// results do not depend on the thread count. Adding a tap at a time into the output row (and
// bounds-checked edges) measured 5.4 ms; this, 3.1-3.5 ms (torch: 3.9-4.7).
template <class T, int KH, int KW>
void depthwise_row(const T* const* r, const T* t, int64_t dw, int64_t OW, T* row) {
  for (int64_t ow = 0; ow < OW; ++ow) {
    T sum = 0;
#pragma GCC unroll 8
    for (int i = 0; i < KH; ++i)
#pragma GCC unroll 8
      for (int j = 0; j < KW; ++j) sum += t[i * KW + j] * r[i][ow + j * dw];
    row[ow] = sum;
  }
}

// Whether depthwise_row has a register-summed version for this kernel and column stride.
bool depthwise_fast(int64_t kh, int64_t kw, int64_t sw) {
  return sw == 1 && kh == kw && (kh == 3 || kh == 5 || kh == 7);
}

template <class T>
void depthwise_forward(const Tensor& x, const Tensor& w, const std::optional<Tensor>& b,
                       const Tensor& y, IntArrayRef stride, IntArrayRef padding,
                       IntArrayRef dilation) {
  const int64_t C = x.size(1), H = x.size(2), W = x.size(3), OH = y.size(2), OW = y.size(3);
  const int64_t kh = w.size(2), kw = w.size(3), sh = stride[0], sw = stride[1];
  const int64_t ph = padding[0], pw = padding[1], dh = dilation[0], dw = dilation[1];
  const int64_t PH = H + 2 * ph, PW = W + 2 * pw;  // the padded plane
  const T* px = x.data_ptr<T>();
  const T* pk = w.data_ptr<T>();
  const T* pb = b ? b->data_ptr<T>() : nullptr;
  T* py = y.data_ptr<T>();
  const bool fast = depthwise_fast(kh, kw, sw);
  parallel_for(0, y.size(0) * C, 1, [&](int64_t p0, int64_t p1) {
    std::vector<T> buf(size_t(PH * PW), T(0));  // the border stays zero; planes fill the inside
    std::vector<const T*> r(static_cast<size_t>(kh));
    with_best_isa([&] {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t c = p % C;
        const T* plane = px + p * H * W;
        const T* t = pk + c * kh * kw;
        for (int64_t h = 0; h < H; ++h)
          std::copy_n(plane + h * W, W, buf.data() + (h + ph) * PW + pw);
        for (int64_t oh = 0; oh < OH; ++oh) {
          T* row = py + (p * OH + oh) * OW;
          for (int64_t i = 0; i < kh; ++i) r[size_t(i)] = buf.data() + (oh * sh + i * dh) * PW;
          if (fast && kh == 3) depthwise_row<T, 3, 3>(r.data(), t, dw, OW, row);
          else if (fast && kh == 5) depthwise_row<T, 5, 5>(r.data(), t, dw, OW, row);
          else if (fast) depthwise_row<T, 7, 7>(r.data(), t, dw, OW, row);
          else
            for (int64_t ow = 0; ow < OW; ++ow) {
              T sum = 0;
              for (int64_t i = 0; i < kh; ++i)
                for (int64_t j = 0; j < kw; ++j)
                  sum += t[i * kw + j] * r[size_t(i)][ow * sw + j * dw];
              row[ow] = sum;
            }
          if (pb)
            for (int64_t ow = 0; ow < OW; ++ow) row[ow] += pb[c];
        }
      }
    });
  });
}

// Depthwise with one output per channel. The direct kernel runs it unless oneDNN would and
// the kernel has no register-summed interior here (strided columns, other sizes: a tap at a
// time measured about as fast as oneDNN's 5.8 ms above, not faster).
bool is_depthwise(const Tensor& x, const Tensor& w, int64_t groups) {
  return groups > 1 && x.size(1) == groups && w.size(0) == groups && w.size(1) == 1;
}

// Note [Conv on oneDNN]
// float32 convolutions go to oneDNN (Note [oneDNN float32 convolution]) where it measured faster
// than ember's kernels (docs/ARCHITECTURE.md, benchmarks/conv_gemm.py); ember's kernels run the
// rest, and everything in a build without oneDNN, on a CPU without AVX-512, or with
// EMBER_ONEDNN_CONV=0 (_C._set_onednn_conv(False)). The choice depends on the shapes alone, never
// on the thread count, so results do not either. oneDNN runs each chunk of samples on one thread
// and the chunks on ember's pool (Note [Conv threading]); a batch too small to give every thread
// a chunk keeps ember's kernels, whose GEMMs split one image's work over the threads.
constexpr int64_t kOnednnMinBatch = 2;
constexpr int64_t kWgradColumns = 1024;

// Whether this pass runs on Winograd's kernels (Note [Winograd convolution]): the forward and
// weight gradient directly, the input gradient as the turned convolution (input_grad_as_conv),
// which reaches only a padding within the kernel's span.
bool winograd_pass(onednn::ConvPass pass, const Tensor& x, const Tensor& w, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const IntArrayRef kernel = w.sizes().slice(2, size_t(w.dim() - 2));
  if (pass != onednn::ConvPass::input_grad)
    return winograd_applies(x.dtype(), x.size(1), w.size(0), kernel, stride, dilation, groups);
  for (size_t d = 0; d < padding.size() && d < kernel.size(); ++d)
    if (padding[d] > dilation[d] * (kernel[d] - 1)) return false;
  return winograd_applies(x.dtype(), w.size(0), x.size(1), kernel, stride, dilation, groups);
}

}  // namespace

// Measured at 1 thread (CPU time, benchmarks/conv_gemm.py --threads 1 --cpu-time --own), oneDNN
// against ember's kernels: oneDNN won every weight gradient but one (256 -> 256 at 14 x 14 by 6%),
// every depthwise and grouped pass (2-15x), and 3x3 forward and input gradients by 5-20%; ember's
// kernels won the forward of pointwise convolutions (10.2 against 13.9 ms for 256 -> 64 at 56 x
// 56: oneDNN reorders NCHW to its NHWC and back), the forward with one or two input channels (1.6
// against 3.2 ms, Fashion-MNIST's first layer) and the input gradient of convolutions with few
// input channels (1.7 against 9.0 ms there, 3.1 against 11.1 for a 7 x 7 3 -> 64 stem).
// Winograd's kernels came later (session 19) and run fewer multiply-adds: on a Zen 4 they beat
// oneDNN on 3x3 stride-1 passes, forward 12.3 against 18.2 ms (64 -> 64 at 56 x 56), 12.5
// against 17.4 (128 at 28), 7.6 against 9.9 (32 -> 64 at 14, N=128), 15.6 against 16.3 (256 at
// 14), weight gradients 12.2-15.0 against 18.4-21.0, input gradients 12.3-12.9 against 16.8-17.1
// at 64 and 128 channels but 16.5 against 15.6 at 256 (14 x 14), so those passes skip oneDNN.

bool use_onednn(onednn::ConvPass pass, const Tensor& x, const Tensor& w, IntArrayRef stride,
                IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  if (x.dtype() != kFloat || x.size(0) < kOnednnMinBatch || !onednn::conv_enabled() ||
      winograd_pass(pass, x, w, stride, padding, dilation, groups))
    return false;
  const int64_t Cg = w.size(1);
  bool pointwise = true;
  for (int64_t d = 2; d < w.dim(); ++d)
    pointwise = pointwise && w.size(d) == 1 && stride[d - 2] == 1 && padding[d - 2] == 0;
  switch (pass) {
    case onednn::ConvPass::forward:
      return !pointwise && !(groups == 1 && Cg < 3);
    case onednn::ConvPass::input_grad:
      return !(groups == 1 && Cg < 16);
    case onednn::ConvPass::weight_grad:
      return true;
  }
  return false;
}

// One pass over chunks of samples (at least kMinChunks when the batch allows); weight gradients
// are summed per chunk, then over chunks in order. False when oneDNN did not run.
bool onednn_conv(onednn::ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
                 const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
                 IntArrayRef dilation, int64_t groups) {
  const int64_t N = x.size(0), wnumel = w.numel(), L = y.numel() / (y.size(0) * y.size(1));
  int64_t grain = (N + kMinChunks - 1) / kMinChunks;
  // A weight gradient's chunk adds a partial sum of the weight's size: at least ~1024 output
  // positions per chunk keep that small (256 -> 256 at 14 x 14 spent ~10% there with one image
  // per chunk), the samples spread evenly over the chunks.
  if (pass == onednn::ConvPass::weight_grad) {
    const int64_t least = std::max(grain, (kWgradColumns + L - 1) / L);
    const int64_t chunks = (N + least - 1) / least;
    grain = (N + chunks - 1) / chunks;
  }
  const int64_t chunks = (N + grain - 1) / grain;
  const bool sum = pass == onednn::ConvPass::weight_grad && chunks > 1;
  Tensor partial = sum ? empty({chunks * wnumel}, kFloat, w.device()) : Tensor();
  // The chunks' views are made directly, not through narrow/view: they are this kernel's own
  // slicing, which torch's profiler does not show (Note [Profiler rows]).
  auto rows = [](const Tensor& t, int64_t start, int64_t len) {
    DimVector sizes(t.sizes());
    sizes[0] = len;
    return t.as_strided_view(sizes, t.strides(), t.storage_offset() + start * t.stride(0));
  };
  // The weight in oneDNN's layout once for all chunks (forward and input gradient).
  const auto prepared =
      chunks > 1 ? onednn::conv_f32_weight(pass, rows(x, 0, grain), w, rows(y, 0, grain),
                                           bias.has_value(), stride, padding, dilation, groups)
                 : nullptr;
  std::atomic<bool> ok{true};
  // Always on the pool: each chunk is one oneDNN thread, so fewer chunks than threads still
  // run side by side.
  parallel_for(0, N, grain, [&](int64_t n0, int64_t n1) {
    Tensor ws = sum ? partial.as_strided_view(w.sizes(), contiguous_strides(w.sizes()),
                                              (n0 / grain) * wnumel)
                    : w;
    if (ok.load(std::memory_order_relaxed) &&
        !onednn::conv_f32(pass, rows(x, n0, n1 - n0), ws, rows(y, n0, n1 - n0), bias, stride,
                          padding, dilation, groups, prepared))
      ok = false;
  });
  if (!ok) return false;
  if (sum) {
    float* acc = partial.data_ptr<float>();
    for (int64_t c = 1; c < chunks; ++c) {
      const float* p = acc + c * wnumel;
      for (int64_t i = 0; i < wnumel; ++i) acc[i] += p[i];
    }
    std::copy_n(acc, wnumel, w.data_ptr<float>());
  }
  return true;
}

// bf16 convolutions with fewer input channels per group than this run in float32: oneDNN's
// bf16 kernels for them (a first layer on 1-channel images) measured 2-3x slower than ember's
// float32 path.
constexpr int64_t kOnednnMinChannels = 16;

Tensor conv2d_forward_kernel(const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  auto out_size = [&](int64_t d) {
    return (input.size(d + 2) + 2 * padding[d] - dilation[d] * (weight.size(d + 2) - 1) - 1) /
               stride[d] +
           1;
  };
  const int64_t OH = out_size(0), OW = out_size(1);
  Tensor x = contiguous(input), w = contiguous(weight);
  std::optional<Tensor> b;
  if (bias) b = contiguous(*bias);
  Tensor y = empty({input.size(0), weight.size(0), OH, OW}, input.dtype(), input.device());
  if (y.numel() == 0) return y;
  WindowGeom g = geom_of(x, w, stride, padding, dilation, OH, OW);
  if (g.rows() == 0) {  // no input channels: the output is the bias alone
    fill_(y, 0);
    if (b) copy_(y, b->view({1, -1, 1, 1}));  // y = 0 + bias
    return y;
  }
  if (x.dtype() == kBFloat16 && w.size(1) >= kOnednnMinChannels &&  // Note [oneDNN bf16]
      onednn::conv2d_bf16(x, w, b, y, stride, padding, dilation, groups))
    return y;
  if (x.dtype() != kFloat && x.dtype() != kDouble) {  // 16-bit floats: in float32, rounded once
    std::optional<Tensor> bf;
    if (b) bf = b->to(kFloat);
    return conv2d_forward_kernel(x.to(kFloat), w.to(kFloat), bf, stride, padding, dilation, groups)
        .to(x.dtype());
  }
  if (is_depthwise(x, w, groups) &&  // Note [Depthwise forward]
      (depthwise_fast(w.size(2), w.size(3), stride[1]) ||
       !use_onednn(onednn::ConvPass::forward, x, w, stride, padding, dilation, groups))) {
    if (x.dtype() == kFloat) depthwise_forward<float>(x, w, b, y, stride, padding, dilation);
    else depthwise_forward<double>(x, w, b, y, stride, padding, dilation);
    return y;
  }
  if (use_onednn(onednn::ConvPass::forward, x, w, stride, padding, dilation,
                 groups) &&  // Note [Conv on oneDNN]
      onednn_conv(onednn::ConvPass::forward, x, w, y, b, stride, padding, dilation, groups))
    return y;
  if (winograd_applies(x.dtype(), x.size(1), w.size(0), w.sizes().slice(2, size_t(w.dim() - 2)),
                       stride, dilation, groups) &&
      winograd_forward(x, w, b, y, padding))  // Note [Winograd convolution]
    return y;
  if (x.dtype() == kFloat) forward_impl<float>(x, w, b, y, g, groups);
  else forward_impl<double>(x, w, b, y, g, groups);
  return y;
}

namespace {

// dst (count * L, O) = the samples src (count, O, L) transposed, in cache-sized tiles.
template <class T>
void transpose_samples(const T* src, int64_t count, int64_t O, int64_t L, T* dst) {
  constexpr int64_t kTile = 16;
  for (int64_t i = 0; i < count; ++i)
    for (int64_t o0 = 0; o0 < O; o0 += kTile)
      for (int64_t l0 = 0; l0 < L; l0 += kTile)
        for (int64_t o = o0; o < std::min(O, o0 + kTile); ++o)
          for (int64_t l = l0; l < std::min(L, l0 + kTile); ++l)
            dst[(i * L + l) * O + o] = src[(i * O + o) * L + l];
}

// The weight gradient is one GEMM per chunk and group over the chunk's columns. With sgemm
// it is computed transposed, (CKg, Og) = cols (CKg, samples * L) @ grad_output^T, so that the
// wide operand is read along its rows; OpenBLAS computes (Og, CKg) directly.
template <class T>
void backward_impl(const Tensor& go, const Tensor& x, const Tensor& w, const Tensor& gi,
                   const Tensor& gw, const WindowGeom& g, int64_t groups) {
  const int64_t N = x.size(0), O = w.size(0), Og = O / groups, L = g.cols();
  const int64_t CKg = g.rows() / groups, in_numel = g.C * g.H * g.W;
  const T* pg = go.data_ptr<T>();
  const T* px = x.data_ptr<T>();
  const T* pw = w.data_ptr<T>();
  T* pgi = gi.defined() ? gi.data_ptr<T>() : nullptr;
  const int64_t grain = chunk_size(N, g, sizeof(T)), chunks = (N + grain - 1) / grain;
  const int64_t wnumel = O * CKg;
  const bool own = std::is_same_v<T, float> && has_sgemm();
  // Every chunk's GEMM writes its whole slice (beta 0), so the slices start uninitialized.
  auto partial = gw.defined() ? scratch<T>(chunks * wnumel) : nullptr;
  // The weight transposed per group, (CKg, Og), once: the input-gradient GEMMs then read it
  // row-major in place instead of packing it in every chunk.
  std::unique_ptr<T[]> wt;
  if (pgi) {
    wt = scratch<T>(wnumel);
    transpose_samples(pw, groups, Og, CKg, wt.get());
  }
  for_each_chunk(N, grain, [&](int64_t n0, int64_t n1) {
    const int64_t ld = (n1 - n0) * L;
    auto cols = scratch<T>(g.rows() * ld);
    std::unique_ptr<T[]> got;  // grad_output as (O, samples * L)
    if (pgi || !own) {
      got = scratch<T>(O * ld);
      for (int64_t n = n0; n < n1; ++n)
        for (int64_t o = 0; o < O; ++o)
          std::copy_n(pg + (n * O + o) * L, L, got.get() + o * ld + (n - n0) * L);
    }
    if (pgi) {
      for (int64_t grp = 0; grp < groups; ++grp)
        gemm_wide(CKg, ld, Og, wt.get() + grp * CKg * Og, Og, got.get() + grp * Og * ld, ld,
                  cols.get() + grp * CKg * ld, ld);
      for (int64_t n = n0; n < n1; ++n) {
        T* gin = pgi + n * in_numel;
        std::fill_n(gin, in_numel, T(0));
        col2im_consuming(cols.get() + (n - n0) * L, gin, g, ld);
      }
    }
    if (!partial) return;
    for (int64_t n = n0; n < n1; ++n) im2col(px + n * in_numel, cols.get() + (n - n0) * L, g, ld);
    T* acc = partial.get() + (n0 / grain) * wnumel;
    if constexpr (std::is_same_v<T, float>) {
      if (own) {
        // One product per image, grad_output read in place as b transposed (sgemm packs it
        // with 8 x 8 register transposes; a scalar transpose of the chunk took 6% of the
        // Fashion-MNIST CNN's step on AVX2). The images after the first continue each output's
        // FMA chain from c (beta 1), so the sums are those of one product over the chunk.
        for (int64_t grp = 0; grp < groups; ++grp)
          for (int64_t n = n0; n < n1; ++n)
            sgemm(CKg, Og, L, 1.0f, cols.get() + grp * CKg * ld + (n - n0) * L, ld, 1,
                  pg + (n * O + grp * Og) * L, 1, L, n == n0 ? 0.0f : 1.0f, acc + grp * CKg * Og,
                  Og);
        return;
      }
    }
    for (int64_t grp = 0; grp < groups; ++grp)
      gemm(false, true, Og, CKg, ld, T(0), got.get() + grp * Og * ld, ld,
           cols.get() + grp * CKg * ld, ld, acc + grp * Og * CKg, CKg);
  });
  if (!gw.defined()) return;
  for (int64_t c = 1; c < chunks; ++c) {
    const T* p = partial.get() + c * wnumel;
    for (int64_t i = 0; i < wnumel; ++i) partial[size_t(i)] += p[i];
  }
  T* out = gw.data_ptr<T>();
  if (!own) {
    std::copy_n(partial.get(), wnumel, out);
    return;
  }
  for (int64_t grp = 0; grp < groups; ++grp)
    for (int64_t k = 0; k < CKg; ++k)
      for (int64_t o = 0; o < Og; ++o)
        out[(grp * Og + o) * CKg + k] = partial[size_t((grp * CKg + k) * Og + o)];
}

// Note [Input gradient as a convolution]
// With unit strides the input gradient is the convolution of grad_output with the weight turned
// around (input and output channels swapped within each group, taps mirrored), padded by
// dilation * (k - 1) - padding. In float32 that takes the forward's path (Note [Conv panels]),
// which never stores a column matrix, instead of a GEMM into one kh * kw times the input's size
// and col2im's adds back out of it. col2im's share of the work grows as 1 / Og, the turned
// conv's panel packing as 1 / Cg (its output channels): at 2 threads the turn won for 3x3
// 64 -> 64 at 56 x 56 (8.4 -> 6.6 ms) and 1x1 256 -> 64, and lost for 128 -> 128 at 28 x 28 (5.7
// -> 6.2) and for 32 -> 64 at 14 x 14 (the Fashion-MNIST CNN's second conv), hence the bounds.
// On AVX2 the turned conv runs on padded planes (Note [Padded panels]). Measured there within one
// process against col2im, switched per call (1 thread, CPU time, min / 10th percentile of 60-80
// calls each, load ~8): 3x3 64 -> 64 at 56 x 56 30.3 / 32.1 -> 27.0 / 28.8 ms, 1x1 256 -> 64 at
// 56 x 56 16.4 / 17.4 -> 15.2 / 16.7, depthwise 3x3 128 at 56 x 56 21.8 -> 3.5 (the turned conv
// is depthwise too, Note [Depthwise forward]), 3x3 128 -> 128 in 8 groups at 28 x 28 even (7.05
// / 8.9 -> 7.14 / 7.9), 3x3 64 -> 64 at 28 x 28 even; lost at dilation 2 (6.84 -> 7.26: its
// planes drop twice the columns) and for 32 -> 64 at 14 x 14 (14.8 -> 17.0).
constexpr int64_t kMaxTurnedOg = 64;

bool input_grad_as_conv(const Tensor& x, const Tensor& w, IntArrayRef stride, IntArrayRef padding,
                        IntArrayRef dilation, int64_t groups) {
  const int64_t Og = w.size(0) / groups, Cg = w.size(1);
  if (x.dtype() != kFloat) return false;
  for (int d = 0; d < 2; ++d)
    if (stride[d] != 1 || padding[d] > dilation[d] * (w.size(d + 2) - 1)) return false;
  // The turned convolution, from the output's channels to the input's, is Winograd's too: the
  // input gradient of Winograd's shapes wherever winograd_backward's adjoint does not pay.
  if (winograd_pass(onednn::ConvPass::input_grad, x, w, stride, padding, dilation, groups))
    return true;
  if (!has_sgemm() || Og > kMaxTurnedOg || Cg < Og) return false;
  for (int d = 0; d < 2; ++d)
    if (!has_conv_panels() && dilation[d] != 1) return false;
  return true;
}

Tensor input_grad_by_conv(const Tensor& go, const Tensor& w, IntArrayRef padding,
                          IntArrayRef dilation, int64_t groups) {
  const int64_t O = w.size(0), Cg = w.size(1), kh = w.size(2), kw = w.size(3), Og = O / groups;
  const int64_t taps = kh * kw;
  // turned[g * Cg + c][o] = w[g * Og + o][c] with both tap axes mirrored: the taps reversed.
  Tensor turned = empty({groups * Cg, Og, kh, kw}, w.dtype(), w.device());
  const float* src = w.data_ptr<float>();
  float* dst = turned.data_ptr<float>();
  for (int64_t g = 0; g < groups; ++g)
    for (int64_t c = 0; c < Cg; ++c)
      for (int64_t o = 0; o < Og; ++o) {
        const float* s = src + ((g * Og + o) * Cg + c) * taps;
        std::reverse_copy(s, s + taps, dst + ((g * Cg + c) * Og + o) * taps);
      }
  const std::array<int64_t, 2> pad = {dilation[0] * (kh - 1) - padding[0],
                                      dilation[1] * (kw - 1) - padding[1]};
  const std::array<int64_t, 2> unit = {1, 1};
  return conv2d_forward_kernel(go, turned, std::nullopt, unit, pad, dilation, groups);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> convolution_backward_kernel(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  Tensor go = contiguous(grad_output), x = contiguous(input), w = contiguous(weight);
  if (x.dtype() != kFloat && x.dtype() != kDouble) {
    // 16-bit floats in float32, rounded once: oneDNN 2.6's bf16 backward measured 2x slower
    // than this on AVX512-BF16 (Note [oneDNN bf16])
    auto [gi, gw, gb] = convolution_backward_kernel(go.to(kFloat), x.to(kFloat), w.to(kFloat),
                                                    stride, padding, dilation, groups, mask);
    auto back = [&](const Tensor& g) { return g.defined() ? g.to(x.dtype()) : g; };
    return {back(gi), back(gw), back(gb)};
  }
  Tensor gi, gw, gb;
  if (mask[0]) gi = empty(input.sizes(), input.dtype(), input.device());
  if (mask[1]) gw = empty(weight.sizes(), weight.dtype(), weight.device());
  if (mask[2]) gb = sum(go, IntArrayRef{0, 2, 3});
  WindowGeom g = geom_of(x, w, stride, padding, dilation, go.size(2), go.size(3));
  if (go.numel() == 0 || g.rows() == 0 || x.numel() == 0) {
    if (gi.defined()) fill_(gi, 0);
    if (gw.defined()) fill_(gw, 0);
  } else if (mask[0] || mask[1]) {
    Tensor gi_cols = gi;     // the input gradient backward_impl computes, if any
    Tensor gw_cols = gw;     // the weight gradient backward_impl computes, if any
    using onednn::ConvPass;  // Note [Conv on oneDNN]
    if (gi.defined() && use_onednn(ConvPass::input_grad, x, w, stride, padding, dilation, groups) &&
        onednn_conv(ConvPass::input_grad, gi, w, go, std::nullopt, stride, padding, dilation,
                    groups))
      gi_cols = Tensor();
    if (gw.defined() &&
        use_onednn(ConvPass::weight_grad, x, w, stride, padding, dilation, groups) &&
        onednn_conv(ConvPass::weight_grad, x, gw, go, std::nullopt, stride, padding, dilation,
                    groups))
      gw_cols = Tensor();
    if (gw_cols.defined() &&
        winograd_applies(x.dtype(), x.size(1), w.size(0), w.sizes().slice(2, size_t(w.dim() - 2)),
                         stride, dilation, groups)) {  // Note [Winograd convolution]
      const bool adjoint =
          gi_cols.defined() && winograd_adjoint_pays(x.size(1), w.size(0), x.size(2), x.size(3),
                                                     padding, go.size(2), go.size(3));
      if (winograd_backward(go, x, w, adjoint ? gi_cols : Tensor(), gw_cols, padding)) {
        if (adjoint) gi_cols = Tensor();
        gw_cols = Tensor();
      }
    }
    if (gi_cols.defined() && input_grad_as_conv(x, w, stride, padding, dilation, groups)) {
      gi = input_grad_by_conv(go, w, padding, dilation, groups);
      gi_cols = Tensor();
    }
    if (!gi_cols.defined() && !gw_cols.defined()) return {gi, gw, gb};
    if (x.dtype() == kFloat) backward_impl<float>(go, x, w, gi_cols, gw_cols, g, groups);
    else backward_impl<double>(go, x, w, gi_cols, gw_cols, g, groups);
  }
  return {gi, gw, gb};
}

namespace {

// The kernels above in NCHW, with results laid out as Note [Channels-last kernels] says: a
// channels-last input or weight gives a channels-last output, input gradient and weight gradient.
Tensor conv2d_forward_layout(const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  const MemoryFormat f = spatial_format({&input, &weight});
  if (profiler::enabled()) [[unlikely]] {
    // torch's rows inside aten::convolution (Note [Profiler rows]): its float path is oneDNN's,
    // as ember's is (cpu/onednn.cpp).
    const std::nullopt_t none = std::nullopt;
    profiler::OpRange c("_convolution", input, weight, bias, stride, padding, dilation, false, none,
                        groups, false, false, false, false);
    profiler::OpRange m("mkldnn_convolution", input, weight, bias, padding, stride, dilation,
                        groups);
    profiler::mark_op("empty", none, none, none, none, none, none);
    profiler::mark_op("empty", none, none, none, none, none, none);
    Tensor out =
        in_format(conv2d_forward_kernel(input, weight, bias, stride, padding, dilation, groups), f);
    profiler::mark_op("as_strided_", out, none, none, none);
    profiler::mark_op("resize_", out, none, none);
    return out;
  }
  return in_format(conv2d_forward_kernel(input, weight, bias, stride, padding, dilation, groups),
                   f);
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_layout(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  const MemoryFormat f = spatial_format({&input, &weight});
  auto [gi, gw, gb] = convolution_backward_kernel(grad_output, input, weight, stride, padding,
                                                  dilation, groups, mask);
  if (profiler::enabled()) [[unlikely]] {  // torch's rows: each gradient's buffer made and sized
    const std::nullopt_t none = std::nullopt;
    for (const Tensor* g : {&gw, &gb})
      if (g->defined()) {
        profiler::mark_op("empty", none, none, none, none, none, none);
        profiler::mark_op("as_strided_", *g, none, none, none);
        profiler::mark_op("resize_", *g, none, none);
      }
  }
  return {in_format(gi, f), in_format(gw, f), gb};
}

}  // namespace

EMBER_REGISTER_KERNEL(op::conv2d_forward, CPU, conv2d_forward_layout);
EMBER_REGISTER_KERNEL(op::convolution_backward, CPU, convolution_backward_layout);

}  // namespace ember::cpu
