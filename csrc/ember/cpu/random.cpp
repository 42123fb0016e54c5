// CPU sampling kernels. Each element draws from its own Philox counter, so kernels split work
// freely over threads and stay reproducible. See Note [Philox counters].
#include <algorithm>
#include <cmath>
#include <limits>
#include <numbers>
#include <vector>

#include "ember/core/generator.h"
#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/random.h"

namespace ember::cpu {

namespace {

constexpr int64_t kRandomGrain = 16384;

using Bits = std::array<uint32_t, 4>;

// Significand bits of a floating type (16-bit types included).
template <class T>
constexpr int digits_of() {
  if constexpr (std::is_same_v<T, Half>) return 11;
  else if constexpr (std::is_same_v<T, BFloat16>) return 8;
  else return std::numeric_limits<T>::digits;
}

uint64_t bits64(const Bits& r, int i = 0) {
  return uint64_t(r[size_t(i)]) << 32 | r[size_t(i) + 1];
}

// U[0, 1) with the mantissa width of T (as torch's uniform_real): exactly representable steps.
template <class T>
acc_t<T> unit(const Bits& r) {
  if constexpr (std::is_same_v<T, double>) return double(bits64(r) >> 11) * 0x1p-53;
  else if constexpr (std::is_same_v<T, Half>) return float(r[0] >> 21) * 0x1p-11f;
  else if constexpr (std::is_same_v<T, BFloat16>) return float(r[0] >> 24) * 0x1p-8f;
  else return float(r[0] >> 8) * 0x1p-24f;
}

// The largest T below `to` (rounding can carry from + u * (to - from) up to `to`).
template <class T>
T below(T to) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    T r = to;
    // Sign-magnitude bits: step toward -inf (from +0 to the smallest negative subnormal).
    r.x = (r.x & 0x7fff) == 0 ? uint16_t(0x8001)
          : (r.x & 0x8000)    ? uint16_t(r.x + 1)
                              : uint16_t(r.x - 1);
    return r;
  } else {
    return std::nextafter(to, -std::numeric_limits<T>::infinity());
  }
}

// philox() over kLanes consecutive counters: lane loops of a fixed trip count let GCC vectorize
// the rounds at -O2. Same bits as philox(seed, first + l) for lane l.
constexpr int kLanes = 16;
void philox_lanes(uint64_t seed, uint64_t first, Bits* out) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  uint32_t c0[kLanes], c1[kLanes], c2[kLanes], c3[kLanes];
  for (int l = 0; l < kLanes; ++l) {
    uint64_t ctr = first + uint64_t(l);
    c0[l] = uint32_t(ctr), c1[l] = uint32_t(ctr >> 32), c2[l] = 0, c3[l] = 0;
  }
  uint32_t k0 = uint32_t(seed), k1 = uint32_t(seed >> 32);
  for (int round = 0; round < 10; ++round) {
    for (int l = 0; l < kLanes; ++l) {
      uint64_t p0 = uint64_t(kM0) * c0[l], p1 = uint64_t(kM1) * c2[l];
      uint32_t n0 = uint32_t(p1 >> 32) ^ c1[l] ^ k0, n2 = uint32_t(p0 >> 32) ^ c3[l] ^ k1;
      c0[l] = n0, c1[l] = uint32_t(p1), c2[l] = n2, c3[l] = uint32_t(p0);
    }
    k0 += kW0, k1 += kW1;
  }
  for (int l = 0; l < kLanes; ++l) out[l] = {c0[l], c1[l], c2[l], c3[l]};
}

// Writes f(bits of element i) into self, element i drawing counter offset + i (row-major order).
template <class T, class F>
void fill_counters(Tensor& self, const GeneratorPtr& gen, F f) {
  const int64_t n = self.numel();
  if (n == 0) return;
  auto [seed, base] = gen->reserve(uint64_t(n));
  Tensor out = self.is_contiguous() ? self : empty(self.sizes(), self.dtype());
  T* p = out.data_ptr<T>();
  parallel_for(0, n, kRandomGrain, [&, seed = seed, base = base](int64_t b, int64_t e) {
    Bits r[kLanes];
    int64_t i = b;
    for (; i + kLanes <= e; i += kLanes) {
      philox_lanes(seed, base + uint64_t(i), r);
      for (int l = 0; l < kLanes; ++l) p[i + l] = f(r[l]);
    }
    for (; i < e; ++i) p[i] = f(philox(seed, base + uint64_t(i)));
  });
  if (!out.is_same(self)) copy_(self, out);
}

Tensor& uniform_kernel(Tensor& self, double from, double to, const GeneratorPtr& gen) {
  dispatch<kFloatTypes>(self.dtype(), "check_uniform_bounds", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const A lo = A(from), span = A(to - from);
    const T hi = T(A(to)), top = below(hi);
    const bool clamp = to > from;
    fill_counters<T>(self, gen, [=](const Bits& r) {
      T v = T(lo + unit<T>(r) * span);
      return clamp && A(v) >= A(hi) ? top : v;
    });
  });
  return self;
}

// Box-Muller: one normal per element from two uniforms (u1 in (0, 1] keeps the log finite).
Tensor& normal_kernel(Tensor& self, double mean, double std, const GeneratorPtr& gen) {
  dispatch<kFloatTypes>(self.dtype(), "normal_kernel_cpu", [&](auto tag) {
    using T = decltype(tag);
    using A = acc_t<T>;
    const A m = A(mean), s = A(std);
    fill_counters<T>(self, gen, [=](const Bits& r) {
      A u1, u2;
      if constexpr (std::is_same_v<A, double>) {
        u1 = double((bits64(r, 0) >> 11) + 1) * 0x1p-53;
        u2 = double(bits64(r, 2) >> 11) * 0x1p-53;
      } else {
        u1 = float((r[0] >> 8) + 1) * 0x1p-24f;
        u2 = float(r[1] >> 8) * 0x1p-24f;
      }
      A z = std::sqrt(A(-2) * std::log(u1)) * std::cos(A(2 * std::numbers::pi) * u2);
      return T(m + s * z);
    });
  });
  return self;
}

double unit53(const Bits& r) { return double(bits64(r) >> 11) * 0x1p-53; }

Tensor& bernoulli_scalar_kernel(Tensor& self, double p, const GeneratorPtr& gen) {
  dispatch<kAllTypes>(self.dtype(), "bernoulli_scalar_cpu_", [&](auto tag) {
    using T = decltype(tag);
    fill_counters<T>(self, gen, [=](const Bits& r) { return T(unit53(r) < p ? 1 : 0); });
  });
  return self;
}

// Integers in [from, from + range); range 0 stands for the full 2^64.
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
      to_inc = uint64_t(1) << digits_of<T>();
    }
    const uint64_t range = to_inc - uint64_t(from) + 1;
    fill_counters<T>(self, gen, [=](const Bits& r) {
      uint64_t x = range == 0                     ? bits64(r)
                   : range <= (uint64_t(1) << 32) ? r[0] % range
                                                  : bits64(r) % range;
      int64_t v = int64_t(uint64_t(from) + x);
      if constexpr (std::is_same_v<T, bool>) return v != 0;
      else if constexpr (std::is_integral_v<T>) return T(v);
      else return T(acc_t<T>(v));
    });
  });
  return self;
}

// Reads probabilities as a contiguous (rows, K) float64 tensor.
Tensor probabilities(const Tensor& self) {
  Tensor p = to_dtype(self.detach(), kDouble);
  return contiguous(self.dim() == 1
                        ? p.as_strided_view({1, p.size(0)}, {0, p.stride(0)}, p.storage_offset())
                        : p);
}

Tensor bernoulli_kernel(const Tensor& self, const GeneratorPtr& gen) {
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  dispatch<kFloatTypes>(self.dtype(), "bernoulli_tensor_cpu_p_", [&](auto tag) {
    using T = decltype(tag);
    Tensor p = contiguous(to_dtype(self.detach(), kDouble));
    const double* pp = p.data_ptr<double>();
    for (int64_t i = 0; i < p.numel(); ++i)
      EMBER_CHECK(pp[i] >= 0 && pp[i] <= 1,
                  "Expected p_in >= 0 && p_in <= 1 to be true, but "
                  "got false.");
    const int64_t n = out.numel();
    if (n == 0) return;
    auto [seed, base] = gen->reserve(uint64_t(n));
    T* o = out.data_ptr<T>();
    parallel_for(0, n, kRandomGrain, [&, seed = seed, base = base](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        o[i] = T(unit53(philox(seed, base + uint64_t(i))) < pp[i] ? 1.0f : 0.0f);
    });
  });
  return out;
}

// Note [multinomial sampling]
// With replacement, sample s of row r inverts the row's CDF at a uniform from counter
// r * n + s. Without, category k of row r gets the key E / p_k with E ~ Exp(1) from counter
// r * K + k, and the n smallest keys win (the exponential race, equivalent to PyTorch's
// p / q top-k); zero-probability categories have infinite keys and come last, in index order.
Tensor multinomial_kernel(const Tensor& self, int64_t n, bool replacement,
                          const GeneratorPtr& gen) {
  Tensor p = probabilities(self);
  const int64_t rows = p.size(0), K = p.size(1);
  const double* pp = p.data_ptr<double>();
  for (int64_t r = 0; r < rows; ++r) {
    double total = 0;
    for (int64_t k = 0; k < K; ++k) {
      double v = pp[r * K + k];
      EMBER_CHECK(std::isfinite(v) && v >= 0,
                  "probability tensor contains either `inf`, `nan` or element < 0");
      total += v;
    }
    EMBER_CHECK(total > 0, "invalid multinomial distribution (sum of probabilities <= 0)");
  }
  Tensor out =
      self.dim() == 1 ? empty({n}, kLong, self.device()) : empty({rows, n}, kLong, self.device());
  int64_t* o = out.data_ptr<int64_t>();
  const int64_t per_row = replacement ? n : K;
  auto [seed, base] = gen->reserve(uint64_t(rows * per_row));
  parallel_for(
      0, rows, std::max<int64_t>(1, kRandomGrain / std::max<int64_t>(per_row, 1)),
      [&, seed = seed, base = base](int64_t r0, int64_t r1) {
        std::vector<double> work(static_cast<size_t>(K));
        std::vector<int64_t> idx(static_cast<size_t>(K));
        for (int64_t r = r0; r < r1; ++r) {
          const double* row = pp + r * K;
          const uint64_t first = base + uint64_t(r * per_row);
          if (replacement) {
            double acc = 0;
            int64_t last_nonzero = 0;
            for (int64_t k = 0; k < K; ++k) {
              acc += row[k];
              work[size_t(k)] = acc;
              if (row[k] > 0) last_nonzero = k;
            }
            for (int64_t s = 0; s < n; ++s) {
              double x = unit53(philox(seed, first + uint64_t(s))) * acc;
              int64_t k = std::upper_bound(work.begin(), work.end(), x) - work.begin();
              o[r * n + s] = std::min(k, last_nonzero);
            }
          } else {
            for (int64_t k = 0; k < K; ++k) {
              double u = double((bits64(philox(seed, first + uint64_t(k))) >> 11) + 1) * 0x1p-53;
              work[size_t(k)] =
                  row[k] > 0 ? -std::log(u) / row[k] : std::numeric_limits<double>::infinity();
              idx[size_t(k)] = k;
            }
            std::partial_sort(idx.begin(), idx.begin() + n, idx.end(), [&](int64_t a, int64_t b) {
              double ka = work[size_t(a)], kb = work[size_t(b)];
              return ka < kb || (ka == kb && a < b);
            });
            std::copy(idx.begin(), idx.begin() + n, o + r * n);
          }
        }
      });
  return out;
}

// Fisher-Yates: step i (from n - 1 down) swaps slot i with a slot in [0, i] from counter base + i.
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
  for (int64_t i = 0; i < n; ++i) perm[size_t(i)] = i;
  if (n > 1) {
    auto [seed, base] = gen->reserve(uint64_t(n));
    for (int64_t i = n - 1; i > 0; --i) {
      uint64_t j = bits64(philox(seed, base + uint64_t(i))) % uint64_t(i + 1);
      std::swap(perm[size_t(i)], perm[size_t(j)]);
    }
  }
  Tensor src = from_blob(perm.data(), {n}, {1}, kLong);
  copy_(out, src);
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::uniform_, CPU, uniform_kernel);
EMBER_REGISTER_KERNEL(op::normal_, CPU, normal_kernel);
EMBER_REGISTER_KERNEL(op::bernoulli_, CPU, bernoulli_scalar_kernel);
EMBER_REGISTER_KERNEL(op::random_, CPU, random_kernel);
EMBER_REGISTER_KERNEL(op::bernoulli, CPU, bernoulli_kernel);
EMBER_REGISTER_KERNEL(op::multinomial, CPU, multinomial_kernel);
EMBER_REGISTER_KERNEL(op::_randperm_fill, CPU, randperm_kernel);

}  // namespace ember::cpu
