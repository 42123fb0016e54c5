// CPU im2col / col2im over batched input (unfold / fold and their derivatives).
#include "ember/schema/spatial.h"
#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/im2col.h"
#include "ember/dispatch/dispatcher.h"

namespace ember::cpu {

namespace {

// image (N, C, H, W) <-> columns (N, C * kh * kw, OH * OW), one sample per task.
Tensor im2col_kernel(const Tensor& input, IntArrayRef, IntArrayRef k, IntArrayRef d, IntArrayRef p,
                     IntArrayRef s) {
  Tensor x = contiguous(input);
  const int64_t N = x.size(0), C = x.size(1), H = x.size(2), W = x.size(3);
  const int64_t OH = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  const int64_t OW = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  WindowGeom g{C, H, W, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], OH, OW};
  Tensor out = empty({N, g.rows(), g.cols()}, x.dtype(), x.device());
  if (out.numel() == 0) return out;
  dispatch<kFloatTypes>(x.dtype(), "im2col", [&](auto tag) {
    using T = decltype(tag);
    const T* px = x.data_ptr<T>();
    T* po = out.data_ptr<T>();
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / (g.rows() * g.cols())),
                 [&](int64_t n0, int64_t n1) {
                   for (int64_t n = n0; n < n1; ++n)
                     im2col(px + n * C * H * W, po + n * g.rows() * g.cols(), g, g.cols());
                 });
  });
  return out;
}

Tensor col2im_kernel(const Tensor& input, IntArrayRef size, IntArrayRef k, IntArrayRef d,
                     IntArrayRef p, IntArrayRef s) {
  Tensor cols = contiguous(input);
  const int64_t N = cols.size(0), C = cols.size(1) / (k[0] * k[1]), H = size[0], W = size[1];
  const int64_t OH = (H + 2 * p[0] - d[0] * (k[0] - 1) - 1) / s[0] + 1;
  const int64_t OW = (W + 2 * p[1] - d[1] * (k[1] - 1) - 1) / s[1] + 1;
  WindowGeom g{C, H, W, k[0], k[1], s[0], s[1], p[0], p[1], d[0], d[1], OH, OW};
  Tensor out = zeros({N, C, H, W}, cols.dtype());
  if (out.numel() == 0 || cols.numel() == 0) return out;
  dispatch<kFloatTypes>(cols.dtype(), "col2im", [&](auto tag) {
    using T = decltype(tag);
    const T* pc = cols.data_ptr<T>();
    T* po = out.data_ptr<T>();
    parallel_for(0, N, std::max<int64_t>(1, kGrainSize / (g.rows() * g.cols())),
                 [&](int64_t n0, int64_t n1) {
                   for (int64_t n = n0; n < n1; ++n)
                     col2im(pc + n * g.rows() * g.cols(), po + n * C * H * W, g, g.cols());
                 });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::im2col, CPU, im2col_kernel);
EMBER_REGISTER_KERNEL(op::col2im, CPU, col2im_kernel);

}  // namespace ember::cpu
