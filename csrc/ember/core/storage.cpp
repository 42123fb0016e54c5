#include "ember/core/storage.h"

#include <sys/mman.h>

#include "ember/core/allocator.h"
#include "ember/core/error.h"

namespace ember {

namespace {
// Note [Meta storage]
// A meta tensor has no data, but its storage still answers nbytes() and gives a pointer: a
// lazily mapped private anonymous region (MAP_NORESERVE, so it is not even counted against the
// commit limit). Nothing is resident until a page is written; reading gives the shared zero page.
// The meta fallback (dispatch/fallback.h) runs CPU kernels over this memory as zeros and hands
// the pages back (MADV_DONTNEED) after a kernel wrote into them; a stray read by code that does
// not know about meta reads zeros instead of crashing.
void* map_meta(size_t nbytes) {
  if (nbytes == 0) return nullptr;
  void* p = mmap(nullptr, nbytes, PROT_READ | PROT_WRITE,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EMBER_CHECK(p != MAP_FAILED, "meta: could not reserve ", nbytes,
              " bytes of address space for a meta tensor");
  return p;
}

void* allocate(size_t nbytes, Device device) {
  if (device.type == DeviceType::Meta) return map_meta(nbytes);
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
  } else if (device.type == DeviceType::Meta) {
    deleter_ = [nbytes](void* p) {
      if (p) munmap(p, nbytes);
    };
  }
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(std::move(deleter)) {}

StorageImpl::~StorageImpl() {
  if (deleter_) deleter_(data_);
  else cpu_free(data_, nbytes_);
}

}  // namespace ember
