#include "ember/core/output_layout.h"

#include <algorithm>

#include "ember/core/memory_format.h"

namespace ember {

namespace {
// Operands that take part in ordering the dims (as TensorIter's operand limit) and the most dims.
constexpr int kLayoutOperands = 6;
constexpr size_t kLayoutMaxDims = 64;
}  // namespace

// Note [Output layout]
// As PyTorch's TensorIterator does, an elementwise result keeps its inputs' layout, so that
// channels-last or transposed inputs give a channels-last or transposed result and the loop runs
// in memory order over every operand:
// - Inputs all of the output's shape (no broadcasting): all contiguous gives a contiguous
//   result, all channels-last contiguous a channels-last one, and all dense with equal strides
//   those strides.
// - Otherwise the dims are ordered fastest first by the inputs' strides (Note [Memory formats]):
//   the first input that tells two dims apart decides; a broadcast dim (stride 0) abstains;
//   equal strides put the smaller dim first. The result is dense in that order (row-major when
//   nothing moved). A dim of size 1 in the output keeps its input strides and takes part, as in
//   PyTorch, so results agree with torch's `.stride()` also there.
Tensor empty_like_inputs(IntArrayRef shape, ScalarType dtype,
                         std::initializer_list<const Tensor*> inputs, Device device) {
  const size_t ndim = shape.size();
  bool same = true, contiguous = true;
  for (const Tensor* t : inputs) {
    same = same && t->sizes().equals(shape);
    contiguous = contiguous && t->is_contiguous();
  }
  if (ndim < 2 || (same && contiguous)) return empty(shape, dtype, device);
  if (same) {
    bool channels_last = true, dense = true, equal = true;
    for (const Tensor* t : inputs) {
      channels_last =
          channels_last && is_contiguous_as(shape, t->strides(), MemoryFormat::ChannelsLast);
      dense = dense && is_non_overlapping_and_dense(shape, t->strides());
      equal = equal && t->strides().equals((*inputs.begin())->strides());
    }
    if (channels_last)
      return empty_strided(shape, strides_for(shape, MemoryFormat::ChannelsLast), dtype, device);
    if (dense && equal)
      return empty_strided(shape, (*(inputs.end() - 1))->strides(), dtype, device);
  }
  EMBER_CHECK(ndim <= kLayoutMaxDims, "tensors with more than ", kLayoutMaxDims,
              " dims are not supported");
  // Each input's strides over the output's dims (right-aligned); broadcast dims have stride 0.
  const int n = int(inputs.size());
  int64_t st[kLayoutOperands][kLayoutMaxDims];
  int k = 0;
  for (const Tensor* t : inputs) {
    if (k == kLayoutOperands) break;
    const size_t off = ndim - t->sizes().size();
    for (size_t d = 0; d < ndim; ++d) {
      if (d < off) {
        st[k][d] = 0;
        continue;
      }
      const int64_t size = t->sizes()[d - off];
      st[k][d] = size == 1 && shape[d] != 1 ? 0 : t->strides()[d - off];
    }
    ++k;
  }
  // > 0: dim b must come before (be faster than) dim a; < 0: a stays first; 0: no input decides.
  auto order = [&](size_t a, size_t b) {
    for (int i = 0; i < std::min(n, kLayoutOperands); ++i) {
      const int64_t sa = st[i][a], sb = st[i][b];
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return sa < sb ? -1 : 1;
      if (shape[a] > shape[b]) return 1;
    }
    return 0;
  };
  size_t perm[kLayoutMaxDims];
  for (size_t d = 0; d < ndim; ++d) perm[d] = ndim - 1 - d;
  for (size_t i = 1; i < ndim; ++i) {
    size_t moving = i;
    for (size_t j = i; j-- > 0;) {
      const int c = order(perm[j], perm[moving]);
      if (c > 0) {
        std::swap(perm[j], perm[moving]);
        moving = j;
      } else if (c < 0) {
        break;
      }
    }
  }
  bool reversed = true;
  for (size_t d = 0; d < ndim; ++d) reversed = reversed && perm[d] == ndim - 1 - d;
  if (reversed) return empty(shape, dtype, device);
  DimVector strides(ndim, 0);
  int64_t step = 1;
  for (size_t d = 0; d < ndim; ++d) {
    strides[perm[d]] = step;
    step *= shape[perm[d]];
  }
  return empty_strided(shape, strides, dtype, device);
}

}  // namespace ember
