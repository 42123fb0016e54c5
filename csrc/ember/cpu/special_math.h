#pragma once
// Scalar special functions (double precision) behind the special ops' kernels: the gamma family,
// Bessel and Airy functions and the classical orthogonal polynomials, with torch's values at poles
// and edges. The Bessel functions of integer order come from the C library (POSIX j0/j1/y0/y1)
// and the fractional and K orders from libstdc++'s C++17 special functions: proven code, and
// accurate to a few ulps where a series of our own would lose digits to cancellation.
#include <math.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

namespace ember::cpu::special {

inline constexpr double kInf = std::numeric_limits<double>::infinity();
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// psi(x): recurrence up to x >= 10, then the asymptotic series; reflection for x < 0.
inline double digamma(double x) {
  if (x == 0) return std::copysign(kInf, -x);  // torch: digamma(+0) = -inf, digamma(-0) = +inf
  if (x < 0) {
    if (x == std::trunc(x)) return kNaN;
    // psi(1 - x) - psi(x) = pi / tan(pi x); fmod keeps tan's argument small for large |x|.
    double r = std::fmod(x, 1.0);
    return digamma(1 - x) - std::numbers::pi / std::tan(std::numbers::pi * r);
  }
  double acc = 0;
  while (x < 10) {
    acc -= 1 / x;
    x += 1;
  }
  if (x == kInf) return kInf;
  double z = 1 / (x * x);
  // Bernoulli-number coefficients B_2k / (2k).
  double series =
      z * (1.0 / 12 -
           z * (1.0 / 120 -
                z * (1.0 / 252 -
                     z * (1.0 / 240 - z * (1.0 / 132 - z * (691.0 / 32760 - z * (1.0 / 12)))))));
  return acc + std::log(x) - 0.5 / x - series;
}

/// Hurwitz zeta(s, q) for s > 1 (Cephes' Euler-Maclaurin summation).
inline double zeta(double s, double q) {
  static constexpr double A[] = {12.0,
                                 -720.0,
                                 30240.0,
                                 -1209600.0,
                                 47900160.0,
                                 -1.8924375803183791606e9,
                                 7.47242496e10,
                                 -2.950130727918164224e12,
                                 1.1646782814350067249e14,
                                 -4.5979787224074726105e15,
                                 1.8152105401943546773e17,
                                 -7.1661652561756670113e18};
  if (s == 1) return kInf;
  if (s < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (s != std::floor(s)) return kNaN;  // q^-s would be complex
  }
  double sum = std::pow(q, -s), a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9) {
    i += 1;
    a += 1;
    b = std::pow(a, -s);
    sum += b;
    if (std::fabs(b / sum) < 1e-17) return sum;
  }
  double w = a;
  sum += b * w / (s - 1) - 0.5 * b;
  double fac = 1, k = 0;
  for (double coef : A) {
    fac *= s + k;
    b /= w;
    double t = fac * b / coef;
    sum += t;
    if (std::fabs(t / sum) < 1e-17) break;
    k += 1;
    fac *= s + k;
    b /= w;
    k += 1;
  }
  return sum;
}

/// The n-th derivative of digamma: (-1)^(n+1) n! zeta(n + 1, x).
inline double polygamma(int64_t n, double x) {
  if (n == 0) return digamma(x);
  double fact = std::tgamma(double(n) + 1);
  return ((n % 2) ? 1.0 : -1.0) * fact * zeta(double(n) + 1, x);
}

/// exp(-|x|) I_nu(|x|) for nu in {0, 1}: the power series below 20, the asymptotic one above.
inline double bessel_ie(int nu, double x) {
  double ax = std::fabs(x);
  if (ax == kInf) return 0;
  if (ax < 20) {
    double half = ax / 2, term = nu ? half : 1.0, sum = term;
    for (int k = 1; k < 200 && term > sum * 1e-17; ++k) {
      term *= half * half / (double(k) * double(k + nu));
      sum += term;
    }
    return sum * std::exp(-ax);
  }
  double mu = 4.0 * nu * nu, term = 1, sum = 1;
  for (int k = 1; k < 30; ++k) {
    double odd = 2.0 * k - 1;
    term *= -(mu - odd * odd) / (double(k) * 8 * ax);
    sum += term;
  }
  return sum / std::sqrt(2 * std::numbers::pi * ax);
}

inline double i0e(double x) { return std::isnan(x) ? x : bessel_ie(0, x); }
inline double i1e(double x) { return std::isnan(x) ? x : std::copysign(bessel_ie(1, x), x); }
// exp(|x|) overflows only where I_nu(x) does (|x| > ~713).
inline double i0(double x) { return std::isnan(x) ? x : bessel_ie(0, x) * std::exp(std::fabs(x)); }
inline double i1(double x) { return std::isnan(x) ? x : i1e(x) * std::exp(std::fabs(x)); }

/// sin(x) / x, 1 at 0 and 0 at the infinities (the spherical Bessel function j0).
inline double spherical_bessel_j0(double x) {
  if (std::isinf(x)) return 0;
  return x == 0 ? 1 : std::sin(x) / x;
}

// torch returns NaN at the infinities for J and Y (the C library returns 0) and below 0 for Y.
inline double bessel_j0(double x) { return std::isinf(x) ? kNaN : ::j0(x); }
inline double bessel_j1(double x) { return std::isinf(x) ? kNaN : ::j1(x); }
inline double bessel_y0(double x) { return std::isinf(x) || x < 0 ? kNaN : ::y0(x); }
inline double bessel_y1(double x) { return std::isinf(x) || x < 0 ? kNaN : ::y1(x); }

/// exp(x) K_nu(x) for nu in {0, 1}, x > 0: libstdc++'s K below 500, where exp(x) K(x) can be
/// formed without overflow or underflow (and libstdc++ answers: it throws for large x); Hankel's
/// asymptotic series above, where it converges to double precision within a few terms.
inline double scaled_bessel_k(int nu, double x) {
  if (x < 500) return std::exp(x) * std::cyl_bessel_k(double(nu), x);
  double mu = 4.0 * nu * nu, term = 1, sum = 1;
  for (int k = 1; k < 20; ++k) {
    double odd = 2.0 * k - 1;
    term *= (mu - odd * odd) / (double(k) * 8 * x);
    sum += term;
  }
  return sum * std::sqrt(std::numbers::pi / (2 * x));
}
// K_nu: infinite at 0, undefined below (NaN), 0 at +inf.
inline double bessel_k_edges(double x) { return x == 0 ? kInf : kNaN; }
inline double bessel_k(int nu, double x) {
  if (!(x > 0)) return bessel_k_edges(x);
  if (x < 500) return std::cyl_bessel_k(double(nu), x);
  return x > 800 ? 0 : scaled_bessel_k(nu, x) * std::exp(-x);  // K(800) is below every double
}
inline double modified_bessel_k0(double x) { return bessel_k(0, x); }
inline double modified_bessel_k1(double x) { return bessel_k(1, x); }
inline double scaled_modified_bessel_k0(double x) {
  if (!(x > 0)) return bessel_k_edges(x);
  return x == kInf ? 0 : scaled_bessel_k(0, x);
}
inline double scaled_modified_bessel_k1(double x) {
  if (!(x > 0)) return bessel_k_edges(x);
  return x == kInf ? 0 : scaled_bessel_k(1, x);
}

/// Ai(x) through the Bessel functions of order 1/3 of zeta = 2/3 |x|^(3/2):
/// Ai(x) = sqrt(x / 3) K_1/3(zeta) / pi for x > 0, and (sqrt(|x|) / 2) (J_1/3(zeta) - Y_1/3(zeta)
/// / sqrt(3)) for x < 0 (J_-1/3 written with J_1/3 and Y_1/3). Near 0 the first two Taylor terms
/// (Ai(0), Ai'(0)); NaN at both infinities, as torch's.
inline double airy_ai(double x) {
  constexpr double kAi0 = 0.35502805388781723926, kDAi0 = -0.25881940379280679840;
  if (std::isnan(x) || std::isinf(x)) return kNaN;
  if (std::fabs(x) < 1e-9) return kAi0 + kDAi0 * x;
  double t = std::fabs(x), zeta = 2.0 / 3.0 * t * std::sqrt(t);
  if (std::isinf(zeta)) return 0;  // |x| beyond ~1e205: Ai's envelope is below every double
  if (x > 0) {
    if (zeta > 700) return 0;  // below the smallest double
    return std::sqrt(t / 3) * std::cyl_bessel_k(1.0 / 3, zeta) / std::numbers::pi;
  }
  return std::sqrt(t) / 2 *
         (std::cyl_bessel_j(1.0 / 3, zeta) - std::cyl_neumann(1.0 / 3, zeta) / std::sqrt(3.0));
}

// The classical orthogonal polynomials of degree n (truncated to an integer, as torch's; 0 for
// n < 0), by their three-term recurrences. The Chebyshev families switch to their trigonometric
// forms inside (-1, 1) for larger n, where the recurrence would accumulate rounding.
inline int64_t degree(double n) { return std::isnan(n) ? -1 : int64_t(n); }

template <class Next>
double recur(int64_t n, double p0, double p1, Next next) {
  if (n == 0) return p0;
  for (int64_t k = 1; k < n; ++k) {
    double p2 = next(k, p0, p1);
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

inline double odd_sign(int64_t n) { return n % 2 == 0 ? 1.0 : -1.0; }

inline double chebyshev_t(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  if (std::fabs(x) == 1) return x > 0 ? 1 : odd_sign(n);
  if (n > 6 && std::fabs(x) < 1) return std::cos(double(n) * std::acos(x));
  return recur(n, 1, x, [x](int64_t, double a, double b) { return 2 * x * b - a; });
}
inline double chebyshev_u(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  if (std::fabs(x) == 1) return (x > 0 ? 1 : odd_sign(n)) * double(n + 1);
  if (n > 8 && std::fabs(x) < 1) {
    double th = std::acos(x);
    if (std::sin(th) != 0) return std::sin(double(n + 1) * th) / std::sin(th);
    return double(n + 1) * std::cos(double(n + 1) * th) / x;
  }
  return recur(n, 1, 2 * x, [x](int64_t, double a, double b) { return 2 * x * b - a; });
}
inline double chebyshev_v(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  if (std::fabs(x) == 1) return x > 0 ? 1 : odd_sign(n) * double(2 * n + 1);
  if (n > 8 && std::fabs(x) < 1) {
    double th = std::acos(x);
    if (std::sin(th / 2) != 1) return std::cos((double(n) + 0.5) * th) / std::cos(th / 2);
    return odd_sign(n) * double(2 * n + 1);
  }
  return recur(n, 1, 2 * x - 1, [x](int64_t, double a, double b) { return 2 * x * b - a; });
}
inline double chebyshev_w(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  if (std::fabs(x) == 1) return x > 0 ? double(2 * n + 1) : odd_sign(n);
  if (n > 8 && std::fabs(x) < 1) {
    double th = std::acos(x);
    if (std::cos(th / 2) != 1) return std::sin((double(n) + 0.5) * th) / std::sin(th / 2);
    return x > 0 ? double(2 * n + 1) : odd_sign(n);
  }
  return recur(n, 1, 2 * x + 1, [x](int64_t, double a, double b) { return 2 * x * b - a; });
}
// The shifted families live on [0, 1]: P*(x) = P(2x - 1).
inline double shifted_chebyshev_t(double x, double n) { return chebyshev_t(2 * x - 1, n); }
inline double shifted_chebyshev_u(double x, double n) { return chebyshev_u(2 * x - 1, n); }
inline double shifted_chebyshev_v(double x, double n) { return chebyshev_v(2 * x - 1, n); }
inline double shifted_chebyshev_w(double x, double n) { return chebyshev_w(2 * x - 1, n); }

/// The physicists' Hermite polynomials H_n.
inline double hermite_h(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  return recur(n, 1, 2 * x,
               [x](int64_t k, double a, double b) { return 2 * x * b - 2 * double(k) * a; });
}
/// The probabilists' Hermite polynomials He_n.
inline double hermite_he(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  return recur(n, 1, x, [x](int64_t k, double a, double b) { return x * b - double(k) * a; });
}
inline double laguerre_l(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  if (x == 0) return 1;
  return recur(n, 1, 1 - x, [x](int64_t k, double a, double b) {
    double kd = double(k);
    return ((2 * kd + 1 - x) * b - kd * a) / (kd + 1);
  });
}
inline double legendre_p(double x, double nd) {
  int64_t n = degree(nd);
  if (n < 0) return 0;
  if (std::fabs(x) == 1) return x > 0 || n == 0 ? 1 : odd_sign(n);
  return recur(n, 1, x, [x](int64_t k, double a, double b) {
    double kd = double(k);
    return ((2 * kd + 1) * x * b - kd * a) / (kd + 1);
  });
}

}  // namespace ember::cpu::special
