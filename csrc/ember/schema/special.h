#pragma once
// Special functions: operator declarations (Note [Op schemas] in dispatch/op_schema.h). The
// one-argument ones (lgamma, digamma, i0, special_i0e, ...) are rows of the unary table,
// schema/unary.h.
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(polygamma, "polygamma(int n, Tensor self) -> Tensor",
                 Tensor(int64_t, const Tensor&));

}  // namespace ember::op
