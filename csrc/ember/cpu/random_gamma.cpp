// The gamma family's CPU kernels as torch draws them (Note [torch's gamma draws]).
//
// Note [torch's gamma draws]
// torch samples Gamma(alpha, 1) per element in row-major order by Marsaglia and Tsang's method
// over double uniforms and its cached Box-Muller normals: for alpha < 1 first one uniform u and
// the factor (1 - u)^(1/alpha), alpha raised by one; then per try normals until 1 + c x > 0 and
// one uniform. The constants are float literals (d = alpha - 1/3 takes float's 1/3, the squeeze
// test float's 0.0331), and for a float tensor alpha + 1 and alpha - 1/3 round in float, so both
// are kept here. Draws clamp to the dtype's smallest normal. _sample_dirichlet draws the same
// way from alpha widened to double, then divides by the row sums in double. The gradients are
// torch's approximations (gamma_grad.cpp).
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "ember/core/generator.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/random_draw.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/random.h"

namespace ember::cpu {

namespace {

// torch's gamma kernels take float and double only.
constexpr uint32_t kGammaTypes = type_bit(kFloat) | type_bit(kDouble);

// S is the type alpha is held in (the tensor's, or double for Dirichlet); the rest is double.
template <class S>
double sample_gamma(S alpha, Generator& g) {
  // torch loops forever on these; no draw makes them meaningful
  if (std::isnan(alpha) || alpha < 0) return std::numeric_limits<double>::quiet_NaN();
  double scale = 1.0;
  if (alpha < S(1)) {
    if (alpha == S(0)) return 0.0;
    scale *= std::pow(1 - unit_double(g), double(S(1) / alpha));
    alpha += S(1);
  }
  const double d = double(alpha - S(1.0f / 3.0f));
  const double c = 1.0 / std::sqrt(9.0 * d);
  const double squeeze = double(0.0331f);
  while (true) {
    double x, y;
    do {
      x = standard_normal(g);
      y = 1.0 + c * x;
    } while (y <= 0);
    const double v = y * y * y, u = 1 - unit_double(g), xx = x * x;
    if (u < 1.0 - squeeze * xx * xx) return scale * d * v;
    if (std::log(u) < 0.5 * xx + d * (1.0 - v + std::log(v))) return scale * d * v;
  }
}

// Note [torch's double row sum]
// torch sums a contiguous double row as 4 lanes (element i in lane i % 4, on every CPU tier),
// the tail past the last full 4 first and then the lanes in order. Each lane is summed as 4
// interleaved partial sums (its tail into the first), each accumulated in levels of 2^p
// elements (p = max(4, ceil(log2 n) / 4)) that carry into the next level when full, so that only
// sums of similar size meet. `_sample_dirichlet` normalizes by this sum.
// x[0], x[stride], ... x[(n - 1) stride] summed in carrying levels.
double cascade_sum(const double* x, int64_t stride, int64_t n) {
  constexpr int kLevels = 4;
  const int64_t ceil_log2 = n <= 2 ? 1 : 64 - __builtin_clzll(uint64_t(n - 1));
  const int64_t power = std::max<int64_t>(4, ceil_log2 / kLevels), step = int64_t(1) << power;
  double acc[kLevels] = {};
  int64_t i = 0;
  while (i + step <= n) {
    for (int64_t j = 0; j < step; ++j, ++i) acc[0] += x[i * stride];
    for (int level = 1; level < kLevels; ++level) {
      acc[level] += acc[level - 1];
      acc[level - 1] = 0;
      if ((i & ((step - 1) << (level * power))) != 0) break;
    }
  }
  for (; i < n; ++i) acc[0] += x[i * stride];
  for (int level = 1; level < kLevels; ++level) acc[0] += acc[level];
  return acc[0];
}

// One lane: rows of 4 interleaved partial sums, the tail into the first, then added in order.
double lane_sum(const double* x, int64_t stride, int64_t n) {
  const int64_t rows = n / 4;
  double partial[4];
  for (int k = 0; k < 4; ++k) partial[k] = cascade_sum(x + k * stride, 4 * stride, rows);
  for (int64_t i = rows * 4; i < n; ++i) partial[0] += x[i * stride];
  return ((partial[0] + partial[1]) + partial[2]) + partial[3];
}

double torch_row_sum(const double* x, int64_t n) {
  const int64_t per_lane = n / 4;
  double total = 0;
  for (int64_t i = per_lane * 4; i < n; ++i) total += x[i];
  for (int lane = 0; lane < 4; ++lane) total += lane_sum(x + lane, 4, per_lane);
  return total;
}

Tensor standard_gamma_kernel(const Tensor& alpha, const GeneratorPtr& gen) {
  Tensor out = empty(alpha.sizes(), alpha.dtype(), alpha.device());
  dispatch<kGammaTypes>(alpha.dtype(), "gamma_cpu", [&](auto tag) {
    using T = decltype(tag);
    Tensor a = contiguous(alpha.detach());
    const T* ap = a.data_ptr<T>();
    T* o = out.data_ptr<T>();
    auto lock = gen->lock();
    for (int64_t i = 0; i < out.numel(); ++i) {
      const T draw = T(sample_gamma<T>(ap[i], *gen));
      o[i] = std::isnan(draw) ? draw : std::max(std::numeric_limits<T>::min(), draw);
    }
  });
  return out;
}

Tensor sample_dirichlet_kernel(const Tensor& alpha, const GeneratorPtr& gen) {
  Tensor out = empty(alpha.sizes(), alpha.dtype(), alpha.device());
  dispatch<kGammaTypes>(alpha.dtype(), "dirichlet", [&](auto tag) {
    using T = decltype(tag);
    Tensor a = contiguous(alpha.detach());
    const T* ap = a.data_ptr<T>();
    T* o = out.data_ptr<T>();
    const int64_t n = out.numel(), k = alpha.dim() == 0 ? 1 : alpha.size(-1);
    std::vector<double> gamma(static_cast<size_t>(n));
    {
      auto lock = gen->lock();
      for (int64_t i = 0; i < n; ++i)
        gamma[size_t(i)] =
            std::max(std::numeric_limits<double>::min(), sample_gamma<double>(double(ap[i]), *gen));
    }
    const T hi = std::nextafter(T(1), T(0)), lo = std::numeric_limits<T>::min();
    for (int64_t r = 0; k > 0 && r < n / k; ++r) {
      const double* row = gamma.data() + r * k;
      const double sum = torch_row_sum(row, k);
      for (int64_t j = 0; j < k; ++j) o[r * k + j] = std::min(hi, std::max(lo, T(row[j] / sum)));
    }
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_standard_gamma, CPU, standard_gamma_kernel);
EMBER_REGISTER_KERNEL(op::_sample_dirichlet, CPU, sample_dirichlet_kernel);

}  // namespace ember::cpu
