#include "ember/core/storage.h"

#include "ember/core/allocator.h"
#include "ember/core/error.h"

namespace ember {

namespace {
void* allocate(size_t nbytes, Device device) {
  if (device.type != DeviceType::PrivateUse1) return cpu_alloc(nbytes);
  const PrivateUse1Allocator* a = privateuse1_allocator();
  EMBER_CHECK(a, "no allocator is registered for the '", privateuse1_backend_name(),
              "' backend (PrivateUse1)");
  void* p = a->alloc(nbytes);
  EMBER_CHECK(p || nbytes == 0, "'", privateuse1_backend_name(), "' backend: out of memory (tried ",
              "to allocate ", nbytes, " bytes)");
  return p;
}
}  // namespace

StorageImpl::StorageImpl(size_t nbytes, Device device)
    : data_(allocate(nbytes, device)), nbytes_(nbytes), device_(device) {
  if (device.type == DeviceType::PrivateUse1) {  // freed by the allocator that gave it
    auto free = privateuse1_allocator()->free;
    deleter_ = [free, nbytes](void* p) { free(p, nbytes); };
  }
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_);
  else cpu_free(data_, nbytes_);
}

}  // namespace ember
