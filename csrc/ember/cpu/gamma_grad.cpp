// Reparameterized gradients of gamma and Dirichlet draws, as torch approximates them, so that
// Gamma/Dirichlet/Beta.rsample backpropagate torch's values bit for bit.
//
// Note [torch's gamma gradients]
// d x / d alpha of a Gamma(alpha, 1) draw x is a Taylor series below x = 0.8, Rice's saddle point
// expansion for alpha > 8 and a bivariate rational fit elsewhere, in double. A Dirichlet draw's
// gradient goes through its Beta(alpha, total - alpha) marginal: series near x = 0 and x = 1,
// a saddle point expansion for both parameters above 6, else a rational correction of an
// analytic approximation. torch evaluates the Beta series in the tensor's type (float for
// float32, with float logs and powers) and the rest in double; S below is that type.
#include <cmath>
#include <limits>
#include <numbers>

#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/random.h"

namespace ember::cpu {

namespace {

constexpr uint32_t kGradTypes = type_bit(kFloat) | type_bit(kDouble);

// Cephes' digamma: recurrence up to 10, then the asymptotic series; x steps in S, sums in double.
template <class S>
S digamma_one(S x) {
  if (x == 0) return std::numeric_limits<S>::infinity();
  double reflection = 0;
  if (x < 0) {
    if (x == std::floor(x)) return std::numeric_limits<S>::infinity();
    reflection = -std::numbers::pi_v<S> / std::tan(std::numbers::pi_v<S> * x);
    x = 1 - x;
  }
  double result = 0;
  for (; x < 10; x += 1) result -= 1 / x;
  if (x == 10) return S(result + 2.25175258906672110764 + reflection);
  static constexpr double kA[] = {8.33333333333333333333E-2, -2.10927960927960927961E-2,
                                  7.57575757575757575758E-3, -4.16666666666666666667E-3,
                                  3.96825396825396825397E-3, -8.33333333333333333333E-3,
                                  8.33333333333333333333E-2};
  double y = 0;
  if (x < 1.0e17f) {
    const double z = 1.0 / (x * x);
    double poly = 0;
    for (double coef : kA) poly = poly * z + coef;
    y = z * poly;
  }
  return S(result + std::log(x) - (0.5f / x) - y + reflection);
}

double gamma_grad_one(double alpha, double x) {
  if (x < 0.8f) {
    double numer = 1, denom = alpha;
    double series1 = numer / denom, series2 = numer / (denom * denom);
    for (int i = 1; i <= 5; ++i) {
      numer *= -x / double(i);
      denom += 1;
      series1 += numer / denom;
      series2 += numer / (denom * denom);
    }
    const double pow_x_alpha = std::pow(x, alpha);
    const double pdf = std::pow(x, alpha - 1) * std::exp(-x);
    const double cdf = pow_x_alpha * series1;
    const double cdf_alpha = (std::log(x) - digamma_one(alpha)) * cdf - pow_x_alpha * series2;
    const double result = -cdf_alpha / pdf;
    return std::isnan(result) ? 0.0 : result;
  }
  if (alpha > 8.0f) {
    if (0.9f * alpha <= x && x <= 1.1f * alpha) {
      const double numer_1 = 1 + 24 * alpha * (1 + 12 * alpha);
      const double numer_2 = 1440 * (alpha * alpha) + 6 * x * (53 - 120 * x) - 65 * x * x / alpha +
                             alpha * (107 + 3600 * x);
      const double denom = 1244160 * (alpha * alpha) * (alpha * alpha);
      return numer_1 * numer_2 / denom;
    }
    const double denom = std::sqrt(8 * alpha), term2 = denom / (alpha - x);
    const double term3 = std::pow(x - alpha - alpha * std::log(x / alpha), -1.5);
    const double term23 = x < alpha ? term2 - term3 : term2 + term3;
    const double term1 = std::log(x / alpha) * term23 -
                         std::sqrt(2 / alpha) * (alpha + x) / ((alpha - x) * (alpha - x));
    const double stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha));
    return -stirling * (x * term1) / denom;
  }
  const double u = std::log(x / alpha), v = std::log(alpha);
  static constexpr double kCoef[3][8] = {
      {0.16009398, -0.094634809, 0.025146376, -0.0030648343, 1, 0.32668115, 0.10406089,
       0.0014179084},
      {0.53487893, 0.1298071, 0.065735949, -0.0015649758, 0.16639465, 0.020070113, -0.0035938915,
       -0.00058392623},
      {0.040121004, -0.0065914022, -0.0026286047, -0.0013441777, 0.017050642, -0.0021309326,
       0.00085092367, -1.5247877e-07},
  };
  double cv[8];
  for (int i = 0; i < 8; ++i) cv[i] = kCoef[0][i] + u * (kCoef[1][i] + u * kCoef[2][i]);
  const double p = cv[0] + v * (cv[1] + v * (cv[2] + v * cv[3]));
  const double q = cv[4] + v * (cv[5] + v * (cv[6] + v * cv[7]));
  return std::exp(p / q);
}

// Beta(alpha, beta)'s gradient in alpha for x near 0 (Taylor series).
template <class S>
S beta_grad_alpha_small(S x, S alpha, S beta) {
  const S factor = digamma_one<S>(alpha) - digamma_one<S>(alpha + beta) - std::log(x);
  S numer = 1;
  S series = numer / alpha * (factor + 1 / alpha);
  for (int i = 1; i <= 10; ++i) {
    const S si = S(i);
    numer *= (si - beta) * x / si;
    const S denom = alpha + si;
    series += numer / denom * (factor + 1 / denom);
  }
  const S result = x * std::pow(1 - x, -beta) * series;
  return std::isnan(result) ? S(0) : result;
}

// Beta(alpha, beta)'s gradient in beta for x near 0 (Taylor series).
template <class S>
S beta_grad_beta_small(S x, S alpha, S beta) {
  const S factor = digamma_one<S>(alpha + beta) - digamma_one<S>(beta);
  S numer = 1, betas = 1, dbetas = 0, series = factor / alpha;
  for (int i = 1; i <= 8; ++i) {
    const S si = S(i);
    numer *= -x / si;
    dbetas = dbetas * (beta - si) + betas;
    betas = betas * (beta - si);
    series += numer / (alpha + si) * (dbetas + factor * betas);
  }
  const S result = -std::pow(1 - x, 1 - beta) * series;
  return std::isnan(result) ? S(0) : result;
}

// Beta(alpha, beta)'s gradient in alpha for both large (Rice saddle point), in double.
double beta_grad_alpha_mid(double x, double alpha, double beta) {
  const double total = alpha + beta, mean = alpha / total;
  const double std = std::sqrt(alpha * beta / (total + 1)) / total;
  if (mean - 0.1 * std <= x && x <= mean + 0.1 * std) {  // the expansion is singular at the mean
    const double poly = 47 * x * (beta * beta) * (beta * beta) +
                        alpha * ((43 + 20 * (16 + 27 * beta) * x) * (beta * beta) * beta +
                                 alpha * (3 * (59 + 180 * beta - 90 * x) * (beta * beta) +
                                          alpha * ((453 + 1620 * beta * (1 - x) - 455 * x) * beta +
                                                   alpha * (8 * (1 - x) * (135 * beta - 11)))));
    const double prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total);
    const double prefactor_den = 12960 * alpha * alpha * alpha * beta * beta * (1 + 12 * total);
    return prefactor_num / (1 - x) * poly / prefactor_den;
  }
  const double prefactor = -x / std::sqrt(2 * alpha * beta / total);
  const double stirling = (1 + 1 / (12 * alpha) + 1 / (288 * alpha * alpha)) *
                          (1 + 1 / (12 * beta) + 1 / (288 * beta * beta)) /
                          (1 + 1 / (12 * total) + 1 / (288 * total * total));
  const double term1_num =
      2 * (alpha * alpha) * (x - 1) + alpha * beta * (x - 1) - x * (beta * beta);
  const double axbx = alpha * (x - 1) + beta * x;
  const double term1_den =
      std::sqrt(2 * alpha / beta) * std::pow(total, double(1.5f)) * axbx * axbx;
  const double term1 = term1_num / term1_den;
  const double term2 = 0.5f * std::log(alpha / (total * x));
  const double term3 = std::sqrt(8 * alpha * beta / total) / (beta * x + alpha * (x - 1));
  const double term4_base =
      beta * std::log(beta / (total * (1 - x))) + alpha * std::log(alpha / (total * x));
  const double term4 = std::pow(term4_base, double(-1.5f));
  const double term1234 = term1 + term2 * (term3 + (x < mean ? term4 : -term4));
  return stirling * prefactor * term1234;
}

// torch's fitted coefficients of the rational correction: [numerator or denominator][power of
// log x][power of log(alpha / x)][power of log(total) - log(alpha / x)].
constexpr double kDirichletCoef[2][3][3][4] = {
    {{{1.003668233, -0.01061107488, -0.0657888334, 0.01201642863},
      {0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033},
      {-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013}},
     {{0.221950385, -0.3187676331, 0.01799915743, 0.01074823814},
      {-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057},
      {0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05}},
     {{-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565},
      {0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181},
      {0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05}}},
    {{{1, -0.02924021934, -0.04438342661, 0.007285809825},
      {0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521},
      {-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149}},
     {{0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273},
      {0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956},
      {-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05}},
     {{0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05},
      {0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05},
      {-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06}}},
};

// -(d/dalpha of the Beta(alpha, total - alpha) cdf at x) / pdf(x) / (1 - x).
template <class S>
S dirichlet_grad_one(S x, S alpha, S total) {
  const S beta = total - alpha, boundary = total * x * (1 - x);
  if (x <= 0.5f && boundary < 2.5f) return beta_grad_alpha_small<S>(x, alpha, beta);
  if (x >= 0.5f && boundary < 0.75f) return -beta_grad_beta_small<S>(1 - x, beta, alpha);
  const double xd = x, ad = alpha, td = total, bd = td - ad;
  if (alpha > 6 && beta > 6) return S(beta_grad_alpha_mid(xd, ad, bd));
  const double u = std::log(xd), a = std::log(ad) - u, b = std::log(td) - a;
  const double pow_u[3] = {1, u, u * u}, pow_a[3] = {1, a, a * a};
  double p = 0, q = 0;
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 3; ++j) {
      const double ua = pow_u[i] * pow_a[j];
      const double* cp = kDirichletCoef[0][i][j];
      const double* cq = kDirichletCoef[1][i][j];
      p += ua * (cp[0] + b * (cp[1] + b * (cp[2] + b * cp[3])));
      q += ua * (cq[0] + b * (cq[1] + b * (cq[2] + b * cq[3])));
    }
  }
  const double approx = xd * (digamma_one<S>(S(td)) - digamma_one<S>(S(ad))) / bd;
  return S(p / q * approx);
}

Tensor standard_gamma_grad_kernel(const Tensor& alpha, const Tensor& x) {
  Tensor out = empty(alpha.sizes(), alpha.dtype(), alpha.device());
  dispatch<kGradTypes>(alpha.dtype(), "_standard_gamma_grad_cpu", [&](auto tag) {
    using T = decltype(tag);
    Tensor a = contiguous(alpha.detach());
    Tensor v = contiguous(to_dtype(x.detach(), alpha.dtype()).expand(alpha.sizes()));
    const T *ap = a.data_ptr<T>(), *vp = v.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = T(gamma_grad_one(ap[i], vp[i]));
  });
  return out;
}

Tensor dirichlet_grad_kernel(const Tensor& x, const Tensor& alpha, const Tensor& total) {
  Tensor out = empty(x.sizes(), x.dtype(), x.device());
  dispatch<kGradTypes>(x.dtype(), "_dirichlet_grad_cpu", [&](auto tag) {
    using T = decltype(tag);
    Tensor xs = contiguous(x.detach());
    Tensor as = contiguous(to_dtype(alpha.detach(), x.dtype()).expand(x.sizes()));
    Tensor ts = contiguous(to_dtype(total.detach(), x.dtype()).expand(x.sizes()));
    const T *xp = xs.data_ptr<T>(), *ap = as.data_ptr<T>(), *tp = ts.data_ptr<T>();
    T* o = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] = dirichlet_grad_one<T>(xp[i], ap[i], tp[i]);
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_standard_gamma_grad, CPU, standard_gamma_grad_kernel);
EMBER_REGISTER_KERNEL(op::_dirichlet_grad, CPU, dirichlet_grad_kernel);

}  // namespace ember::cpu
