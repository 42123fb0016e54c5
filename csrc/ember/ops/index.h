#pragma once
// Indexing: gather/scatter family, masks, advanced indexing (Tensor::index in libtorch).
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

/// Rows of `self` along `dim` picked by a 1-d int64/int32 `index`.
Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index);
/// out[i][j] = self[index[i][j]][j] (for dim 0), and so on.
Tensor gather(const Tensor& self, int64_t dim, const Tensor& index);
/// Writes `src` into a copy of self at `index` along dim; `reduce` may be "add" or "multiply".
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               std::optional<std::string> reduce = std::nullopt);
Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               std::optional<std::string> reduce = std::nullopt);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 std::optional<std::string> reduce = std::nullopt);
Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 std::optional<std::string> reduce = std::nullopt);
Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src);
/// reduce: "sum", "prod", "mean", "amax", "amin".
Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self = true);
Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self = true);
/// self + alpha * source placed at `index` along dim.
Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha = 1);
Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha = 1);
/// A copy of self with the entries at `index` along dim set to `value` (negative indices wrap).
Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value);
/// self where mask is false, `value` (a 0-d tensor or a number) where it is true; broadcasts.
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value);
Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value);
Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value);
/// The elements where `mask` is true, as a 1-d tensor.
Tensor masked_select(const Tensor& self, const Tensor& mask);
/// self.flatten()[index].
Tensor take(const Tensor& self, const Tensor& index);
/// Indices of nonzero elements, shape (n, ndim).
Tensor nonzero(const Tensor& self);
/// nonzero(as_tuple=True): one 1-d index tensor per dim (a 0-d input counts as 1-d).
std::vector<Tensor> nonzero_tuple(const Tensor& self);
/// Advanced indexing self[indices] where each entry is a tensor or absent (a full slice).
Tensor index(const Tensor& self, const std::vector<std::optional<Tensor>>& indices);
/// self[indices] = values (accumulate adds instead).
Tensor index_put(const Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                 const Tensor& values, bool accumulate = false);
Tensor& index_put_(Tensor& self, const std::vector<std::optional<Tensor>>& indices,
                   const Tensor& values, bool accumulate = false);

/// Python's `None` in an index (a new size-1 dim); as a Slice bound it means "absent".
struct NoneIndex {
  constexpr operator std::optional<int64_t>() const { return std::nullopt; }
};
struct EllipsisIndex {};
constexpr EllipsisIndex Ellipsis{};
constexpr NoneIndex None{};

/// Python's start:stop:step; `Slice()`, `Slice(1, None)`, `Slice(None, None, 2)` as in libtorch.
struct Slice {
  Slice(std::optional<int64_t> start = std::nullopt, std::optional<int64_t> stop = std::nullopt,
        std::optional<int64_t> step = std::nullopt)
      : start(start), stop(stop), step(step.value_or(1)) {}
  std::optional<int64_t> start, stop;
  int64_t step = 1;
};

/// One element of a Python-style index: None, Ellipsis, int, bool, slice or tensor. A class
/// rather than an alias so that core/tensor.h can forward-declare it for Tensor::index.
struct TensorIndex : std::variant<NoneIndex, EllipsisIndex, int64_t, bool, Slice, Tensor> {
  using std::variant<NoneIndex, EllipsisIndex, int64_t, bool, Slice, Tensor>::variant;
};

/// libtorch's spelling: `using namespace torch::indexing;` brings Slice, None and Ellipsis.
namespace indexing {
using ::ember::Ellipsis;
using ::ember::EllipsisIndex;
using ::ember::None;
using ::ember::Slice;
using ::ember::TensorIndex;
}  // namespace indexing

/// self[idx...] with Python semantics (views for basic indices, copies for advanced).
Tensor getitem(const Tensor& self, const std::vector<TensorIndex>& indices);
/// self[idx...] = value (value broadcast and converted to self's dtype; writes in place).
void setitem(Tensor& self, const std::vector<TensorIndex>& indices, const Tensor& value);
void setitem(Tensor& self, const std::vector<TensorIndex>& indices, const Scalar& value);

namespace detail {
/// Advanced indexing in the kernels' terms. See Note [Advanced indexing] in ops/indexing.cpp.
struct AdvancedIndex {
  Tensor src;                   // self restrided to the result shape, stride 0 over index dims
  std::vector<Tensor> indices;  // int64, each broadcast to index_shape
  DimVector sizes;              // self's size along each indexed dim (the bound)
  DimVector strides;            // self's stride along each indexed dim (elements)
  DimVector dims;               // the indexed dims as the user numbered them (for messages)
  int64_t before = 0;           // result dims in front of the index dims
  DimVector index_shape;
};
/// Expands masks, checks dtypes and counts, broadcasts, and moves separated index dims first.
AdvancedIndex make_advanced_index(const Tensor& self,
                                  const std::vector<std::optional<Tensor>>& indices);
}  // namespace detail

}  // namespace ember
