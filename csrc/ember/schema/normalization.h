#pragma once
// Batch and layer normalization: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(
    native_batch_norm,
    "native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? "
    "running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)",
    std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const std::optional<Tensor>&,
                                       const std::optional<Tensor>&, const std::optional<Tensor>&,
                                       const std::optional<Tensor>&, bool, double, double));
EMBER_DECLARE_OP(native_batch_norm_backward,
                 "native_batch_norm_backward.ember(Tensor grad_out, Tensor input, Tensor? weight, "
                 "Tensor save_mean, Tensor save_invstd, bool train) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&,
                                                    const std::optional<Tensor>&, const Tensor&,
                                                    const Tensor&, bool));
EMBER_DECLARE_OP(native_layer_norm,
                 "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, "
                 "Tensor? bias, float eps) -> (Tensor, Tensor, Tensor)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, IntArrayRef,
                                                    const std::optional<Tensor>&,
                                                    const std::optional<Tensor>&, double));
EMBER_DECLARE_OP(
    native_layer_norm_backward,
    "native_layer_norm_backward.ember(Tensor grad_out, Tensor input, int[] normalized_shape, "
    "Tensor mean, Tensor rstd, Tensor? weight) -> (Tensor, Tensor, Tensor)",
    std::tuple<Tensor, Tensor, Tensor>(const Tensor&, const Tensor&, IntArrayRef, const Tensor&,
                                       const Tensor&, const std::optional<Tensor>&));

}  // namespace ember::op
