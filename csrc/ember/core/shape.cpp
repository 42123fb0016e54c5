#include "ember/core/shape.h"

#include <string_view>

namespace ember {

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (int64_t i = int64_t(sizes.size()) - 1; i >= 0; --i) {
    strides[size_t(i)] = s;
    EMBER_CHECK(i == 0 || !__builtin_mul_overflow(s, std::max<int64_t>(sizes[size_t(i)], 1), &s),
                "Stride calculation overflowed with sizes=", sizes);
  }
  return strides;
}

int64_t numel_of(IntArrayRef sizes) {
  // PyTorch's check (c10's safe_multiplies_u64): the sizes multiplied left to right as unsigned
  // 64-bit, an overflow sticking even if a later size is 0 ([2**62, 4, 0] fails, [4, 0, 2**62]
  // is an empty tensor), and the product at most INT64_MAX.
  int64_t n = 1;
  uint64_t prod = 1;
  bool overflow = false;
  for (int64_t s : sizes) {
    // a negative size counts as 1 here: its caller rejects it with its own message
    overflow |= __builtin_mul_overflow(prod, uint64_t(s < 0 ? 1 : s), &prod);
    // Wrapping, not UB, for a negative size that a caller has yet to reject.
    (void)__builtin_mul_overflow(n, s, &n);
  }
  EMBER_CHECK(!overflow && prod <= uint64_t(INT64_MAX), "numel: integer multiplication overflow");
  return n;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = std::max(a.size(), b.size());
  DimVector out(n);
  for (size_t i = n; i-- > 0;) {  // from the right: torch reports the last mismatching dim
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    EMBER_CHECK(da == db || da == 1 || db == 1, op, ": The size of tensor a (", da,
                ") must match the size of tensor b (", db, ") at non-singleton dimension ", i,
                "; shapes ", a, " and ", b, " are not broadcastable");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

DimVector infer_size(IntArrayRef shape, int64_t numel) {
  DimVector out(shape);
  int64_t known = 1;
  std::optional<size_t> infer;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(!infer, "only one dimension can be inferred");
      infer = i;
    } else {
      EMBER_CHECK(shape[i] >= 0, "invalid shape dimension ", shape[i]);
      EMBER_CHECK(!__builtin_mul_overflow(known, shape[i], &known), "shape '", shape,
                  "' is invalid for input of size ", numel);
    }
  }
  if (infer) {
    EMBER_CHECK(known != 0 && numel % known == 0, "shape '", shape,
                "' is invalid for input of size ", numel);
    out[*infer] = numel / known;
  } else {
    EMBER_CHECK(known == numel, "shape '", shape, "' is invalid for input of size ", numel);
  }
  return out;
}

// Walks chunks of the old shape that are contiguous among themselves and splits/merges them
// into the new sizes; fails where a merge would cross a stride discontinuity.
std::optional<DimVector> view_strides(IntArrayRef sizes, IntArrayRef strides,
                                      IntArrayRef new_sizes) {
  DimVector out(new_sizes.size());
  if (sizes.empty() || numel_of(sizes) == 0) return contiguous_strides(new_sizes);
  int64_t view_d = int64_t(new_sizes.size()) - 1;
  int64_t chunk_base_stride = strides.empty() ? 1 : strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = int64_t(sizes.size()) - 1; d >= 0; --d) {
    tensor_numel *= sizes[size_t(d)];
    if (d == 0 ||
        (sizes[size_t(d - 1)] != 1 && strides[size_t(d - 1)] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_sizes[size_t(view_d)] == 1)) {
        out[size_t(view_d)] = view_numel * chunk_base_stride;
        view_numel *= new_sizes[size_t(view_d)];
        --view_d;
      }
      if (view_numel != tensor_numel) return std::nullopt;
      if (d > 0) {
        chunk_base_stride = strides[size_t(d - 1)];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  if (view_d != -1) return std::nullopt;
  return out;
}

Rows rows_of(IntArrayRef sizes, int64_t dim) {
  Rows r;
  if (sizes.empty()) return r;
  for (int64_t d = 0; d < dim; ++d) r.outer *= sizes[size_t(d)];
  r.size = sizes[size_t(dim)];
  for (size_t d = size_t(dim) + 1; d < sizes.size(); ++d) r.inner *= sizes[d];
  return r;
}

uint64_t dim_mask(IntArrayRef dims, int64_t ndim, const char* op) {
  // torch's reductions and movedim wrap every dim before looking for a repeat (sum((0, 0, 5))
  // is an IndexError); var, flip and squeeze check one entry at a time (a RuntimeError there)
  const std::string_view name(op);
  if (name != "var" && name != "flip" && name != "squeeze")
    for (int64_t d : dims) maybe_wrap_dim(d, ndim);
  uint64_t mask = 0;
  for (int64_t d : dims) {
    int64_t w = maybe_wrap_dim(d, ndim);
    EMBER_CHECK(!(mask >> w & 1), op, ": dim ", w, " appears multiple times in the list of dims");
    mask |= uint64_t(1) << w;
  }
  return mask;
}

}  // namespace ember

namespace ember {
bool is_expandable_to(IntArrayRef shape, IntArrayRef target) {
  if (shape.size() > target.size()) return false;
  size_t off = target.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    if (shape[i] != 1 && shape[i] != target[off + i]) return false;
  return true;
}
}  // namespace ember
