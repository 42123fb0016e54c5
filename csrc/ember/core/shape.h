#pragma once
// Shape arithmetic shared by ops: dim wrapping, broadcasting, strides for views.
#include <optional>

#include "ember/core/array_ref.h"
#include "ember/core/error.h"

namespace ember {

/// Wraps a negative dim; out of range raises IndexError with PyTorch's wording.
inline int64_t maybe_wrap_dim(int64_t dim, int64_t ndim, bool scalar_ok = true) {
  int64_t n = (ndim == 0 && scalar_ok) ? 1 : ndim;
  EMBER_CHECK_INDEX(n > 0, "dimension specified as ", dim, " but tensor has no dimensions");
  EMBER_CHECK_INDEX(dim >= -n && dim < n, "Dimension out of range (expected to be in range of [",
                    -n, ", ", n - 1, "], but got ", dim, ")");
  return dim < 0 ? dim + n : dim;
}

/// Row-major strides for `sizes`.
DimVector contiguous_strides(IntArrayRef sizes);
/// Number of elements of a shape.
int64_t numel_of(IntArrayRef sizes);
/// True if `shape` broadcasts to `target`.
bool is_expandable_to(IntArrayRef shape, IntArrayRef target);
/// The broadcast of two shapes; mismatch raises RuntimeError naming `op`.
DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op = "broadcast");
/// Resolves one -1 in a view/reshape shape against `numel`.
DimVector infer_size(IntArrayRef shape, int64_t numel);
/// Strides for viewing (sizes, strides) as `new_sizes` without a copy, if possible.
std::optional<DimVector> view_strides(IntArrayRef sizes, IntArrayRef strides,
                                      IntArrayRef new_sizes);
/// A contiguous shape seen as (outer, size, inner) around `dim`; a 0-d shape is (1, 1, 1).
struct Rows {
  int64_t outer = 1, size = 1, inner = 1;
};
Rows rows_of(IntArrayRef sizes, int64_t dim);
/// Marks dims in a bitmask from a dim list (wrapped); duplicates raise RuntimeError.
uint64_t dim_mask(IntArrayRef dims, int64_t ndim, const char* op);

}  // namespace ember
