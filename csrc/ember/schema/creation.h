#pragma once
// Filling new tensors: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(_arange_fill,
                 "_arange_fill(Tensor(a!) self, Scalar start, Scalar step) -> Tensor(a!)",
                 Tensor&(Tensor&, const Scalar&, const Scalar&));

}  // namespace ember::op
