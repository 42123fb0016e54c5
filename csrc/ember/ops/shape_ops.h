#pragma once
// Joining, splitting, reordering; scans; sorting and counting.
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

/// Prefix sums; integer and bool inputs accumulate and return int64 unless `dtype` is given.
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// log(cumsum(exp(self))) along dim, without overflow or underflow of the early prefixes.
Tensor logcumsumexp(const Tensor& self, int64_t dim);
/// Prefix products, with cumsum's dtype rule.
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// Running maximum and the index where it was (the latest on ties); NaN propagates.
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);

/// (values, indices) sorted along dim; NaN sorts as the largest value; always stable.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false,
                                bool stable = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false, bool stable = false);
/// The k largest (or smallest) values along dim and their indices.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);
/// The k-th smallest value (1-based) along dim and its index.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
/// The lower median of all elements.
Tensor median(const Tensor& self);
/// The lower median along dim and its index (a row with NaN gives its first NaN).
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
/// The most frequent value along dim (the smallest on ties) and the last index holding it.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);
/// (values, inverse, counts); inverse/counts are undefined unless requested. Values come out
/// sorted even when `sorted` is false (any order is allowed then); each NaN is its own value.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false,
                                          std::optional<int64_t> dim = std::nullopt);
/// Occurrences (or summed weights) of each value of a 1-d non-negative integer tensor.
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = std::nullopt,
                int64_t minlength = 0);
/// Histogram with `bins` equal bins over [min, max] (the data's range when min == max).
Tensor histc(const Tensor& self, int64_t bins = 100, double min = 0, double max = 0);

// Internal (the derivatives of the sort family and repeat_interleave use them; the index
// family's gather/scatter are the public twins). `index` is int64 with the operand's sizes in
// every dim but `dim`.
/// out[..., j, ...] = self[..., index[..., j, ...], ...] along dim.
Tensor _take_along_dim(const Tensor& self, int64_t dim, const Tensor& index);
/// Zeros with `size` in dim, then out[..., index[..., j, ...], ...] += src[..., j, ...].
Tensor _place_along_dim(const Tensor& src, int64_t dim, const Tensor& index, int64_t size);

}  // namespace ember
