#pragma once
// The quantized paths of the bindings (quantized.cpp): the ops torch has QuantizedCPU kernels for,
// which a binding sends a quantized input to (the dispatcher runs only integer moves on one).
#include <optional>
#include <string_view>
#include <vector>

#include <nanobind/nanobind.h>

#include "ember/core/tensor.h"

namespace ember::py {

// Note [Quantized unary ops]
bool has_quantized_kernel(std::string_view name);
Tensor quantized_unary(std::string_view name, const Tensor& t);
void quantized_unary_(std::string_view name, Tensor& t);
Tensor quantized_clamp(const Tensor& t, std::optional<double> lo, std::optional<double> hi);
Tensor quantized_mean(const Tensor& t, std::vector<int64_t> dims, bool keepdim);
/// Raises torch's NotImplementedError for an op without a QuantizedCPU kernel.
[[noreturn]] void no_quantized_kernel(std::string_view aten_name);

// Note [Quantized fills, copies and comparisons]
/// The float32 values of a quantized tensor; any other tensor unchanged.
Tensor dequantized(const Tensor& t);
void quantized_copy_from_float(Tensor& q, const Tensor& src);
void quantized_fill_(Tensor& q, const Tensor& value);
Tensor quantized_masked_fill(const Tensor& q, const Tensor& mask, const Tensor& value,
                             bool inplace);
void check_extreme_per_tensor(const Tensor& t, bool is_max);
Tensor quantized_extreme(const Tensor& t, bool is_max);
void check_quantized_bounds(const Tensor& q, std::string_view op, nanobind::handle lo,
                            nanobind::handle hi, bool has_kernel);

}  // namespace ember::py
