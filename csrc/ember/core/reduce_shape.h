#pragma once
// The geometry of a reduction over a dim list: shared by the reductions' meta step (ops/reduce.cpp)
// and their out= kernels (cpu/reduce.cpp), which plan their loops over the same dims.
#include "ember/core/shape.h"
#include "ember/core/tensor.h"

namespace ember {

/// The dims a reduction covers as a bitmask: every dim when `dims` is empty; a 0-d tensor takes
/// dim 0 or -1 and has none. Bad or repeated dims raise with `op`'s name.
inline uint64_t reduction_mask(const Tensor& self, IntArrayRef dims, const char* op) {
  if (dims.empty()) return self.dim() == 0 ? 0 : (uint64_t(-1) >> (64 - self.dim()));
  return self.dim() == 0 ? (dim_mask(dims, 1, op), 0) : dim_mask(dims, self.dim(), op);
}

/// The reduced shape, with size-1 dims kept where keepdim.
inline DimVector reduced_shape(const Tensor& self, uint64_t mask, bool keepdim) {
  DimVector out;
  for (int64_t d = 0; d < self.dim(); ++d) {
    if (mask >> d & 1) {
      if (keepdim) out.push_back(1);
    } else {
      out.push_back(self.sizes()[size_t(d)]);
    }
  }
  return out;
}

}  // namespace ember
