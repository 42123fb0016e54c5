#pragma once
// Views: new geometry over the same storage (no copies), plus the ops that copy only if needed.
#include "ember/core/tensor.h"

namespace ember {

/// Same data, new shape; one dim may be -1. Raises if the strides don't allow a view.
Tensor view(const Tensor& self, IntArrayRef shape);
/// Reinterprets the same bytes as another dtype of equal size.
Tensor view_dtype(const Tensor& self, ScalarType dtype);
/// A complex tensor's memory as real pairs (a trailing dim of 2), and back; both are views.
/// self seen through a new tensor with the same geometry (torch's aten::alias; node
/// AliasBackward0): what as_subclass gives a tensor that requires grad.
Tensor alias(const Tensor& self);
Tensor view_as_real(const Tensor& self);
Tensor view_as_complex(const Tensor& self);
/// A view when possible, else a contiguous copy.
Tensor reshape(const Tensor& self, IntArrayRef shape);
Tensor transpose(const Tensor& self, int64_t dim0, int64_t dim1);
/// Transpose of a <= 2-d tensor.
Tensor t(const Tensor& self);
Tensor permute(const Tensor& self, IntArrayRef dims);
/// Removes all size-1 dims, or those in `dims`.
Tensor squeeze(const Tensor& self);
Tensor squeeze(const Tensor& self, IntArrayRef dims);
Tensor unsqueeze(const Tensor& self, int64_t dim);
/// Broadcasts to `sizes` (-1 keeps a dim) with stride 0.
Tensor expand(const Tensor& self, IntArrayRef sizes);
Tensor narrow(const Tensor& self, int64_t dim, int64_t start, int64_t length);
/// Removes `dim` by taking `index` in it.
Tensor select(const Tensor& self, int64_t dim, int64_t index);
/// The pieces [starts[i], starts[i] + lengths[i]) of `dim` (or, with `drop_dim`, the single
/// indices starts[i] with `dim` removed) as views sharing one backward node `node`.
std::vector<Tensor> piece_views(const Tensor& self, int64_t dim, IntArrayRef starts,
                                IntArrayRef lengths, bool drop_dim, const char* node);
/// self[start:end:step] along `dim` (Python slice semantics: clamps bounds).
Tensor slice(const Tensor& self, int64_t dim, std::optional<int64_t> start,
             std::optional<int64_t> end, int64_t step);
/// Sliding windows of `size` every `step` along `dim`, as a new last dim.
Tensor unfold(const Tensor& self, int64_t dim, int64_t size, int64_t step);
Tensor as_strided(const Tensor& self, IntArrayRef sizes, IntArrayRef strides,
                  std::optional<int64_t> storage_offset = std::nullopt);
Tensor flatten(const Tensor& self, int64_t start_dim = 0, int64_t end_dim = -1);
Tensor unflatten(const Tensor& self, int64_t dim, IntArrayRef sizes);
Tensor diagonal(const Tensor& self, int64_t offset = 0, int64_t dim1 = 0, int64_t dim2 = 1);
Tensor movedim(const Tensor& self, IntArrayRef source, IntArrayRef destination);
/// Swaps the last two dims (Tensor.mT).
Tensor matrix_transpose(const Tensor& self);
/// The shape-reduction that undoes broadcasting: sums `self` down to `shape`.
Tensor sum_to(const Tensor& self, IntArrayRef shape);
/// Expands all tensors to their common broadcast shape.
std::vector<Tensor> broadcast_tensors(TensorList tensors);

}  // namespace ember
