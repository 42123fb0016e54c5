#include "ember/cpu/tensor_iter.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "ember/core/memory_format.h"
#include "ember/core/output_layout.h"
#include "ember/core/shape.h"

namespace ember::cpu {

namespace {

// The dims ordered fastest first by the strides stride(i, d) of operands i = 0, 1, ...: the first
// operand that tells two dims apart decides; a zero stride abstains. An insertion sort, since
// abstaining makes this no strict weak order, and stable, so undecided dims keep their order
// (outermost last).
template <class Stride>
std::vector<size_t> fastest_first(size_t ndim, int noperands, Stride stride) {
  std::vector<size_t> perm(ndim);
  std::iota(perm.begin(), perm.end(), 0);
  std::reverse(perm.begin(), perm.end());
  auto faster = [&](size_t a, size_t b) {
    for (int i = 0; i < noperands; ++i) {
      int64_t sa = stride(i, a), sb = stride(i, b);
      if (sa == 0 || sb == 0) continue;
      if (sa != sb) return std::abs(sa) < std::abs(sb);
    }
    return false;
  };
  for (size_t i = 1; i < ndim; ++i)
    for (size_t j = i; j > 0 && faster(perm[j], perm[j - 1]); --j) std::swap(perm[j], perm[j - 1]);
  return perm;
}

// Whether every operand is contiguous and either of the output's shape or a single element: the
// common case, which needs none of the general set-up below (~10% of a small op's time).
bool flat_run(std::initializer_list<const Tensor*> operands) {
  IntArrayRef shape = (*operands.begin())->sizes();
  for (const Tensor* t : operands) {
    if (!t->is_contiguous()) return false;
    IntArrayRef s = t->sizes();
    bool same = s.size() == shape.size() && std::equal(s.begin(), s.end(), shape.begin());
    if (!same && t->numel() != 1) return false;
  }
  return true;
}

}  // namespace

TensorIter::TensorIter(std::initializer_list<const Tensor*> operands, int noutputs,
                       WriteOverlap overlap) {
  n_ = int(operands.size());
  EMBER_ASSERT(n_ <= kMaxOperands && noutputs >= 1);
  const Tensor& out = **operands.begin();
  size_t ndim = out.sizes().size();
  EMBER_CHECK(ndim <= kMaxDims, "tensors with more than ", kMaxDims, " dims are not supported");
  numel_ = out.numel();
  if (flat_run(operands)) {
    // One run over the elements: contiguous operands step by their element size, single
    // elements broadcast by stride 0.
    shape_.assign(1, numel_);
    int k = 0;
    for (const Tensor* t : operands) {
      int64_t es = int64_t(t->element_size());
      strides_[size_t(k)].assign(1, t->numel() == 1 && numel_ != 1 ? 0 : es);
      base_[size_t(k++)] = static_cast<char*>(t->data_ptr());
    }
    return;
  }
  if (overlap == WriteOverlap::kRefuse && numel_ > 0) {  // an empty output writes nothing
    for (int k = 0; k < noutputs; ++k) {
      const Tensor& o = *operands.begin()[k];
      for (size_t d = 0; d < o.sizes().size(); ++d)
        EMBER_CHECK(o.sizes()[d] <= 1 || o.strides()[d] != 0,
                    "unsupported operation: more than one element of the written-to tensor "
                    "refers to a single memory location. Please clone() the tensor before "
                    "performing the operation.");
    }
  }
  // Byte strides aligned to the output's dims (right-aligned broadcasting).
  std::array<DimVector, kMaxOperands> st;
  int k = 0;
  for (const Tensor* t : operands) {
    st[k] = DimVector(ndim, 0);
    size_t off = ndim - t->sizes().size();
    int64_t es = int64_t(t->element_size());
    for (size_t d = 0; d < t->sizes().size(); ++d) {
      EMBER_ASSERT(t->sizes()[d] == out.sizes()[off + d] || t->sizes()[d] == 1);
      st[k][off + d] = t->sizes()[d] == 1 ? 0 : t->strides()[d] * es;
    }
    base_[k] = static_cast<char*>(t->data_ptr());
    ++k;
  }
  // Order dims fastest first by the output's strides (ties: the inputs' strides), stable.
  std::vector<size_t> perm = fastest_first(ndim, n_, [&](int i, size_t d) { return st[i][d]; });
  shape_.resize(0);
  for (int i = 0; i < n_; ++i) strides_[i].resize(0);
  for (size_t p : perm) {
    int64_t size = out.sizes()[p];
    if (size == 1) continue;
    // Merge with the previous (faster) dim when every operand continues contiguously.
    if (!shape_.empty()) {
      bool merge = true;
      for (int i = 0; i < n_ && merge; ++i) merge = st[i][p] == shape_.back() * strides_[i].back();
      if (merge) {
        shape_.back() *= size;
        continue;
      }
    }
    shape_.push_back(size);
    for (int i = 0; i < n_; ++i) strides_[i].push_back(st[i][p]);
  }
  if (shape_.empty()) {
    shape_.push_back(numel_ == 0 ? 0 : 1);
    for (int i = 0; i < n_; ++i) strides_[i].push_back(0);
  }
  if (numel_ == 0) {
    shape_.resize(1);
    shape_[0] = 0;
  }
}

// The rule is core's (Note [Output layout] in core/output_layout.cpp), shared with the meta step.
Tensor empty_like_inputs(IntArrayRef shape, ScalarType dtype,
                         std::initializer_list<const Tensor*> inputs) {
  return ::ember::empty_like_inputs(shape, dtype, inputs, Device());
}

}  // namespace ember::cpu
