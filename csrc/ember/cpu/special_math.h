#pragma once
// Scalar special functions (double precision) behind the special ops' kernels: the gamma family
// and the modified Bessel functions of the first kind, with torch's values at poles and edges.
#include <cmath>
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

}  // namespace ember::cpu::special
