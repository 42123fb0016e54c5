#pragma once
// Joining, splitting, reordering (ops/shape_ops.cpp).
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// Joins along an existing dim (dtypes promote; 1-d empty tensors are skipped, as in PyTorch).
Tensor cat(TensorList tensors, int64_t dim = 0);
/// Joins equal-shaped tensors along a new dim.
Tensor stack(TensorList tensors, int64_t dim = 0);
/// cat along dim 1 (dim 0 for 1-d inputs), after making 0-d inputs 1-d.
Tensor hstack(TensorList tensors);
/// cat along dim 0 after making inputs at least 2-d.
Tensor vstack(TensorList tensors);
/// Pieces of `split_size` along dim (the last may be smaller).
std::vector<Tensor> split(const Tensor& self, int64_t split_size, int64_t dim = 0);
/// Views of the given sizes along dim.
std::vector<Tensor> split_with_sizes(const Tensor& self, IntArrayRef sizes, int64_t dim = 0);
/// Views of ceil(size / chunks) along dim (fewer than `chunks` pieces when they run out).
std::vector<Tensor> chunk(const Tensor& self, int64_t chunks, int64_t dim = 0);
/// The slices along dim, each without that dim.
std::vector<Tensor> unbind(const Tensor& self, int64_t dim = 0);
/// A copy with the order of elements reversed along `dims`.
Tensor flip(const Tensor& self, IntArrayRef dims);
/// Rotates by `shifts` along `dims` (the flattened tensor if `dims` is empty); dims may repeat.
Tensor roll(const Tensor& self, IntArrayRef shifts, IntArrayRef dims = {});
/// Tiles the tensor `repeats[i]` times along dim i (leading repeats add dims).
Tensor repeat(const Tensor& self, IntArrayRef repeats);
/// Repeats each element (of the flattened tensor if dim is absent) repeats[i] times.
Tensor repeat_interleave(const Tensor& self, const Tensor& repeats,
                         std::optional<int64_t> dim = std::nullopt);
Tensor repeat_interleave(const Tensor& self, int64_t repeats,
                         std::optional<int64_t> dim = std::nullopt);
/// torch.repeat_interleave(repeats): index i repeated repeats[i] times (1-d int tensor).
Tensor repeat_interleave(const Tensor& repeats);
/// repeat with `reps` padded by leading 1s to the tensor's dims.
Tensor tile(const Tensor& self, IntArrayRef reps);
/// Coordinate grids (broadcast views) of 0-d/1-d tensors; "xy" swaps the first two dims.
std::vector<Tensor> meshgrid(TensorList tensors, const std::string& indexing = "ij");
/// A broadcast view with the given shape (expand).
Tensor broadcast_to(const Tensor& self, IntArrayRef shape);

// Internal (the derivatives of the sort family and repeat_interleave use them; the index
// family's gather/scatter are the public twins). `index` is int64 with the operand's sizes in
// every dim but `dim`.
/// out[..., j, ...] = self[..., index[..., j, ...], ...] along dim.
Tensor _take_along_dim(const Tensor& self, int64_t dim, const Tensor& index);
/// Zeros with `size` in dim, then out[..., index[..., j, ...], ...] += src[..., j, ...].
Tensor _place_along_dim(const Tensor& src, int64_t dim, const Tensor& index, int64_t size);

}  // namespace ember
