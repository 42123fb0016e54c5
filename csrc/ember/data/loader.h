#pragma once
// A minimal DataLoader for in-memory (inputs, targets) tensors: batches in order or shuffled by a
// seeded generator, optionally dropping the last short batch.
#include <cstdint>

#include "ember/core/tensor.h"
#include "ember/ops/random.h"

namespace ember::data {

/// One batch: rows of the inputs and the matching targets.
struct Batch {
  Tensor data;
  Tensor target;
};

/// Iterates (data, target) batches over the first dimension of two tensors; each range-for loop
/// is one epoch, and shuffled epochs are reproducible from `seed`.
class TensorLoader {
 public:
  TensorLoader(Tensor data, Tensor targets, int64_t batch_size, bool shuffle = false,
               bool drop_last = false, uint64_t seed = 0);

  /// Batches per epoch.
  int64_t size() const;

  class Iterator {
   public:
    Iterator(const TensorLoader* loader, Tensor order, int64_t batch)
        : loader_(loader), order_(std::move(order)), batch_(batch) {}
    Batch operator*() const;
    Iterator& operator++() {
      ++batch_;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return batch_ != o.batch_; }

   private:
    const TensorLoader* loader_;
    Tensor order_;
    int64_t batch_;
  };

  /// Starts an epoch (drawing a new order when shuffling).
  Iterator begin();
  Iterator end() const { return Iterator(this, Tensor(), size()); }

 private:
  Tensor data_, targets_;
  int64_t batch_size_;
  bool shuffle_, drop_last_;
  GeneratorPtr gen_;
};

}  // namespace ember::data
