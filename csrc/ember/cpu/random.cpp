// CPU sampling kernels: torch's draws, in torch's order, from the mt19937 stream. See Note
// [torch's random stream] and Note [fused sampling arithmetic].
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <numeric>
#include <vector>

#include "ember/core/generator.h"
#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/random_draw.h"
#include "ember/cpu/random_normal.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/random.h"

namespace ember::cpu {

namespace {

// Significand bits of a floating type (16-bit types included).
template <class T>
constexpr int digits_of() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return std::numeric_limits<T>::digits;
}

// torch's serial kernels visit an output's elements in memory order (TensorIterator sorts the
// dims by stride): the view of self whose row-major order is that order.
Tensor in_memory_order(const Tensor& self) {
  std::vector<int64_t> perm(size_t(self.dim()));
  std::iota(perm.begin(), perm.end(), int64_t(0));
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return self.stride(a) > self.stride(b); });
  return self.permute(perm);
}

// Writes draw() into each element of self, one after the other in memory order.
template <class T, class Draw>
void fill_serial(Tensor& self, Draw draw) {
  const int64_t n = self.numel();
  if (n == 0) return;
  if (self.is_contiguous()) {
    T* p = self.data_ptr<T>();
    for (int64_t i = 0; i < n; ++i) p[i] = draw();
    return;
  }
  Tensor view = in_memory_order(self);
  Tensor buf = empty(view.sizes(), self.dtype());
  T* p = buf.data_ptr<T>();
  for (int64_t i = 0; i < n; ++i) p[i] = draw();
  copy_(view, buf);
}

Tensor& uniform_kernel(Tensor& self, double from, double to, const GeneratorPtr& gen) {
  const bool fused = fused_sampling();
  dispatch<kFloatTypes>(self.dtype(), "check_uniform_bounds", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    // a sample that rounds up to `to` becomes `from`, as torch's
    const T lo_t = T(from), hi_t = T(to);
    auto in_range = [&](T v) { return acc_t<T>(v) >= acc_t<T>(hi_t) ? lo_t : v; };
    if constexpr (std::is_same_v<T, double>) {
      fill_serial<T>(self,
                     [&] { return in_range(affine(fused, unit_double(*gen), to - from, from)); });
    } else {  // float arithmetic, the 16-bit types rounding the float sample
      const float lo = float(from), span = float(to) - float(from);
      fill_serial<T>(self, [&] { return in_range(T(affine(fused, unit_float(*gen), span, lo))); });
    }
  });
  return self;
}

Tensor& normal_kernel(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  if (self.numel() == 0) return self;  // torch's iterator never reaches its dtype switch
  const bool fused = fused_sampling();
  dispatch<kFloatTypes>(self.dtype(), "normal_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    if (self.numel() >= 16 && self.is_contiguous()) {
      normal_fill(self.data_ptr<T>(), self.numel(), mean, std, *gen);
      return;
    }
    fill_serial<T>(self, [&] { return T(affine(fused, standard_normal(*gen), std, mean)); });
  });
  return self;
}

Tensor& bernoulli_scalar_kernel(Tensor& self, double p, const GeneratorPtr& gen) {
  if (bernoulli_uses_mkl_stream()) {
    uint32_t seed;
    {
      auto lock = gen->lock();
      seed = gen->random();
    }
    Tensor bits = empty(self.sizes(), kInt);
    int32_t* b = bits.data_ptr<int32_t>();
    parallel_for(0, bits.numel(), 800,
                 [&](int64_t lo, int64_t hi) { mcg31_bernoulli(b + lo, hi - lo, seed, p, lo); });
    copy_(self, bits);
    return self;
  }
  dispatch<kAllTypes>(self.dtype(), "bernoulli_scalar_cpu_", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    fill_serial<T>(self, [&] { return T(unit_double(*gen) < p ? 1 : 0); });
  });
  return self;
}

// Integers in [from, from + range): one draw modulo range, or random64() when range reaches 2^28
// (torch's uniform_int_from_to) or is 0, the full 2^64 (int64 from its lowest value). random_()
// without bounds is torch's other kernel: random64() for int64 and double only.
Tensor& random_kernel(Tensor& self, int64_t from, std::optional<int64_t> to,
                      const GeneratorPtr& gen) {
  dispatch<kAllTypes>(self.dtype(), "random_from_to", [&](auto tag) {
    using T = decltype(tag);
    uint64_t to_inc;
    if (to) {
      to_inc = uint64_t(*to - 1);
    } else if constexpr (std::is_same_v<T, bool>) {
      to_inc = 1;
    } else if constexpr (std::is_integral_v<T>) {
      to_inc = uint64_t(std::numeric_limits<T>::max());
    } else {
      to_inc = uint64_t(1) << std::min(digits_of<T>(), 63);
    }
    const uint64_t range = to_inc - uint64_t(from) + 1;
    const bool two = from == 0 && !to ? std::is_same_v<T, int64_t> || std::is_same_v<T, double>
                                      : range == 0 || range >= (uint64_t(1) << 28);
    auto lock = gen->lock();
    fill_serial<T>(self, [&] {
      uint64_t x = two ? gen->random64() : gen->random();
      int64_t v = int64_t(range == 0 ? x : x % range + uint64_t(from));
      if constexpr (std::is_same_v<T, bool>) return v != 0;
      else if constexpr (std::is_integral_v<T> || std::is_floating_point_v<T>) return T(v);
      else return T(float(v));
    });
  });
  return self;
}

// bernoulli(p): p as double draws one double sample, p of another floating type one float.
Tensor bernoulli_kernel(const Tensor& self, const GeneratorPtr& gen) {
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  dispatch<kFloatTypes>(self.dtype(), "bernoulli_tensor_cpu_p_", [&](auto tag) {
    using T = decltype(tag);
    Tensor p = contiguous(self.detach());
    const T* pp = p.data_ptr<T>();
    for (int64_t i = 0; i < p.numel(); ++i)
      EMBER_CHECK(acc_t<T>(pp[i]) >= 0 && acc_t<T>(pp[i]) <= 1,
                  "Expected p_in >= 0 && p_in <= 1 to be true, but "
                  "got false.");
    T* o = out.data_ptr<T>();
    auto lock = gen->lock();
    for (int64_t i = 0; i < out.numel(); ++i) {
      bool one;
      if constexpr (std::is_same_v<T, double>) one = unit_double(*gen) < pp[i];
      else one = unit_float(*gen) < float(pp[i]);
      o[i] = T(one ? 1.0f : 0.0f);
    }
  });
  return out;
}

// The per-element distributions of torch's serial kernels, each from double draws.
Tensor& exponential_kernel(Tensor& self, double lambd, const GeneratorPtr& gen) {
  if (self.numel() == 0) return self;  // torch's iterator never reaches its dtype switch
  dispatch<kFloatTypes>(self.dtype(), "exponential_cpu", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    fill_serial<T>(self, [&] { return T(-1.0 / lambd * std::log1p(-unit_double(*gen))); });
  });
  return self;
}

Tensor& cauchy_kernel(Tensor& self, double median, double sigma, const GeneratorPtr& gen) {
  const bool fused = fused_sampling();
  dispatch<kFloatTypes>(self.dtype(), "cauchy_cpu", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    fill_serial<T>(self, [&] {
      double t = std::tan(std::numbers::pi * (unit_double(*gen) - 0.5));
      return T(affine(fused, sigma, t, median));
    });
  });
  return self;
}

Tensor& log_normal_kernel(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  if (self.numel() == 0) return self;  // torch's iterator never reaches its dtype switch
  const bool fused = fused_sampling();
  dispatch<kFloatTypes>(self.dtype(), "log_normal_cpu", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    fill_serial<T>(self,
                   [&] { return T(std::exp(affine(fused, standard_normal(*gen), std, mean))); });
  });
  return self;
}

Tensor& geometric_kernel(Tensor& self, double p, const GeneratorPtr& gen) {
  dispatch<kNumericTypes>(self.dtype(), "geometric_cpu", [&](auto tag) {
    using T = decltype(tag);
    const double denom = std::log1p(-p);
    auto lock = gen->lock();
    fill_serial<T>(self, [&] {
      double v = std::ceil(std::log(unit_double(*gen)) / denom);
      if constexpr (std::is_integral_v<T>) return T(int64_t(v));
      else return T(acc_t<T>(v));
    });
  });
  return self;
}

// torch's sample_poisson: below rate 10 the count of uniform products above e^-rate, from 10 up
// Hoermann's transformed rejection (PTRS); double draws, rates in row-major order.
int64_t sample_poisson(double lambda, Generator& g) {
  if (lambda == 0) return 0;
  if (lambda < 10) {
    const double enlam = std::exp(-lambda);
    double prod = 1.0;
    for (int64_t x = 0;; ++x) {
      prod *= unit_double(g);
      if (!(prod > enlam)) return x;
    }
  }
  const double slam = std::sqrt(lambda), loglam = std::log(lambda);
  const double b = 0.931 + 2.53 * slam, a = -0.059 + 0.02483 * b;
  const double invalpha = 1.1239 + 1.1328 / (b - 3.4), vr = 0.9277 - 3.6224 / (b - 2);
  while (true) {
    const double u = unit_double(g) - 0.5, v = unit_double(g), us = 0.5 - std::fabs(u);
    const int64_t k = int64_t(std::floor((2 * a / us + b) * u + lambda + 0.43));
    if (us >= 0.07 && v <= vr) return k;
    if (k < 0 || (us < 0.013 && v > us)) continue;
    if (std::log(v) + std::log(invalpha) - std::log(a / (us * us) + b) <=
        -lambda + double(k) * loglam - std::lgamma(double(k) + 1))
      return k;
  }
}

Tensor poisson_kernel(const Tensor& rates, const GeneratorPtr& gen) {
  Tensor out = empty(rates.sizes(), rates.dtype(), rates.device());
  dispatch<kFloatTypes>(rates.dtype(), "poisson_cpu", [&](auto tag) {
    using T = decltype(tag);
    Tensor lam = contiguous(rates.detach());
    const T* l = lam.data_ptr<T>();
    T* o = out.data_ptr<T>();
    auto lock = gen->lock();
    for (int64_t i = 0; i < out.numel(); ++i) {
      const double rate = double(acc_t<T>(l[i]));
      EMBER_CHECK(rate >= 0, "invalid Poisson rate, expected rate to be non-negative");
      o[i] = T(acc_t<T>(sample_poisson(rate, *gen)));
    }
  });
  return out;
}

// torch's sample_binomial: for p <= 1/2 (else count minus the draw for 1 - p), the count of
// geometric waiting times within `count` when count * p < 10, else Hoermann's BTRS rejection with
// torch's bound; S is the tensor's type (float or double), the rest double.
double stirling_tail(double k) {
  static constexpr double kTail[] = {0.0810614667953272,  0.0413406959554092, 0.0276779256849983,
                                     0.02079067210376509, 0.0166446911898211, 0.0138761288230707,
                                     0.0118967099458917,  0.0104112652619720, 0.00925546218271273,
                                     0.00833056343336287};
  if (k <= 9) return kTail[size_t(k)];
  const double kp1sq = (k + 1) * (k + 1);
  return (1.0 / 12 - (1.0 / 360 - 1.0 / 1260 / kp1sq) / kp1sq) / (k + 1);
}

template <class S>
S binomial_inversion(S count, S prob, Generator& g) {
  double geom_sum = 0;
  S num = 0;
  const double logprob = std::log1p(-double(prob));
  while (true) {
    geom_sum += std::ceil(std::log(unit_double(g)) / logprob);
    if (geom_sum > double(count)) return num;
    num = num + 1;
  }
}

template <class S>
S binomial_btrs(S count, S prob, Generator& g) {
  const double n = count, p = prob;
  const double stddev = std::sqrt(n * p * (1 - p)), b = 1.15 + 2.53 * stddev;
  const double a = -0.0873 + 0.0248 * b + 0.01 * p, c = n * p + 0.5, v_r = 0.92 - 4.2 / b;
  const double r = p / (1 - p), alpha = (2.83 + 5.1 / b) * stddev, m = std::floor((n + 1) * p);
  while (true) {
    const double u = unit_double(g) - 0.5;
    double v = unit_double(g);
    const double us = 0.5 - std::fabs(u);
    const S k = S(std::floor((2 * a / us + b) * u + c));
    if (k < 0 || k > count) continue;
    if (us >= 0.07 && v <= v_r) return k;
    v = std::log(v * alpha / (a / (us * us) + b));
    const double kd = k;
    const double bound = (m + 0.5) * std::log((m + 1) / (r * (n - m + 1))) +
                         (n + 1) * std::log((n - m + 1) / (n - kd + 1)) +
                         (kd + 0.5) * std::log(r * (n - kd + 1) / (kd + 1)) + stirling_tail(m) +
                         stirling_tail(n - m) - stirling_tail(kd) - stirling_tail(n - kd);
    if (v <= bound) return k;
  }
}

template <class S>
S sample_binomial(S count, S prob, Generator& g) {
  if (count <= 0 || prob <= 0) return 0;
  if (prob >= 1) return count;
  if (prob <= S(0.5))
    return count * prob >= 10 ? binomial_btrs(count, prob, g) : binomial_inversion(count, prob, g);
  const S q = S(1.0) - prob;
  return count - (count * q >= 10 ? binomial_btrs(count, q, g) : binomial_inversion(count, q, g));
}

Tensor binomial_kernel(const Tensor& count, const Tensor& prob, const GeneratorPtr& gen) {
  Tensor out = empty(count.sizes(), count.dtype(), count.device());
  dispatch<kFloatTypes>(count.dtype(), "binomial_cpu", [&](auto tag) {
    using T = decltype(tag);
    using S = std::conditional_t<std::is_same_v<T, double>, double, float>;
    Tensor n = contiguous(count.detach());
    Tensor p = contiguous(to_dtype(prob.detach(), count.dtype()).expand(count.sizes()));
    const T *np = n.data_ptr<T>(), *pp = p.data_ptr<T>();
    T* o = out.data_ptr<T>();
    auto lock = gen->lock();
    for (int64_t i = 0; i < out.numel(); ++i)
      o[i] = T(sample_binomial(S(acc_t<T>(np[i])), S(acc_t<T>(pp[i])), *gen));
  });
  return out;
}

// Note [multinomial sampling]
// As torch: without replacement, or for one sample, each row's p / q with q ~ Exp(1) drawn into
// a tensor of the input's dtype (row-major), the largest n in descending order; with
// replacement, each sample one double draw searched in the row's normalized cumulative sums
// (float sums for float input), rows one after the other.
template <class T>
void multinomial_race(const Tensor& p, int64_t n, Generator& gen, int64_t* o) {
  const int64_t rows = p.size(0), K = p.size(1);
  const T* pp = p.data_ptr<T>();
  std::vector<T> q(static_cast<size_t>(rows * K));
  for (auto& v : q) v = T(-1.0 * std::log1p(-unit_double(gen)));
  std::vector<int64_t> idx(static_cast<size_t>(K));
  std::vector<acc_t<T>> key(static_cast<size_t>(K));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t k = 0; k < K; ++k) {
      key[size_t(k)] = acc_t<T>(T(acc_t<T>(pp[r * K + k]) / acc_t<T>(q[size_t(r * K + k)])));
      idx[size_t(k)] = k;
    }
    std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), [&](int64_t a, int64_t b) {
      auto ka = key[size_t(a)], kb = key[size_t(b)];
      return ka > kb || (ka == kb && a < b);
    });
    std::copy(idx.begin(), idx.begin() + n, o + r * n);
  }
}

template <class T>
void multinomial_cdf(const Tensor& p, int64_t n, Generator& gen, int64_t* o) {
  using A = std::conditional_t<std::is_same_v<T, double>, double, float>;
  const int64_t rows = p.size(0), K = p.size(1);
  const T* pp = p.data_ptr<T>();
  std::vector<A> cdf(static_cast<size_t>(K));
  for (int64_t r = 0; r < rows; ++r) {
    A sum = 0;
    for (int64_t k = 0; k < K; ++k) cdf[size_t(k)] = sum += A(pp[r * K + k]);
    for (auto& c : cdf) c /= sum;
    cdf[size_t(K - 1)] = 1;
    for (int64_t s = 0; s < n; ++s) {
      const double u = unit_double(gen);
      int64_t lo = 0, hi = K;
      while (hi > lo) {
        int64_t mid = lo + (hi - lo) / 2;
        if (double(cdf[size_t(mid)]) < u) lo = mid + 1;
        else hi = mid;
      }
      o[r * n + s] = lo;
    }
  }
}

Tensor multinomial_kernel(const Tensor& self, int64_t n, bool replacement,
                          const GeneratorPtr& gen) {
  Tensor p = contiguous(self.detach());
  if (p.dim() == 1) p = p.as_strided_view({1, p.size(0)}, {0, 1}, p.storage_offset());
  const int64_t rows = p.size(0), K = p.size(1);
  dispatch<kFloatTypes>(p.dtype(), "multinomial", [&](auto tag) {
    using T = decltype(tag);
    const T* pp = p.data_ptr<T>();
    for (int64_t r = 0; r < rows; ++r) {
      double total = 0;
      for (int64_t k = 0; k < K; ++k) {
        double v = double(acc_t<T>(pp[r * K + k]));
        EMBER_CHECK(std::isfinite(v) && v >= 0,
                    "probability tensor contains either `inf`, `nan` or element < 0");
        total += v;
      }
      EMBER_CHECK(total > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
    }
  });
  Tensor out =
      self.dim() == 1 ? empty({n}, kLong, self.device()) : empty({rows, n}, kLong, self.device());
  int64_t* o = out.data_ptr<int64_t>();
  dispatch<kFloatTypes>(p.dtype(), "multinomial", [&](auto tag) {
    using T = decltype(tag);
    auto lock = gen->lock();
    if (!replacement || n == 1) multinomial_race<T>(p, n, *gen, o);
    else multinomial_cdf<T>(p, n, *gen, o);
  });
  return out;
}

// torch's randperm: below 2^32 / 20, swaps slot i with i + random() % (n - i) for i < n - 1;
// above, the inside-out shuffle with random64() % (i + 1).
Tensor& randperm_kernel(Tensor& out, const GeneratorPtr& gen) {
  const int64_t n = out.numel();
  dispatch<kNumericTypes>(out.dtype(), "randperm", [&](auto tag) {
    using T = decltype(tag);
    int64_t largest;  // the largest n - 1 the dtype holds exactly
    if constexpr (std::is_integral_v<T>) largest = int64_t(std::numeric_limits<T>::max());
    else largest = int64_t(1) << digits_of<T>();
    EMBER_CHECK(n - 1 <= largest, "randperm: n is too large for result tensor type: '",
                scalar_type_name(out.dtype()), "'");
  });
  std::vector<int64_t> perm(static_cast<size_t>(n));
  {
    auto lock = gen->lock();
    if (n < int64_t(std::numeric_limits<uint32_t>::max() / 20)) {
      std::iota(perm.begin(), perm.end(), int64_t(0));
      for (int64_t i = 0; i < n - 1; ++i) {
        int64_t z = int64_t(gen->random() % uint64_t(n - i));
        std::swap(perm[size_t(i)], perm[size_t(i + z)]);
      }
    } else {
      for (int64_t i = 0; i < n; ++i) {
        int64_t z = int64_t(gen->random64() % uint64_t(i + 1));
        perm[size_t(i)] = perm[size_t(z)];
        perm[size_t(z)] = i;
      }
    }
  }
  Tensor src = from_blob(perm.data(), {n}, {1}, kLong);
  copy_(out, src);
  return out;
}

}  // namespace

bool bernoulli_uses_mkl_stream() {
#if defined(__x86_64__) && defined(__GNUC__)
  static const bool intel = [] {
    __builtin_cpu_init();
    return __builtin_cpu_is("intel") != 0;
  }();
  return intel;
#else
  return false;
#endif
}

void mcg31_bernoulli(int32_t* out, int64_t n, uint32_t seed, double p, int64_t first) {
  constexpr uint64_t kM = (uint64_t(1) << 31) - 1, kA = 1132489760;
  uint64_t x = seed % kM == 0 ? 1 : seed % kM;
  for (uint64_t a = kA, e = uint64_t(first); e; e >>= 1, a = a * a % kM)  // x_first = a^first x_0
    if (e & 1) x = x * a % kM;
  for (int64_t i = 0; i < n; ++i, x = x * kA % kM) out[i] = double(x) / double(kM) < p ? 1 : 0;
}

EMBER_REGISTER_KERNEL(op::uniform_, CPU, uniform_kernel);
EMBER_REGISTER_KERNEL(op::normal_, CPU, normal_kernel);
EMBER_REGISTER_KERNEL(op::bernoulli_, CPU, bernoulli_scalar_kernel);
EMBER_REGISTER_KERNEL(op::random_, CPU, random_kernel);
EMBER_REGISTER_KERNEL(op::bernoulli, CPU, bernoulli_kernel);
EMBER_REGISTER_KERNEL(op::exponential_, CPU, exponential_kernel);
EMBER_REGISTER_KERNEL(op::cauchy_, CPU, cauchy_kernel);
EMBER_REGISTER_KERNEL(op::log_normal_, CPU, log_normal_kernel);
EMBER_REGISTER_KERNEL(op::geometric_, CPU, geometric_kernel);
EMBER_REGISTER_KERNEL(op::poisson, CPU, poisson_kernel);
EMBER_REGISTER_KERNEL(op::binomial, CPU, binomial_kernel);
EMBER_REGISTER_KERNEL(op::multinomial, CPU, multinomial_kernel);
EMBER_REGISTER_KERNEL(op::_randperm_fill, CPU, randperm_kernel);

}  // namespace ember::cpu
