#include "ember/dispatch/fallback.h"

#include <atomic>

#include "ember/core/allocator.h"

namespace ember {

namespace {
std::atomic<bool> g_fallback{false};

Tensor copy_to(const Tensor& t, Device d) {
  const Storage& src = t.impl()->storage();
  auto dst = make_intrusive<StorageImpl>(src->nbytes(), d);
  copy_bytes(dst->data(), d, src->data(), src->device(), src->nbytes());
  return Tensor(
      make_intrusive<TensorImpl>(dst, t.dtype(), t.sizes(), t.strides(), t.storage_offset()));
}
}  // namespace

void set_privateuse1_cpu_fallback(bool on) { g_fallback.store(on); }
bool privateuse1_cpu_fallback() { return g_fallback.load(); }

namespace fallback_detail {
Tensor to_host(const Tensor& t) {
  if (!t.defined() || t.device().type != DeviceType::PrivateUse1) return t;
  return copy_to(t, Device());
}
Tensor to_device(const Tensor& t) {
  if (!t.defined() || !t.device().is_cpu()) return t;
  return copy_to(t, Device(DeviceType::PrivateUse1, 0));
}
void write_back(const Tensor& dev, const Tensor& host) {
  if (!dev.defined() || dev.device().type != DeviceType::PrivateUse1) return;
  const Storage& d = dev.impl()->storage();
  const Storage& h = host.impl()->storage();
  if (d.get() == h.get()) return;
  copy_bytes(d->data(), d->device(), h->data(), h->device(), std::min(d->nbytes(), h->nbytes()));
}
}  // namespace fallback_detail

}  // namespace ember
