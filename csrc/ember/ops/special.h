#pragma once
// Special functions (torch.special): integer inputs compute in the default float dtype.
#include "ember/core/tensor.h"
#include "ember/schema/special.h"

namespace ember {

/// log |Gamma(x)|.
Tensor lgamma(const Tensor& self);
/// The logarithmic derivative of Gamma.
Tensor digamma(const Tensor& self);
/// The n-th derivative of digamma (n >= 0).
Tensor polygamma(int64_t n, const Tensor& self);
/// The modified Bessel function of the first kind of order 0.
Tensor i0(const Tensor& self);
/// exp(-|x|) * i0(x).
Tensor special_i0e(const Tensor& self);
/// The modified Bessel function of the first kind of order 1.
Tensor special_i1(const Tensor& self);
/// exp(-|x|) * i1(x).
Tensor special_i1e(const Tensor& self);
/// The two-argument special functions of schema/special.h's EMBER_SPECIAL_BINARY_OPS:
/// special_zeta(self, other), special_chebyshev_polynomial_t(x, n), ...
#define EMBER_DECLARE_SPECIAL_BINARY_FN(name, a, b, ...) \
  Tensor name(const Tensor& a, const Tensor& b);
EMBER_SPECIAL_BINARY_OPS(EMBER_DECLARE_SPECIAL_BINARY_FN)
#undef EMBER_DECLARE_SPECIAL_BINARY_FN

}  // namespace ember
