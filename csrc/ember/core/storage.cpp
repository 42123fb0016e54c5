#include "ember/core/storage.h"

#include <cstdlib>

#include "ember/core/error.h"

namespace ember {

namespace {
constexpr size_t kAlignment = 64;  // a cache line and an AVX-512 register
}

StorageImpl::StorageImpl(size_t nbytes, Device device) : nbytes_(nbytes), device_(device) {
  size_t rounded = (std::max<size_t>(nbytes, 1) + kAlignment - 1) / kAlignment * kAlignment;
  data_ = std::aligned_alloc(kAlignment, rounded);
  EMBER_CHECK(data_ != nullptr, "CPU out of memory: tried to allocate ", nbytes, " bytes");
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_);
  else std::free(data_);
}

}  // namespace ember
