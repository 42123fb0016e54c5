#pragma once
// Fused recurrent layers: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(_rnn_layer,
                 "_rnn_layer(Tensor input, Tensor hx, Tensor cx, Tensor w_ih, Tensor w_hh, Tensor "
                 "b_ih, Tensor b_hh, int mode, bool reverse) -> (Tensor output, Tensor h_n, Tensor "
                 "c_n, Tensor saved, Tensor cells)",
                 std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,
                                                                    const Tensor&, const Tensor&,
                                                                    const Tensor&, const Tensor&,
                                                                    const Tensor&, int64_t, bool));
EMBER_DECLARE_OP(
    _rnn_layer_backward,
    "_rnn_layer_backward(Tensor input, Tensor hx, Tensor cx, Tensor w_ih, Tensor w_hh, Tensor "
    "output, Tensor saved, Tensor cells, Tensor grad_output, Tensor grad_h_n, Tensor grad_c_n, int "
    "mode, bool reverse, bool[7] output_mask) -> Tensor[]",
    std::vector<Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        const Tensor&, int64_t, bool, std::array<bool, 7>));

}  // namespace ember::op
