#pragma once
// Padding, interpolation, sliding-window extraction (im2col/col2im) and embeddings
// (torch.nn.functional.pad, interpolate, unfold, fold, embedding, embedding_bag).
#include <optional>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

/// Pads the last len(pad)/2 dims, (left, right) pairs from the last dim backwards; modes
/// "constant" (negative pads crop), "reflect", "replicate" and "circular".
Tensor pad(const Tensor& input, IntArrayRef pad, std::string_view mode = "constant",
           std::optional<double> value = std::nullopt);
/// Sliding blocks of (N, C, H, W) or (C, H, W) input as columns: (N, C * kH * kW, L).
Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride);
/// Sums columns (N, C * kH * kW, L) or (C * kH * kW, L) back into an image of `output_size`.
Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride);
/// Nearest-neighbour resize of the trailing 1 to 3 dims to `output_size`; `scales` (one per dim,
/// optional) replace in/out as the source step, as when interpolate gets a scale_factor.
/// `exact` selects "nearest-exact" (pixel centres) over "nearest".
Tensor upsample_nearest(const Tensor& input, IntArrayRef output_size,
                        ArrayRef<std::optional<double>> scales = {}, bool exact = false);
/// Linear, bilinear or trilinear (1 to 3 trailing dims) resize to `output_size`.
Tensor upsample_linear(const Tensor& input, IntArrayRef output_size, bool align_corners,
                       ArrayRef<std::optional<double>> scales = {});
/// Bicubic resize of (N, C, H, W) (cubic convolution, a = -0.75), as F.interpolate(mode="bicubic").
Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          ArrayRef<std::optional<double>> scales = {});
/// Rows of `weight` picked by `indices`; no gradient reaches row `padding_idx` (-1: none).
Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx = -1,
                 bool scale_grad_by_freq = false, bool sparse = false);
/// Sums, means or maxima of bags of embedding rows: 2-d `indices` (one bag per row) or 1-d with
/// `offsets` (bag starts). per_sample_weights scale rows (mode "sum" only); rows equal to
/// padding_idx are left out of their bag; empty bags give zeros.
Tensor embedding_bag(const Tensor& weight, const Tensor& indices,
                     const std::optional<Tensor>& offsets = std::nullopt,
                     bool scale_grad_by_freq = false, std::string_view mode = "mean",
                     bool sparse = false,
                     const std::optional<Tensor>& per_sample_weights = std::nullopt,
                     bool include_last_offset = false, int64_t padding_idx = -1);

}  // namespace ember
