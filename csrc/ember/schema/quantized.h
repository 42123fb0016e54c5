#pragma once
// Quantized kernels: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
// These are ember's private ops behind ember.ao.nn.quantized: they take the integer values of
// quantized tensors (Note [Quantized tensors] in core/quantizer.h) and their parameters as plain
// arguments; the Python layer builds and unpacks the quantized tensors. Weights are packed once
// (`_ember_qpack`) into the layout of the VNNI GEMM in cpu/quantized.cpp.
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(_ember_quantize,
                 "_ember_quantize(Tensor self, Tensor scales, Tensor zero_points, int axis, int "
                 "qmin, int qmax) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t, int64_t));
EMBER_DECLARE_OP(_ember_dequantize,
                 "_ember_dequantize(Tensor self, Tensor scales, Tensor zero_points, int axis) -> "
                 "Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t));
EMBER_DECLARE_OP(_ember_qpack, "_ember_qpack(Tensor weight, int groups) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t));
EMBER_DECLARE_OP(
    _ember_qlinear,
    "_ember_qlinear(Tensor input, float input_scale, int input_zero_point, Tensor "
    "packed, Tensor col_sums, int out_features, Tensor w_scales, Tensor w_zero_points, "
    "Tensor? bias, float output_scale, int output_zero_point, bool relu) -> Tensor",
    Tensor(const Tensor&, double, int64_t, const Tensor&, const Tensor&, int64_t, const Tensor&,
           const Tensor&, const std::optional<Tensor>&, double, int64_t, bool));
EMBER_DECLARE_OP(_ember_qlinear_dynamic,
                 "_ember_qlinear_dynamic(Tensor input, Tensor packed, Tensor col_sums, int "
                 "out_features, Tensor w_scales, Tensor w_zero_points, Tensor? bias, bool "
                 "reduce_range, bool relu) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, const Tensor&,
                        const Tensor&, const std::optional<Tensor>&, bool, bool));
EMBER_DECLARE_OP(
    _ember_qconv2d,
    "_ember_qconv2d(Tensor input, float input_scale, int input_zero_point, Tensor "
    "packed, Tensor col_sums, int[3] weight_shape, int[2] stride, int[2] padding, "
    "int[2] dilation, int groups, Tensor w_scales, Tensor w_zero_points, Tensor? bias, "
    "float output_scale, int output_zero_point, bool relu) -> Tensor",
    Tensor(const Tensor&, double, int64_t, const Tensor&, const Tensor&, IntArrayRef, IntArrayRef,
           IntArrayRef, IntArrayRef, int64_t, const Tensor&, const Tensor&,
           const std::optional<Tensor>&, double, int64_t, bool));
EMBER_DECLARE_OP(_ember_qconv2d_onednn_pack,
                 "_ember_qconv2d_onednn_pack(Tensor weight, int[4] input_sizes, int[2] stride, "
                 "int[2] padding, int[2] dilation, int groups, Tensor w_scales, float input_scale, "
                 "int input_zero_point, float output_scale, int output_zero_point, bool relu) -> "
                 "Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, int64_t,
                        const Tensor&, double, int64_t, double, int64_t, bool));
EMBER_DECLARE_OP(
    _ember_qconv2d_onednn,
    "_ember_qconv2d_onednn(Tensor input, float input_scale, int input_zero_point, Tensor packed, "
    "Tensor weight, int[2] stride, int[2] padding, int[2] dilation, int groups, Tensor "
    "w_scales, Tensor? bias, float output_scale, int output_zero_point, bool relu) -> Tensor",
    Tensor(const Tensor&, double, int64_t, const Tensor&, const Tensor&, IntArrayRef, IntArrayRef,
           IntArrayRef, int64_t, const Tensor&, const std::optional<Tensor>&, double, int64_t,
           bool));
EMBER_DECLARE_OP(_ember_qmax_pool2d,
                 "_ember_qmax_pool2d(Tensor self, int[2] kernel_size, int[2] stride, int[2] "
                 "padding, int[2] dilation, bool ceil_mode) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool));
EMBER_DECLARE_OP(_ember_qbinary,
                 "_ember_qbinary(Tensor self, float self_scale, int self_zero_point, Tensor other, "
                 "float other_scale, int other_zero_point, int op, float output_scale, int "
                 "output_zero_point, int qmin, int qmax) -> Tensor",
                 Tensor(const Tensor&, double, int64_t, const Tensor&, double, int64_t, int64_t,
                        double, int64_t, int64_t, int64_t));
EMBER_DECLARE_OP(_ember_qchannel_affine,
                 "_ember_qchannel_affine(Tensor self, int zero_point, Tensor mul, Tensor add, int "
                 "output_zero_point, int qmin, int qmax) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, int64_t, int64_t,
                        int64_t));
EMBER_DECLARE_OP(_ember_qembedding_bag,
                 "_ember_qembedding_bag(Tensor weight, Tensor scales, Tensor offsets_q, int bits, "
                 "int dim, Tensor indices, Tensor offsets, int mode, Tensor? per_sample_weights, "
                 "bool include_last_offset) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, int64_t, int64_t,
                        const Tensor&, const Tensor&, int64_t, const std::optional<Tensor>&, bool));

}  // namespace ember::op
