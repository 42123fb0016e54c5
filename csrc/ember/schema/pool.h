#pragma once
// Pooling: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(max_pool2d_with_indices,
                 "max_pool2d_with_indices(Tensor self, int[2] kernel_size, int[2] stride=[], "
                 "int[2] padding=0, int[2] dilation=1, bool ceil_mode=False) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef,
                                            IntArrayRef, bool));
EMBER_DECLARE_OP(adaptive_max_pool2d,
                 "adaptive_max_pool2d(Tensor self, int[2] output_size) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(
    max_pool2d_backward,
    "max_pool2d_backward(Tensor grad_output, Tensor indices, int[] input_size) -> Tensor",
    Tensor(const Tensor&, const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(
    avg_pool2d,
    "avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool "
    "ceil_mode=False, bool count_include_pad=True, int? divisor_override=None) -> Tensor",
    Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, bool, bool,
           std::optional<int64_t>));
EMBER_DECLARE_OP(avg_pool2d_backward,
                 "avg_pool2d_backward.ember(Tensor grad_output, int[] input_size, int[2] "
                 "kernel_size, int[2] stride, int[2] padding, bool ceil_mode, bool "
                 "count_include_pad, int? divisor_override) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool,
                        bool, std::optional<int64_t>));
EMBER_DECLARE_OP(adaptive_avg_pool2d,
                 "adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(adaptive_avg_pool2d_backward,
                 "adaptive_avg_pool2d_backward(Tensor grad_output, int[] input_size) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef));

}  // namespace ember::op
