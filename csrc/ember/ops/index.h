#pragma once
// Indexing by tensors: the gather/scatter family, masks and index_put (ops/index.cpp).
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/ops/indexing.h"  // TensorIndex

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

}  // namespace ember
