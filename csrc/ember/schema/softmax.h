#pragma once
// Softmax and log-softmax: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(_softmax, "_softmax.ember(Tensor self, int dim) -> Tensor",
                 Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(_log_softmax, "_log_softmax.ember(Tensor self, int dim) -> Tensor",
                 Tensor(const Tensor&, int64_t));
EMBER_DECLARE_OP(
    _softmax_backward_data,
    "_softmax_backward_data.ember(Tensor grad_output, Tensor output, int dim) -> Tensor",
    Tensor(const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(
    _log_softmax_backward_data,
    "_log_softmax_backward_data.ember(Tensor grad_output, Tensor output, int dim) -> Tensor",
    Tensor(const Tensor&, const Tensor&, int64_t));

}  // namespace ember::op
