// Complex conjugate and the discrete Fourier transform (_fft_c2c) of any length.
//
// Note [FFT]
// One plan per (length, precision), cached: lengths whose prime factors are all <= 31 run a
// Stockham autosort transform (radix 4, 2, 3, 5 specialised, other small primes by a direct
// DFT of their size); a length with a larger prime factor runs Bluestein's chirp-z algorithm
// over a power-of-two convolution. Twiddles come from one table of the n-th roots of unity,
// computed in double. Lines along a dim are independent: parallel_for spreads them over the
// pool, each task with its own scratch. Complex arithmetic is written out on (re, im) pairs:
// std::complex's operator* guards NaN/inf cases through a library call per product.
#include <cmath>
#include <complex>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/complex.h"

namespace ember::cpu {

namespace {

template <class R>
struct C {
  R re, im;
};
template <class R>
inline C<R> add(C<R> a, C<R> b) {
  return {a.re + b.re, a.im + b.im};
}
template <class R>
inline C<R> sub(C<R> a, C<R> b) {
  return {a.re - b.re, a.im - b.im};
}
template <class R>
inline C<R> mul(C<R> a, C<R> b) {
  return {a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
template <class R>
inline C<R> conjugate(C<R> a) {
  return {a.re, -a.im};
}
// a * (-i) for the forward sign, a * i for the backward one.
template <bool Inv, class R>
inline C<R> rot(C<R> a) {
  if constexpr (Inv) return {-a.im, a.re};
  else return {a.im, -a.re};
}

constexpr int64_t kMaxRadix = 31;

template <class R>
struct Plan {
  int64_t n = 0;
  std::vector<int64_t> factors;
  std::vector<C<R>> roots;  // exp(-2 pi i k / n), k < n
  // Bluestein (when factors is empty and n > 1)
  int64_t m = 0;
  std::vector<C<R>> chirp;             // exp(-pi i k^2 / n), k < n
  std::vector<C<R>> kernel_fwd;        // FFT_m of conj(chirp) wrapped
  std::vector<C<R>> kernel_inv;        // FFT_m of chirp wrapped
  std::shared_ptr<const Plan<R>> sub;  // power-of-two plan of length m
};

template <class R>
std::shared_ptr<const Plan<R>> get_plan(int64_t n);

std::vector<int64_t> factorize(int64_t n) {
  std::vector<int64_t> f;
  while (n % 4 == 0) {
    f.push_back(4);
    n /= 4;
  }
  if (n % 2 == 0) {
    f.push_back(2);
    n /= 2;
  }
  for (int64_t p = 3; p * p <= n; p += 2)
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  if (n > 1) f.push_back(n);
  return f;
}

template <bool Inv, class R>
inline C<R> root(const Plan<R>& pl, int64_t k) {
  C<R> w = pl.roots[size_t(k)];
  return Inv ? conjugate(w) : w;
}

// One Stockham pass: x -> y for radix r with current sub-length len and stride s.
template <bool Inv, class R>
void pass(const Plan<R>& pl, int64_t r, int64_t len, int64_t s, const C<R>* x, C<R>* y, int64_t p0,
          int64_t p1) {
  const int64_t m = len / r, n = pl.n, scale = n / len;  // w_len^k = w_n^(k * scale)
  if (r == 2) {
    for (int64_t p = p0; p < p1; ++p) {
      const C<R> w1 = root<Inv>(pl, scale * p);
      for (int64_t q = 0; q < s; ++q) {
        C<R> a0 = x[q + s * p], a1 = x[q + s * (p + m)];
        y[q + s * (2 * p)] = add(a0, a1);
        y[q + s * (2 * p + 1)] = mul(sub(a0, a1), w1);
      }
    }
  } else if (r == 4) {
    for (int64_t p = p0; p < p1; ++p) {
      const C<R> w1 = root<Inv>(pl, scale * p), w2 = root<Inv>(pl, scale * 2 * p),
                 w3 = root<Inv>(pl, scale * 3 * p);
      for (int64_t q = 0; q < s; ++q) {
        C<R> a0 = x[q + s * p], a1 = x[q + s * (p + m)], a2 = x[q + s * (p + 2 * m)],
             a3 = x[q + s * (p + 3 * m)];
        C<R> t0 = add(a0, a2), t1 = sub(a0, a2), t2 = add(a1, a3), t3 = rot<Inv>(sub(a1, a3));
        y[q + s * (4 * p)] = add(t0, t2);
        y[q + s * (4 * p + 1)] = mul(add(t1, t3), w1);
        y[q + s * (4 * p + 2)] = mul(sub(t0, t2), w2);
        y[q + s * (4 * p + 3)] = mul(sub(t1, t3), w3);
      }
    }
  } else if (r == 3) {
    const R c = R(-0.5), sn = R(Inv ? 0.86602540378443864676 : -0.86602540378443864676);
    for (int64_t p = p0; p < p1; ++p) {
      const C<R> w1 = root<Inv>(pl, scale * p), w2 = root<Inv>(pl, scale * 2 * p);
      for (int64_t q = 0; q < s; ++q) {
        C<R> a0 = x[q + s * p], a1 = x[q + s * (p + m)], a2 = x[q + s * (p + 2 * m)];
        C<R> t = add(a1, a2), d = sub(a1, a2);
        C<R> u = {a0.re + c * t.re, a0.im + c * t.im};
        C<R> v = {-sn * d.im, sn * d.re};  // i * sn * d
        y[q + s * (3 * p)] = add(a0, t);
        y[q + s * (3 * p + 1)] = mul(add(u, v), w1);
        y[q + s * (3 * p + 2)] = mul(sub(u, v), w2);
      }
    }
  } else if (r == 5) {
    const R c1 = R(0.30901699437494742410), c2 = R(-0.80901699437494742410),
            s1 = R(0.95105651629515357212), s2 = R(0.58778525229247312917);
    for (int64_t p = p0; p < p1; ++p) {
      const C<R> w1 = root<Inv>(pl, scale * p), w2 = root<Inv>(pl, scale * 2 * p),
                 w3 = root<Inv>(pl, scale * 3 * p), w4 = root<Inv>(pl, scale * 4 * p);
      for (int64_t q = 0; q < s; ++q) {
        C<R> a0 = x[q + s * p], a1 = x[q + s * (p + m)], a2 = x[q + s * (p + 2 * m)],
             a3 = x[q + s * (p + 3 * m)], a4 = x[q + s * (p + 4 * m)];
        C<R> t1 = add(a1, a4), t2 = add(a2, a3), t3 = sub(a1, a4), t4 = sub(a2, a3);
        C<R> b1 = {a0.re + c1 * t1.re + c2 * t2.re, a0.im + c1 * t1.im + c2 * t2.im};
        C<R> b2 = {a0.re + c2 * t1.re + c1 * t2.re, a0.im + c2 * t1.im + c1 * t2.im};
        C<R> u1 = rot<Inv>(C<R>{s1 * t3.re + s2 * t4.re, s1 * t3.im + s2 * t4.im});
        C<R> u2 = rot<Inv>(C<R>{s2 * t3.re - s1 * t4.re, s2 * t3.im - s1 * t4.im});
        y[q + s * (5 * p)] = add(a0, add(t1, t2));
        y[q + s * (5 * p + 1)] = mul(add(b1, u1), w1);
        y[q + s * (5 * p + 2)] = mul(add(b2, u2), w2);
        y[q + s * (5 * p + 3)] = mul(sub(b2, u2), w3);
        y[q + s * (5 * p + 4)] = mul(sub(b1, u1), w4);
      }
    }
  } else {
    // Odd r (a prime up to kMaxRadix): the DFT of size r from the pairs a_k +- a_{r-k}, which
    // halves the products of a direct sum.
    const int64_t h = (r - 1) / 2;
    R cs[kMaxRadix], sn[kMaxRadix];
    for (int64_t k = 0; k < r; ++k) {
      C<R> w = pl.roots[size_t((n / r) * k)];  // exp(-2 pi i k / r)
      cs[k] = w.re;
      sn[k] = -w.im;  // sin(2 pi k / r)
    }
    C<R> t[kMaxRadix], d[kMaxRadix];
    for (int64_t p = p0; p < p1; ++p) {
      for (int64_t q = 0; q < s; ++q) {
        const C<R> a0 = x[q + s * p];
        C<R> sum = a0;
        for (int64_t k = 1; k <= h; ++k) {
          C<R> u = x[q + s * (p + k * m)], v = x[q + s * (p + (r - k) * m)];
          t[k] = add(u, v);
          d[k] = sub(u, v);
          sum = add(sum, t[k]);
        }
        y[q + s * (r * p)] = sum;
        for (int64_t j = 1; j <= h; ++j) {
          C<R> re = a0, im = {0, 0};
          int64_t idx = 0;
          for (int64_t k = 1; k <= h; ++k) {
            idx += j;
            if (idx >= r) idx -= r;
            re.re += t[k].re * cs[idx];
            re.im += t[k].im * cs[idx];
            im.re += d[k].re * sn[idx];
            im.im += d[k].im * sn[idx];
          }
          C<R> u = rot<Inv>(im);
          y[q + s * (r * p + j)] = mul(add(re, u), root<Inv>(pl, scale * p * j));
          y[q + s * (r * p + r - j)] = mul(sub(re, u), root<Inv>(pl, scale * p * (r - j)));
        }
      }
    }
  }
}

// Transforms buf in place (length pl.n); work has room for max(n, 3 * m) values.
template <bool Inv, class R>
void run(const Plan<R>& pl, C<R>* buf, C<R>* work, bool split = false) {
  if (pl.n <= 1) return;
  if (!pl.factors.empty()) {
    C<R>*x = buf, *y = work;
    int64_t len = pl.n, s = 1;
    for (int64_t r : pl.factors) {
      const int64_t m = len / r;
      // One long transform (no batch to spread) splits each pass over its p range.
      if (split && m >= 16) {
        parallel_for(0, m, std::max<int64_t>(1, 8192 / (s * r)),
                     [&](int64_t p0, int64_t p1) { pass<Inv>(pl, r, len, s, x, y, p0, p1); });
      } else {
        pass<Inv>(pl, r, len, s, x, y, 0, m);
      }
      std::swap(x, y);
      len /= r;
      s *= r;
    }
    if (x != buf) std::copy(x, x + pl.n, buf);
    return;
  }
  // Bluestein: X_j = c_j * sum_k (x_k c_k) conj(c_{j-k}), c_k = exp(-+ pi i k^2 / n).
  const int64_t n = pl.n, m = pl.m;
  C<R>*a = work, *w2 = work + m;
  for (int64_t k = 0; k < n; ++k) {
    C<R> c = Inv ? conjugate(pl.chirp[size_t(k)]) : pl.chirp[size_t(k)];
    a[k] = mul(buf[k], c);
  }
  for (int64_t k = n; k < m; ++k) a[k] = {0, 0};
  run<false>(*pl.sub, a, w2, split);
  const auto& ker = Inv ? pl.kernel_inv : pl.kernel_fwd;
  for (int64_t k = 0; k < m; ++k) a[k] = mul(a[k], ker[size_t(k)]);
  run<true>(*pl.sub, a, w2, split);
  const R inv_m = R(1) / R(m);
  for (int64_t k = 0; k < n; ++k) {
    C<R> c = Inv ? conjugate(pl.chirp[size_t(k)]) : pl.chirp[size_t(k)];
    C<R> v = mul(a[k], c);
    buf[k] = {v.re * inv_m, v.im * inv_m};
  }
}

template <class R>
std::shared_ptr<const Plan<R>> make_plan(int64_t n) {
  auto pl = std::make_shared<Plan<R>>();
  pl->n = n;
  auto f = factorize(n);
  bool small = true;
  for (int64_t p : f) small = small && p <= kMaxRadix;
  if (small) {
    pl->factors = f;
    pl->roots.resize(size_t(n));
    for (int64_t k = 0; k < n; ++k) {
      double a = -2.0 * M_PI * double(k) / double(n);
      pl->roots[size_t(k)] = {R(std::cos(a)), R(std::sin(a))};
    }
    return pl;
  }
  int64_t m = 1;
  while (m < 2 * n - 1) m *= 2;
  pl->m = m;
  pl->sub = get_plan<R>(m);
  pl->chirp.resize(size_t(n));
  for (int64_t k = 0; k < n; ++k) {
    // k^2 mod 2n keeps the angle small and exact for large k.
    int64_t k2 = int64_t((__int128)k * k % (2 * n));
    double a = -M_PI * double(k2) / double(n);
    pl->chirp[size_t(k)] = {R(std::cos(a)), R(std::sin(a))};
  }
  std::vector<C<R>> work(static_cast<size_t>(m));
  for (int inv = 0; inv < 2; ++inv) {
    std::vector<C<R>> b(size_t(m), C<R>{0, 0});
    for (int64_t k = 0; k < n; ++k) {
      C<R> c = inv ? pl->chirp[size_t(k)] : conjugate(pl->chirp[size_t(k)]);
      b[size_t(k)] = c;
      if (k) b[size_t(m - k)] = c;
    }
    run<false>(*pl->sub, b.data(), work.data());
    (inv ? pl->kernel_inv : pl->kernel_fwd) = std::move(b);
  }
  return pl;
}

template <class R>
std::shared_ptr<const Plan<R>> get_plan(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const Plan<R>>> cache;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  auto pl = make_plan<R>(n);  // may recurse into get_plan for Bluestein's length
  std::lock_guard<std::mutex> g(mu);
  if (cache.size() > 64) cache.clear();
  return cache.emplace(n, pl).first->second;
}

// Transforms every line of `t` (contiguous, complex) along dim d in place, scaling by `scale`.
template <class R>
void transform_dim(Tensor& t, int64_t d, bool forward, R scale) {
  const int64_t n = t.sizes()[size_t(d)];
  if (n == 0 || t.numel() == 0) return;
  const int64_t inner = t.strides()[size_t(d)];
  const int64_t lines = t.numel() / n;
  auto pl = get_plan<R>(n);
  C<R>* data = reinterpret_cast<C<R>*>(t.data_ptr());
  const int64_t work_size = std::max<int64_t>(n, pl->m ? 2 * pl->m : 0) + n;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n));
  parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<C<R>> scratch(size_t(work_size + n));
    C<R>* buf = scratch.data();
    C<R>* work = buf + n;
    for (int64_t l = b; l < e; ++l) {
      C<R>* base = data + (l / inner) * (n * inner) + (l % inner);
      for (int64_t k = 0; k < n; ++k) buf[k] = base[k * inner];
      if (forward) run<false>(*pl, buf, work, lines == 1);
      else run<true>(*pl, buf, work, lines == 1);
      if (scale != R(1))
        for (int64_t k = 0; k < n; ++k) base[k * inner] = {buf[k].re * scale, buf[k].im * scale};
      else
        for (int64_t k = 0; k < n; ++k) base[k * inner] = buf[k];
    }
  });
}

// exp(-2 pi i k / n) for k <= n / 2 (none for n = 0), computed in double; cached per n as the
// plans are.
template <class R>
std::shared_ptr<const std::vector<C<R>>> half_twiddles(int64_t n) {
  static std::mutex mu;
  static std::map<int64_t, std::shared_ptr<const std::vector<C<R>>>> cache;
  {
    std::lock_guard<std::mutex> g(mu);
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  auto tw = std::make_shared<std::vector<C<R>>>(n ? static_cast<size_t>(n / 2 + 1) : 0);
  for (int64_t k = 0; k < int64_t(tw->size()); ++k) {
    double a = -2.0 * M_PI * double(k) / double(n);
    (*tw)[size_t(k)] = {R(std::cos(a)), R(std::sin(a))};
  }
  std::lock_guard<std::mutex> g(mu);
  if (cache.size() > 64) cache.clear();
  return cache.emplace(n, tw).first->second;
}

// Lines of a real tensor `in` (contiguous) along d -> onesided spectra in `out` (contiguous,
// complex, size n / 2 + 1 along d). Even n packs the line as n / 2 complex values
// z_j = x_{2j} + i x_{2j+1} and unpacks Z = FFT(z) into X_k = E_k + w^k O_k with
// E_k = (Z_k + conj(Z_{h-k})) / 2 and O_k = (Z_k - conj(Z_{h-k})) / 2i; odd n runs the full
// complex transform. Without `onesided` the other half is filled in as conj(X_{n-k}).
template <class R>
void r2c_dim(const Tensor& in, Tensor& out, int64_t d, R scale, bool onesided) {
  const int64_t n = in.sizes()[size_t(d)], nh = n / 2 + 1, nout = onesided ? nh : n;
  const int64_t inner = in.strides()[size_t(d)];
  const int64_t lines = in.numel() / n;
  const bool even = n % 2 == 0;
  const int64_t h = even ? n / 2 : n;
  auto pl = get_plan<R>(h);
  const auto tw_ref = half_twiddles<R>(even ? n : 0);  // exp(-2 pi i k / n), k <= n/2
  const std::vector<C<R>>& tw = *tw_ref;
  const R* src = reinterpret_cast<const R*>(in.data_ptr());
  C<R>* dst = reinterpret_cast<C<R>*>(out.data_ptr());
  const int64_t work_size = std::max<int64_t>(h, pl->m ? 2 * pl->m : 0) + h;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n));
  parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<C<R>> scratch(size_t(work_size + h));
    C<R>* buf = scratch.data();
    C<R>* work = buf + h;
    for (int64_t l = b; l < e; ++l) {
      const R* base = src + (l / inner) * (n * inner) + (l % inner);
      C<R>* ob = dst + (l / inner) * (nout * inner) + (l % inner);
      if (even) {
        for (int64_t j = 0; j < h; ++j) buf[j] = {base[(2 * j) * inner], base[(2 * j + 1) * inner]};
      } else {
        for (int64_t j = 0; j < n; ++j) buf[j] = {base[j * inner], R(0)};
      }
      run<false>(*pl, buf, work, lines == 1);
      if (!even) {
        for (int64_t k = 0; k < nout; ++k) ob[k * inner] = {buf[k].re * scale, buf[k].im * scale};
        continue;
      }
      for (int64_t k = 0; k < nh; ++k) {
        C<R> zk = buf[k % h], zc = conjugate(buf[(h - k) % h]);
        C<R> ev = {(zk.re + zc.re) * R(0.5), (zk.im + zc.im) * R(0.5)};
        C<R> od = sub(zk, zc);
        od = {od.im * R(0.5), -od.re * R(0.5)};  // / 2i
        C<R> v = add(ev, mul(tw[size_t(k)], od));
        ob[k * inner] = {v.re * scale, v.im * scale};
      }
      for (int64_t k = nh; k < nout; ++k) ob[k * inner] = conjugate(ob[(n - k) * inner]);
    }
  });
}

// Onesided spectra in `in` (contiguous, complex, n / 2 + 1 along d) -> real lines of length n in
// `out`: the inverse of r2c_dim (imaginary parts of the zero and Nyquist bins are ignored).
template <class R>
void c2r_dim(const Tensor& in, Tensor& out, int64_t d, int64_t n, R scale) {
  const int64_t nh = n / 2 + 1;
  const int64_t inner = out.strides()[size_t(d)];
  const int64_t lines = out.numel() / n;
  const bool even = n % 2 == 0;
  const int64_t h = even ? n / 2 : n;
  auto pl = get_plan<R>(h);
  const auto tw_ref = half_twiddles<R>(even ? n : 0);
  const std::vector<C<R>>& tw = *tw_ref;
  const C<R>* src = reinterpret_cast<const C<R>*>(in.data_ptr());
  R* dst = reinterpret_cast<R*>(out.data_ptr());
  const int64_t work_size = std::max<int64_t>(h, pl->m ? 2 * pl->m : 0) + h;
  const int64_t grain = std::max<int64_t>(1, kGrainSize / (4 * n));
  parallel_for(0, lines, grain, [&](int64_t b, int64_t e) {
    std::vector<C<R>> scratch(size_t(work_size + h + nh));
    C<R>* buf = scratch.data();
    C<R>* work = buf + h;
    C<R>* X = work + work_size;
    for (int64_t l = b; l < e; ++l) {
      const C<R>* base = src + (l / inner) * (nh * inner) + (l % inner);
      R* ob = dst + (l / inner) * (n * inner) + (l % inner);
      for (int64_t k = 0; k < nh; ++k) X[k] = base[k * inner];
      X[0].im = 0;
      if (even) X[nh - 1].im = 0;
      if (!even) {
        for (int64_t k = 0; k < nh; ++k) buf[k] = X[k];
        for (int64_t k = nh; k < n; ++k) buf[k] = conjugate(X[n - k]);
        run<true>(*pl, buf, work, lines == 1);
        for (int64_t j = 0; j < n; ++j) ob[j * inner] = buf[j].re * scale;
        continue;
      }
      for (int64_t k = 0; k < h; ++k) {
        C<R> xk = X[k], xc = conjugate(X[h - k]);
        C<R> ev = add(xk, xc);
        C<R> od = mul(sub(xk, xc), conjugate(tw[size_t(k)]));
        buf[k] = {ev.re - od.im, ev.im + od.re};  // ev + i * od
      }
      run<true>(*pl, buf, work, lines == 1);
      for (int64_t j = 0; j < h; ++j) {
        ob[(2 * j) * inner] = buf[j].re * scale;
        ob[(2 * j + 1) * inner] = buf[j].im * scale;
      }
    }
  });
}

double norm_scale(int64_t normalization, double count) {
  return normalization == 0 ? 1.0 : normalization == 1 ? 1.0 / std::sqrt(count) : 1.0 / count;
}

Tensor fft_r2c_kernel(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  Tensor in = contiguous(self);
  const int64_t last = dim.back();
  DimVector sizes(self.sizes());
  double count = 1;
  for (int64_t d : dim) count *= double(self.sizes()[size_t(d)]);
  if (onesided) sizes[size_t(last)] = sizes[size_t(last)] / 2 + 1;
  const bool dbl = self.dtype() == kDouble;
  Tensor out = empty(sizes, dbl ? kComplexDouble : kComplexFloat, self.device());
  if (out.numel() == 0) return out;
  const double scale = norm_scale(normalization, count);
  const bool more = dim.size() > 1;
  if (dbl) r2c_dim<double>(in, out, last, more ? 1.0 : scale, onesided);
  else r2c_dim<float>(in, out, last, float(more ? 1.0 : scale), onesided);
  for (size_t i = 0; i + 1 < dim.size(); ++i) {
    double s = i + 2 == dim.size() ? scale : 1.0;
    if (dbl) transform_dim<double>(out, dim[i], true, s);
    else transform_dim<float>(out, dim[i], true, float(s));
  }
  return out;
}

Tensor fft_c2r_kernel(const Tensor& self, IntArrayRef dim, int64_t normalization,
                      int64_t last_dim_size) {
  Tensor in = empty(self.sizes(), self.dtype(), self.device());
  copy_(in, self);
  const int64_t last = dim.back();
  double count = double(last_dim_size);
  for (size_t i = 0; i + 1 < dim.size(); ++i) count *= double(self.sizes()[size_t(dim[i])]);
  const double scale = norm_scale(normalization, count);
  const bool dbl = self.dtype() == kComplexDouble;
  for (size_t i = 0; i + 1 < dim.size(); ++i) {
    if (dbl) transform_dim<double>(in, dim[i], false, 1.0);
    else transform_dim<float>(in, dim[i], false, 1.0f);
  }
  DimVector sizes(self.sizes());
  sizes[size_t(last)] = last_dim_size;
  Tensor out = empty(sizes, dbl ? kDouble : kFloat, self.device());
  if (out.numel() == 0) return out;
  if (dbl) c2r_dim<double>(in, out, last, last_dim_size, scale);
  else c2r_dim<float>(in, out, last, last_dim_size, float(scale));
  return out;
}

Tensor fft_c2c_kernel(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  copy_(out, self);
  double count = 1;
  for (int64_t d : dim) count *= double(self.sizes()[size_t(d)]);
  double scale = normalization == 0   ? 1.0
                 : normalization == 1 ? 1.0 / std::sqrt(count)
                                      : 1.0 / count;
  for (size_t i = 0; i < dim.size(); ++i) {
    double s = i + 1 == dim.size() ? scale : 1.0;
    if (out.dtype() == kComplexFloat) transform_dim<float>(out, dim[i], forward, float(s));
    else transform_dim<double>(out, dim[i], forward, s);
  }
  return out;
}

Tensor conj_physical_kernel(const Tensor& self) {
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  copy_(out, self);
  dispatch<kComplexTypes>(self.dtype(), "conj_physical", [&](auto tag) {
    using T = decltype(tag);
    T* p = reinterpret_cast<T*>(out.data_ptr());
    const int64_t n = out.numel();
    parallel_for(0, n, kGrainSize, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) p[i] = std::conj(p[i]);
    });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_fft_c2c, CPU, fft_c2c_kernel);
EMBER_REGISTER_KERNEL(op::conj_physical, CPU, conj_physical_kernel);
EMBER_REGISTER_KERNEL(op::_fft_r2c, CPU, fft_r2c_kernel);
EMBER_REGISTER_KERNEL(op::_fft_c2r, CPU, fft_c2r_kernel);

}  // namespace ember::cpu
