#pragma once
// Python-style indexing: getitem/setitem over None, Ellipsis, ints, bools, slices and tensors,
// libtorch's ember::indexing, and advanced indexing in the kernels' terms (ops/indexing.cpp).
#include <optional>
#include <variant>
#include <vector>

#include "ember/core/tensor.h"

namespace ember {

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

}  // namespace ember
