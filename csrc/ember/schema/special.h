#pragma once
// Special functions: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(lgamma, "lgamma(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(digamma, "digamma(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(i0, "i0(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(special_i0e, "special_i0e(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(special_i1, "special_i1(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(special_i1e, "special_i1e(Tensor self) -> Tensor", Tensor(const Tensor&));
EMBER_DECLARE_OP(polygamma, "polygamma(int n, Tensor self) -> Tensor",
                 Tensor(int64_t, const Tensor&));

}  // namespace ember::op
