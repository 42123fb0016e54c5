#pragma once
// Pooling (torch.nn.functional.max_pool*, avg_pool*, adaptive_*_pool*). 1-d forms are the 2-d
// kernels over a height of 1. An empty `stride` means stride = kernel_size.
#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// Max over sliding windows of (N, C, L) or (C, L) input.
Tensor max_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
/// Max over sliding windows of (N, C, H, W) or (C, H, W) input.
Tensor max_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, IntArrayRef dilation = {1}, bool ceil_mode = false);
/// max_pool1d and the position (within L) of each maximum.
std::tuple<Tensor, Tensor> max_pool1d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {},
                                                   IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);
/// max_pool2d and the flat position (within H * W) of each maximum.
std::tuple<Tensor, Tensor> max_pool2d_with_indices(const Tensor& input, IntArrayRef kernel_size,
                                                   IntArrayRef stride = {},
                                                   IntArrayRef padding = {0},
                                                   IntArrayRef dilation = {1},
                                                   bool ceil_mode = false);
/// Mean over sliding windows of (N, C, L) or (C, L) input.
Tensor avg_pool1d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, bool ceil_mode = false, bool count_include_pad = true);
/// Mean over sliding windows of (N, C, H, W) or (C, H, W) input; divisor_override replaces the
/// window size as divisor.
Tensor avg_pool2d(const Tensor& input, IntArrayRef kernel_size, IntArrayRef stride = {},
                  IntArrayRef padding = {0}, bool ceil_mode = false, bool count_include_pad = true,
                  std::optional<int64_t> divisor_override = std::nullopt);
/// Mean over adaptive windows giving an output of length `output_size`.
Tensor adaptive_avg_pool1d(const Tensor& input, IntArrayRef output_size);
/// Mean over adaptive windows giving an (oH, oW) output.
Tensor adaptive_avg_pool2d(const Tensor& input, IntArrayRef output_size);
/// Max over adaptive windows and the position (within L) of each maximum.
std::tuple<Tensor, Tensor> adaptive_max_pool1d(const Tensor& input, IntArrayRef output_size);
/// Max over adaptive windows and the flat position (within H * W) of each maximum.
std::tuple<Tensor, Tensor> adaptive_max_pool2d(const Tensor& input, IntArrayRef output_size);

}  // namespace ember
