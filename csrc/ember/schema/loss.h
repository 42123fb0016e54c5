#pragma once
// Losses with fused kernels: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(_nll_loss_index,
                 "_nll_loss_index(Tensor self, Tensor target, Tensor? weight, int reduction, int "
                 "ignore_index) -> (Tensor output, Tensor total_weight)",
                 std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&,
                                            const std::optional<Tensor>&, int64_t, int64_t));
EMBER_DECLARE_OP(_nll_loss_index_backward,
                 "_nll_loss_index_backward(Tensor grad_output, Tensor target, Tensor? weight, int "
                 "reduction, int ignore_index, Tensor total_weight, int num_classes) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const std::optional<Tensor>&, int64_t,
                        int64_t, const Tensor&, int64_t));
EMBER_DECLARE_OP(
    _cross_entropy_index,
    "_cross_entropy_index(Tensor self, Tensor target, Tensor? weight, int reduction, int "
    "ignore_index, float label_smoothing) -> (Tensor output, Tensor lse, Tensor total_weight)",
    std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, const std::optional<Tensor>&,
                                       int64_t, int64_t, double));
EMBER_DECLARE_OP(_cross_entropy_index_backward,
                 "_cross_entropy_index_backward(Tensor grad_output, Tensor self, Tensor target, "
                 "Tensor? weight, int reduction, int ignore_index, float label_smoothing, Tensor "
                 "lse, Tensor total_weight) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const std::optional<Tensor>&,
                        int64_t, int64_t, double, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(
    _ctc_loss,
    "_ctc_loss.ember(Tensor log_probs, Tensor targets, Tensor target_offsets, Tensor "
    "input_lengths, Tensor target_lengths, int blank, bool zero_infinity) -> (Tensor, Tensor)",
    std::tuple<Tensor, Tensor>(const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                               const Tensor&, int64_t, bool));
EMBER_DECLARE_OP(_ctc_loss_backward,
                 "_ctc_loss_backward.ember(Tensor grad, Tensor log_probs, Tensor targets, Tensor "
                 "target_offsets, Tensor input_lengths, Tensor target_lengths, Tensor log_alpha, "
                 "int blank, bool zero_infinity) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&, const Tensor&,
                        const Tensor&, const Tensor&, int64_t, bool));

}  // namespace ember::op
