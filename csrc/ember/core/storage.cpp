#include "ember/core/storage.h"

#include "ember/core/allocator.h"

namespace ember {

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : data_(cpu_alloc(nbytes)), nbytes_(nbytes), device_(device) {}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_);
  else cpu_free(data_, nbytes_);
}

}  // namespace ember
