#pragma once
// Copying and filling: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(copy_, "copy_(Tensor(a!) self, Tensor src) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&));
EMBER_DECLARE_OP(fill_, "fill_.Scalar(Tensor(a!) self, Scalar value) -> Tensor(a!)",
                 Tensor&(Tensor&, const Scalar&));

}  // namespace ember::op
