#pragma once
// Special functions: operator declarations (Note [Op schemas] in dispatch/op_schema.h). The
// one-argument ones (lgamma, digamma, i0, special_i0e, ...) are rows of the unary table,
// schema/unary.h.
#include "ember/dispatch/dispatcher.h"

// The two-argument special functions, one row each: _(name, first, second, math, doc). Each is
// f(first, second) of double, computed over the broadcast inputs in their promoted dtype
// (integers in the default float dtype), float and double only, as torch's. The polynomials take
// their degree n truncated to an integer and record no graph, as torch's; zeta's derivative is
// in ops/special.cpp.
#define EMBER_SPECIAL_BINARY_OPS(_)                                                              \
  _(special_zeta, self, other, special::zeta,                                                    \
    "The Hurwitz zeta function, the sum over k >= 0 of (k + other)^-self.")                      \
  _(special_chebyshev_polynomial_t, x, n, special::chebyshev_t,                                  \
    "The Chebyshev polynomial of the first kind T_n(x).")                                        \
  _(special_chebyshev_polynomial_u, x, n, special::chebyshev_u,                                  \
    "The Chebyshev polynomial of the second kind U_n(x).")                                       \
  _(special_chebyshev_polynomial_v, x, n, special::chebyshev_v,                                  \
    "The Chebyshev polynomial of the third kind V_n(x).")                                        \
  _(special_chebyshev_polynomial_w, x, n, special::chebyshev_w,                                  \
    "The Chebyshev polynomial of the fourth kind W_n(x).")                                       \
  _(special_shifted_chebyshev_polynomial_t, x, n, special::shifted_chebyshev_t,                  \
    "The shifted Chebyshev polynomial of the first kind T*_n(x) = T_n(2x - 1).")                 \
  _(special_shifted_chebyshev_polynomial_u, x, n, special::shifted_chebyshev_u,                  \
    "The shifted Chebyshev polynomial of the second kind U*_n(x) = U_n(2x - 1).")                \
  _(special_shifted_chebyshev_polynomial_v, x, n, special::shifted_chebyshev_v,                  \
    "The shifted Chebyshev polynomial of the third kind V*_n(x) = V_n(2x - 1).")                 \
  _(special_shifted_chebyshev_polynomial_w, x, n, special::shifted_chebyshev_w,                  \
    "The shifted Chebyshev polynomial of the fourth kind W*_n(x) = W_n(2x - 1).")                \
  _(special_hermite_polynomial_h, x, n, special::hermite_h,                                      \
    "The physicists' Hermite polynomial H_n(x).")                                                \
  _(special_hermite_polynomial_he, x, n, special::hermite_he,                                    \
    "The probabilists' Hermite polynomial He_n(x).")                                             \
  _(special_laguerre_polynomial_l, x, n, special::laguerre_l, "The Laguerre polynomial L_n(x).") \
  _(special_legendre_polynomial_p, x, n, special::legendre_p, "The Legendre polynomial P_n(x).")

namespace ember::op {

EMBER_DECLARE_OP(polygamma, "polygamma(int n, Tensor self) -> Tensor",
                 Tensor(int64_t, const Tensor&));
// Each with its out= form, the kernel (Note [Meta step] in ops/meta.h).
#define EMBER_DECLARE_SPECIAL_BINARY(name, a, b, ...)                                           \
  EMBER_DECLARE_OP(name, #name "(Tensor " #a ", Tensor " #b ") -> Tensor",                      \
                   Tensor(const Tensor&, const Tensor&));                                       \
  EMBER_DECLARE_OP(name##_out,                                                                  \
                   #name ".out(Tensor " #a ", Tensor " #b ", *, Tensor(a!) out) -> Tensor(a!)", \
                   Tensor&(const Tensor&, const Tensor&, Tensor&));
EMBER_SPECIAL_BINARY_OPS(EMBER_DECLARE_SPECIAL_BINARY)
#undef EMBER_DECLARE_SPECIAL_BINARY

}  // namespace ember::op
