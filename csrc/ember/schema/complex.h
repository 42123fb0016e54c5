#pragma once
// Complex numbers and FFTs: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(conj_physical, "conj_physical(Tensor self) -> Tensor", Tensor(const Tensor&));
// normalization: 0 none, 1 by 1/sqrt(n), 2 by 1/n (n the product of the transformed sizes).
EMBER_DECLARE_OP(_fft_c2c,
                 "_fft_c2c(Tensor self, int[] dim, int normalization, bool forward) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, int64_t, bool));

// Real-input transforms without autograd (ember.fft takes them when no gradient is needed):
// r2c transforms dim.back() of a real tensor to its n // 2 + 1 non-negative frequencies, then the
// other dims (onesided=False: all n frequencies); c2r inverts the other dims, then dim.back() to
// last_dim_size real values.
EMBER_DECLARE_OP(_fft_r2c,
                 "_fft_r2c(Tensor self, int[] dim, int normalization, bool onesided) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, int64_t, bool));
EMBER_DECLARE_OP(_fft_c2r,
                 "_fft_c2r(Tensor self, int[] dim, int normalization, int last_dim_size) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, int64_t, int64_t));

}  // namespace ember::op
