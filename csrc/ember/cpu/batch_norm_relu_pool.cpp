// Note [Fused BatchNorm, ReLU and max-pool]
// BatchNorm2d (training) -> ReLU -> MaxPool2d(2) is the block of most small CNNs (the
// Fashion-MNIST example's twice). Run op by op, it passes over the full-size activation about ten
// times (statistics, normalize, relu, pool; in backward the pool's scatter, relu's mask and the
// norm's two passes), each pass memory-bound. Here the forward reads the input twice (statistics,
// then normalize + relu + pool of each plane through an L1-sized buffer) and writes only the
// pooled output and one byte per window: the tap that won (0-3), or 4 when the window's maximum is
// <= 0 so relu passes no gradient (relu's mask at the winning tap is the pooled value's sign).
// The backward rebuilds each plane's gradient (the pool's scatter, then relu's mask) into the input
// gradient's storage and runs batch_norm's backward over it, reading it back in place. Every value
// is computed by the same expressions, in the same order, as the separate kernels (batch_norm's
// lanes included), so results are the same bits; nn.Sequential takes this path only where nothing
// could observe the difference (python/ember/nn/modules/_fused_block.py).
// no-tree-loop-distribute-patterns: the short row copies (14-28 floats) stay inline loops; as
// memmove calls they cost as much as the arithmetic.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "no-tree-loop-distribute-patterns")
#include "ember/cpu/batch_norm_relu_pool.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "ember/core/error.h"
#include "ember/core/parallel.h"
#include "ember/cpu/batch_norm_common.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/math.h"

namespace ember::cpu {

namespace {

using namespace bn;

// The input, and each per-channel tensor given (param reads C values of each).
void check_input(const Tensor& x, std::initializer_list<std::optional<Tensor>> per_channel) {
  EMBER_CHECK(x.dtype() == kFloat && x.dim() == 4 && x.is_contiguous() && x.size(2) % 2 == 0 &&
                  x.size(3) % 2 == 0 && x.numel() > 0,
              "batch_norm_relu_max_pool2x2: expected a non-empty contiguous float32 NCHW input "
              "of even height and width");
  for (const std::optional<Tensor>& t : per_channel)
    EMBER_CHECK(!t || t->numel() == x.size(1),
                "batch_norm_relu_max_pool2x2: expected per-channel tensors of ", x.size(1),
                " elements");
}

constexpr uint8_t kNoGrad = 4;

// The plane loops below run over whole planes: rows of 7-14 windows are shorter than a uint8
// vector, and their scalar remainders mispredicted the comparisons. So a plane's rows are also
// kept split by parity (even rows, then odd rows), where window q's top taps are pair q of the
// first half and its bottom taps pair q of the second. The sizes come by value: a uint8 store may
// alias anything read through a reference, which keeps a loop from vectorizing.

// Rows h of `from` (natural order) into `to` split by parity, or back when `split` is false.
inline void parity_rows(const float* __restrict from, float* __restrict to, int64_t H, int64_t W,
                        bool split) {
  for (int64_t h = 0; h < H; ++h) {
    const int64_t parity = (h % 2) * (H / 2) * W + (h / 2) * W;
    const float* __restrict src = from + (split ? h * W : parity);
    float* __restrict dst = to + (split ? parity : h * W);
    for (int64_t w = 0; w < W; ++w) dst[w] = src[w];
  }
}

// One plane: batch_norm_kernel's training map and relu into y, then max_pool's 2x2 windows over
// its parity split yp (taps in scan order and its update rule, a larger value or a NaN replaces,
// as max_pool_2x2_planes in cpu/pool.cpp).
inline void forward_plane(const float* __restrict row, float* __restrict y, float* __restrict yp,
                          float* __restrict o, uint8_t* __restrict sl, int64_t H, int64_t W,
                          float mu, float scale, float shift) {
  for (int64_t j = 0; j < H * W; ++j) y[j] = relu_of(float((row[j] - mu) * scale + shift));
  parity_rows(y, yp, H, W, true);
  const float* __restrict top = yp;
  const float* __restrict bottom = yp + H / 2 * W;
  for (int64_t q = 0; q < H / 2 * (W / 2); ++q) {
    const float t1 = top[2 * q + 1], t2 = bottom[2 * q], t3 = bottom[2 * q + 1];
    float best = top[2 * q];
    int32_t arg = 0;
    bool up = (t1 > best) | (t1 != t1);
    best = up ? t1 : best;
    arg = up ? 1 : arg;
    up = (t2 > best) | (t2 != t2);
    best = up ? t2 : best;
    arg = up ? 2 : arg;
    up = (t3 > best) | (t3 != t3);
    best = up ? t3 : best;
    arg = up ? 3 : arg;
    o[q] = best;
    sl[q] = uint8_t(best <= 0 ? kNoGrad : arg);  // relu_backward's mask at the winner
  }
}

// One plane of relu's input gradient into gr: max_pool2d_backward's scatter (0 + g at the winning
// tap), then relu_backward's mask (the slot says kNoGrad), built in the parity split gp. A window's
// two rows in two loops: as one, the loop did not vectorize.
inline void gradient_plane(const float* __restrict pg, const uint8_t* __restrict ps,
                           float* __restrict gp, float* __restrict gr, int64_t H, int64_t W) {
  const int64_t windows = H / 2 * (W / 2);
  for (int32_t half = 0; half < 2; ++half) {
    float* __restrict r = gp + half * (H / 2) * W;
    const int32_t left = 2 * half, right = 2 * half + 1;
    for (int64_t q = 0; q < windows; ++q) {
      const float v = 0.0f + pg[q];
      const int32_t k = ps[q];
      r[2 * q] = k == left ? v : 0.0f;
      r[2 * q + 1] = k == right ? v : 0.0f;
    }
  }
  parity_rows(gp, gr, H, W, false);
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor, Tensor> batch_norm_relu_max_pool2x2(
    const Tensor& input, OptT weight, OptT bias, OptT running_mean, OptT running_var,
    double momentum, double eps) {
  check_input(input, {weight, bias, running_mean, running_var});
  const Tensor& x = input;
  NCS g(x);
  const int64_t H = x.size(2), W = x.size(3), OH = H / 2, OW = W / 2, count = g.n * g.s;
  std::vector<double> w = param(weight, g.c, 1), b = param(bias, g.c, 0);
  std::vector<double> mean(size_t(g.c)), var(size_t(g.c)), invstd(size_t(g.c));
  Tensor out = empty({g.n, g.c, OH, OW}, kFloat);
  Tensor slots = empty({g.n, g.c, OH, OW}, kByte);
  const float* xp = x.data_ptr<float>();
  float* op = out.data_ptr<float>();
  uint8_t* sp = slots.data_ptr<uint8_t>();
  parallel_for(0, g.c, std::max<int64_t>(1, kGrainSize / count), [&](int64_t c0, int64_t c1) {
    std::vector<float> plane(size_t(2 * g.s));
    with_best_isa([&] {
      float* __restrict y = plane.data();
      for (int64_t c = c0; c < c1; ++c) {
        channel_moments(xp, g, c, mean[size_t(c)], var[size_t(c)]);
        invstd[size_t(c)] = 1 / std::sqrt(var[size_t(c)] + eps);
        // batch_norm_kernel's training map, then relu
        const float scale = float(w[size_t(c)] * invstd[size_t(c)]);
        const float mu = float(mean[size_t(c)]), shift = float(b[size_t(c)]);
        for (int64_t i = 0; i < g.n; ++i) {
          forward_plane(xp + (i * g.c + c) * g.s, y, y + g.s, op + (i * g.c + c) * OH * OW,
                        sp + (i * g.c + c) * OH * OW, H, W, mu, scale, shift);
        }
      }
    });
  });
  update_running(running_mean, running_var, mean, var, count, momentum);
  return {out, slots, from_doubles(mean, kFloat), from_doubles(invstd, kFloat)};
}

std::tuple<Tensor, Tensor, Tensor> batch_norm_relu_max_pool2x2_backward(
    const Tensor& grad, const Tensor& input, const Tensor& slots, OptT weight,
    const Tensor& save_mean, const Tensor& save_invstd) {
  check_input(input, {weight, save_mean, save_invstd});
  const Tensor& x = input;
  NCS g(x);
  const int64_t H = x.size(2), W = x.size(3), OH = H / 2, OW = W / 2;
  auto pooled = [&](const Tensor& t) {
    return t.dim() == 4 && t.size(0) == g.n && t.size(1) == g.c && t.size(2) == OH &&
           t.size(3) == OW;
  };
  EMBER_CHECK(grad.dtype() == kFloat && slots.dtype() == kByte && pooled(grad) && pooled(slots),
              "batch_norm_relu_max_pool2x2_backward: expected float32 gradients and uint8 slots "
              "of the pooled output's shape");
  Tensor gy = contiguous(grad), sl = contiguous(slots);
  const double count = double(g.n * g.s);
  std::vector<double> w = param(weight, g.c, 1), mean = param(save_mean, g.c, 0),
                      invstd = param(save_invstd, g.c, 1);
  std::vector<double> gw(size_t(g.c)), gb(size_t(g.c));
  Tensor gx = empty(x.sizes(), kFloat);
  const float* xp = x.data_ptr<float>();
  const float* gp = gy.data_ptr<float>();
  const uint8_t* sp = sl.data_ptr<uint8_t>();
  float* op = gx.data_ptr<float>();
  parallel_for(0, g.c, std::max<int64_t>(1, kGrainSize / (g.n * g.s)), [&](int64_t c0, int64_t c1) {
    std::vector<float> split(size_t(g.s));
    with_best_isa([&] {
      for (int64_t c = c0; c < c1; ++c) {
        // batch_norm_backward_kernel's expressions over the rebuilt planes. The first pass leaves
        // them in gx, where the second reads them back in place: rebuilding them again cost as
        // much as the pass's arithmetic.
        const double m = mean[size_t(c)], is = invstd[size_t(c)];
        Lanes lg, lgx;
        for (int64_t i = 0; i < g.n; ++i) {
          const int64_t off = (i * g.c + c) * g.s, windows = off / g.s * OH * OW;
          float* __restrict gr = op + off;
          gradient_plane(gp + windows, sp + windows, split.data(), gr, H, W);
          lanes_for(g.s, [&](int l, int64_t j) {
            const double gv = double(gr[j]);
            lg.v[l] += gv;
            lgx.v[l] += gv * (double(xp[off + j]) - m);
          });
        }
        const double sg = lg.total(), sgx = lgx.total();
        gb[size_t(c)] = sg;
        gw[size_t(c)] = sgx * is;
        const float scale = float(w[size_t(c)] * is);
        const float k1 = float(sg / count), k2 = float(sgx / count * is * is), am = float(m);
        for (int64_t i = 0; i < g.n; ++i) {
          float* __restrict gr = op + (i * g.c + c) * g.s;
          const float* __restrict xr = xp + (i * g.c + c) * g.s;
          for (int64_t j = 0; j < g.s; ++j) gr[j] = float((gr[j] - k1 - (xr[j] - am) * k2) * scale);
        }
      }
    });
  });
  ScalarType pt = weight ? weight->dtype() : kFloat;
  return {gx, from_doubles(gw, pt), from_doubles(gb, pt)};
}

}  // namespace ember::cpu
