#include "ember/data/loader.h"

#include <algorithm>

#include "ember/ops/ops.h"

namespace ember::data {

TensorLoader::TensorLoader(Tensor data, Tensor targets, int64_t batch_size, bool shuffle,
                           bool drop_last, uint64_t seed)
    : data_(std::move(data)),
      targets_(std::move(targets)),
      batch_size_(batch_size),
      shuffle_(shuffle),
      drop_last_(drop_last),
      gen_(std::make_shared<Generator>(seed)) {
  EMBER_CHECK_VALUE(batch_size > 0,
                    "TensorLoader: batch_size should be a positive integer value; got ",
                    batch_size);
  EMBER_CHECK(data_.dim() >= 1 && targets_.dim() >= 1 && data_.size(0) == targets_.size(0),
              "TensorLoader: expected data and targets with the same first dimension");
}

int64_t TensorLoader::size() const {
  int64_t n = data_.size(0);
  return drop_last_ ? n / batch_size_ : (n + batch_size_ - 1) / batch_size_;
}

TensorLoader::Iterator TensorLoader::begin() {
  return Iterator(this, shuffle_ ? randperm(data_.size(0), gen_) : Tensor(), 0);
}

Batch TensorLoader::Iterator::operator*() const {
  int64_t n = loader_->data_.size(0);
  int64_t start = batch_ * loader_->batch_size_, len = std::min(loader_->batch_size_, n - start);
  if (!order_.defined())  // sequential batches are views: no copy
    return {narrow(loader_->data_, 0, start, len), narrow(loader_->targets_, 0, start, len)};
  Tensor idx = narrow(order_, 0, start, len);
  return {index_select(loader_->data_, 0, idx), index_select(loader_->targets_, 0, idx)};
}

}  // namespace ember::data
