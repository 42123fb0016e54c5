// CPU convolution: per-sample im2col into a reusable buffer + one BLAS GEMM per group.
// See Note [Conv threading].
#include <cblas.h>

#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/im2col.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/ops.h"

namespace ember::cpu {

namespace {

// Note [Conv threading]
// Samples are split into fixed chunks (their count depends on the batch, never on the thread
// count). With at least as many chunks as threads, chunks run on ember's pool and OpenBLAS is held
// to one thread so the two pools never nest; otherwise chunks run in order and each GEMM uses
// OpenBLAS's threads. The weight gradient is summed per chunk, then over chunks in order, so the
// result is the same for any thread count.

constexpr int64_t kMaxChunks = 16;

CBLAS_TRANSPOSE flag(bool t) { return t ? CblasTrans : CblasNoTrans; }

// Row-major c (m x n) = alpha * op(a) (m x k) @ op(b) (k x n) + beta * c; operands contiguous.
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float beta, const float* a,
          const float* b, float* c) {
  cblas_sgemm(CblasRowMajor, flag(ta), flag(tb), int(m), int(n), int(k), 1.0f, a,
              int(ta ? m : k), b, int(tb ? k : n), beta, c, int(n));
}
void gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, double beta, const double* a,
          const double* b, double* c) {
  cblas_dgemm(CblasRowMajor, flag(ta), flag(tb), int(m), int(n), int(k), 1.0, a,
              int(ta ? m : k), b, int(tb ? k : n), beta, c, int(n));
}

int64_t chunk_size(int64_t n) { return std::max<int64_t>(1, (n + kMaxChunks - 1) / kMaxChunks); }

// Runs f(begin, end) over sample chunks as Note [Conv threading] describes.
template <class F>
void for_each_chunk(int64_t n, F&& f) {
  const int64_t grain = chunk_size(n), chunks = (n + grain - 1) / grain;
  const int threads = get_num_threads();
  if (threads > 1 && chunks >= threads && !in_parallel_region()) {
    openblas_set_num_threads(1);
    try {
      parallel_for(0, n, grain, f);
    } catch (...) {
      openblas_set_num_threads(threads);
      throw;
    }
    openblas_set_num_threads(threads);
  } else {
    openblas_set_num_threads(threads);
    for (int64_t b = 0; b < n; b += grain) f(b, std::min(n, b + grain));
  }
}

WindowGeom geom_of(const Tensor& input, const Tensor& weight, IntArrayRef stride,
                   IntArrayRef padding, IntArrayRef dilation, int64_t OH, int64_t OW) {
  return {input.size(1), input.size(2), input.size(3), weight.size(2), weight.size(3),
          stride[0],     stride[1],     padding[0],    padding[1],     dilation[0],
          dilation[1],   OH,            OW};
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
  const bool pointwise = g.is_pointwise();
  for_each_chunk(N, [&](int64_t n0, int64_t n1) {
    std::vector<T> buf(pointwise ? 0 : size_t(g.rows() * L));
    for (int64_t n = n0; n < n1; ++n) {
      const T* xn = px + n * in_numel;
      T* yn = py + n * O * L;
      if (!pointwise) im2col(xn, buf.data(), g);
      const T* cols = pointwise ? xn : buf.data();
      if (pb)
        for (int64_t o = 0; o < O; ++o) std::fill_n(yn + o * L, L, pb[o]);
      for (int64_t grp = 0; grp < groups; ++grp)
        gemm(false, false, Og, L, CKg, pb ? T(1) : T(0), pw + grp * Og * CKg, cols + grp * CKg * L,
             yn + grp * Og * L);
    }
  });
}

Tensor conv2d_forward_kernel(const Tensor& input, const Tensor& weight,
                             const std::optional<Tensor>& bias, IntArrayRef stride,
                             IntArrayRef padding, IntArrayRef dilation, int64_t groups) {
  auto out_size = [&](int64_t d) {
    return (input.size(d + 2) + 2 * padding[d] - dilation[d] * (weight.size(d + 2) - 1) - 1) /
               stride[d] + 1;
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
    return b ? y + view(*b, {1, -1, 1, 1}) : y;
  }
  if (x.dtype() == kFloat) forward_impl<float>(x, w, b, y, g, groups);
  else forward_impl<double>(x, w, b, y, g, groups);
  return y;
}

template <class T>
void backward_impl(const Tensor& go, const Tensor& x, const Tensor& w, const Tensor& gi,
                   const Tensor& gw, const WindowGeom& g, int64_t groups) {
  const int64_t N = x.size(0), O = w.size(0), Og = O / groups, L = g.cols();
  const int64_t CKg = g.rows() / groups, in_numel = g.C * g.H * g.W;
  const T* pg = go.data_ptr<T>();
  const T* px = x.data_ptr<T>();
  const T* pw = w.data_ptr<T>();
  T* pgi = gi.defined() ? gi.data_ptr<T>() : nullptr;
  const int64_t grain = chunk_size(N), chunks = (N + grain - 1) / grain, wnumel = O * CKg;
  std::vector<T> partial(gw.defined() ? size_t(chunks * wnumel) : 0);
  const bool pointwise = g.is_pointwise();
  for_each_chunk(N, [&](int64_t n0, int64_t n1) {
    std::vector<T> buf(pointwise ? 0 : size_t(g.rows() * L));
    T* acc = partial.empty() ? nullptr : partial.data() + (n0 / grain) * wnumel;
    for (int64_t n = n0; n < n1; ++n) {
      const T* gn = pg + n * O * L;
      if (pgi) {
        T* gin = pgi + n * in_numel;
        T* cols = pointwise ? gin : buf.data();
        for (int64_t grp = 0; grp < groups; ++grp)
          gemm(true, false, CKg, L, Og, T(0), pw + grp * Og * CKg, gn + grp * Og * L,
               cols + grp * CKg * L);
        if (!pointwise) {
          std::fill_n(gin, in_numel, T(0));
          col2im(buf.data(), gin, g);
        }
      }
      if (acc) {
        const T* xn = px + n * in_numel;
        if (!pointwise) im2col(xn, buf.data(), g);
        const T* cols = pointwise ? xn : buf.data();
        for (int64_t grp = 0; grp < groups; ++grp)
          gemm(false, true, Og, CKg, L, n == n0 ? T(0) : T(1), gn + grp * Og * L,
               cols + grp * CKg * L, acc + grp * Og * CKg);
      }
    }
  });
  if (!gw.defined()) return;
  T* out = gw.data_ptr<T>();
  std::copy_n(partial.data(), wnumel, out);
  for (int64_t c = 1; c < chunks; ++c) {
    const T* p = partial.data() + c * wnumel;
    for (int64_t i = 0; i < wnumel; ++i) out[i] += p[i];
  }
}

std::tuple<Tensor, Tensor, Tensor> convolution_backward_kernel(
    const Tensor& grad_output, const Tensor& input, const Tensor& weight, IntArrayRef stride,
    IntArrayRef padding, IntArrayRef dilation, int64_t groups, std::array<bool, 3> mask) {
  Tensor go = contiguous(grad_output), x = contiguous(input), w = contiguous(weight);
  Tensor gi, gw, gb;
  if (mask[0]) gi = empty(input.sizes(), input.dtype(), input.device());
  if (mask[1]) gw = empty(weight.sizes(), weight.dtype(), weight.device());
  if (mask[2]) gb = sum(go, {0, 2, 3});
  WindowGeom g = geom_of(x, w, stride, padding, dilation, go.size(2), go.size(3));
  if (go.numel() == 0 || g.rows() == 0 || x.numel() == 0) {
    if (gi.defined()) fill_(gi, 0);
    if (gw.defined()) fill_(gw, 0);
  } else if (mask[0] || mask[1]) {
    if (x.dtype() == kFloat) backward_impl<float>(go, x, w, gi, gw, g, groups);
    else backward_impl<double>(go, x, w, gi, gw, g, groups);
  }
  return {gi, gw, gb};
}

}  // namespace

EMBER_REGISTER_KERNEL("conv2d_forward", CPU, conv2d_forward_kernel);
EMBER_REGISTER_KERNEL("convolution_backward", CPU, convolution_backward_kernel);

}  // namespace ember::cpu
