#pragma once
// The one strided iterator behind every elementwise kernel. See Note [TensorIter].
//
// Note [TensorIter]
// Operands (outputs first) share one broadcast shape; a broadcast dim has stride 0. Dims are
// reordered so dim 0 is the fastest-moving in the first output, then adjacent dims that are
// contiguous in every operand are merged, so most calls reach the loop as one flat run. The loop
// receives byte pointers and byte strides for the innermost dim; kernels check the strides for
// the contiguous and scalar-broadcast fast paths.
#include <array>

#include "ember/core/parallel.h"
#include "ember/core/tensor.h"

namespace ember::cpu {

constexpr int kMaxOperands = 6;
constexpr size_t kMaxDims = 64;  // PyTorch's limit too

/// Whether an output may have several elements at one address (a stride-0 dim, as from
/// expand()): elementwise writes refuse it, as torch does, since each element would be written
/// several times; fills and index kernels that restride their output on purpose allow it.
enum class WriteOverlap { kRefuse, kAllow };

class TensorIter {
 public:
  /// `operands`: outputs first (already shaped to the broadcast shape), then inputs.
  TensorIter(std::initializer_list<const Tensor*> operands, int noutputs = 1,
             WriteOverlap overlap = WriteOverlap::kRefuse);

  int64_t numel() const { return numel_; }
  int ntensors() const { return n_; }
  /// The merged iteration shape, fastest dim first, and operand k's byte strides over it.
  const DimVector& shape() const { return shape_; }
  const DimVector& strides(int k) const { return strides_[size_t(k)]; }
  char* base(int k) const { return base_[size_t(k)]; }

  /// Inner loop: pointers and byte strides of each operand for `n` elements of dim 0.
  template <class Loop>
  void for_each(Loop&& loop, int64_t grain = kGrainSize) const {
    if (numel_ == 0) return;
    if (numel_ < grain) {
      serial(0, numel_, loop);
      return;
    }
    parallel_for(0, numel_, grain, [&](int64_t b, int64_t e) { serial(b, e, loop); });
  }

  template <class Loop>
  void serial(int64_t begin, int64_t end, Loop& loop) const {
    int64_t idx[kMaxDims];
    char* ptrs[kMaxOperands];
    int64_t rem = begin;
    for (size_t d = 0; d < shape_.size(); ++d) {
      idx[d] = rem % shape_[d];
      rem /= shape_[d];
    }
    int64_t inner[kMaxOperands];
    for (int k = 0; k < n_; ++k) inner[k] = strides_[k][0];
    int64_t pos = begin;
    while (pos < end) {
      for (int k = 0; k < n_; ++k) {
        char* p = base_[k];
        for (size_t d = 0; d < shape_.size(); ++d) p += idx[d] * strides_[k][d];
        ptrs[k] = p;
      }
      int64_t n = std::min(shape_[0] - idx[0], end - pos);
      loop(ptrs, inner, n);
      pos += n;
      idx[0] += n;
      for (size_t d = 0; d + 1 < shape_.size() && idx[d] == shape_[d]; ++d) {
        idx[d] = 0;
        ++idx[d + 1];
      }
    }
  }

 private:
  int n_;
  int64_t numel_;
  DimVector shape_;
  std::array<DimVector, kMaxOperands> strides_;
  std::array<char*, kMaxOperands> base_;
};

/// An uninitialized elementwise output of `shape` laid out in the inputs' memory order
/// (Note [Output layout]); contiguous when the inputs are.
Tensor empty_like_inputs(IntArrayRef shape, ScalarType dtype,
                         std::initializer_list<const Tensor*> inputs);

}  // namespace ember::cpu
