#include "ember/dispatch/fallback.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>

#include "ember/core/allocator.h"
#include "ember/core/error.h"

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

namespace ember::meta_detail {

thread_local std::string_view Alias::op;

namespace {
// Ops whose output's shape is read from the data: a meta tensor cannot answer them.
constexpr std::string_view kDataDependent[] = {"nonzero", "_unique.ember", "bincount",
                                               "repeat_interleave.Tensor"};
// Ops that only write values: on meta there is nothing to do or check.
constexpr std::string_view kFills[] = {"fill_.Scalar",  "normal_",          "uniform_",
                                       "random_.from",  "bernoulli_.float", "_arange_fill",
                                       "_randperm_fill"};

// Ops whose integer arguments are indices, which may stay on the cpu.
constexpr std::string_view kIndexOps[] = {
    "index.Tensor", "index_put",          "index_put_",          "index_select",
    "gather",       "scatter.src",        "scatter_.src",        "scatter_add",
    "scatter_add_", "scatter_reduce.two", "scatter_reduce_.two", "index_add",
    "index_add_",   "_take_along_dim",    "_place_along_dim",    "embedding"};

Storage meta_storage(size_t nbytes) {
  auto st = make_intrusive<StorageImpl>(nbytes, Device(DeviceType::Meta));
  st->set_inference(InferenceMode::is_enabled());
  return st;
}
}  // namespace

// Tensors collect() has seen in the current call (screen() starts each call): index's first
// tensor is self, the others its indices.
thread_local int g_seen = 0;

bool screen(std::string_view op) {
  g_seen = 0;
  for (std::string_view d : kDataDependent)
    if (op == d)
      EMBER_ERROR(ErrorKind::NotImplemented, "Could not run '", op,
                  "' with arguments from the 'Meta' backend: its output's shape depends on the "
                  "data, which a meta tensor does not have");
  return std::find(std::begin(kFills), std::end(kFills), op) != std::end(kFills);
}

void collect(Call& c, const Tensor& t) {
  if (!t.defined()) return;
  bool meta = t.device().type == DeviceType::Meta;
  // A boolean mask index selects as many elements as it has true values: data a meta mask lacks
  // (the kernel would read zeros and answer an empty result).
  if (++g_seen > 1 && meta && c.op == "index.Tensor" && (t.dtype() == kBool || t.dtype() == kByte))
    EMBER_ERROR(ErrorKind::NotImplemented,
                "Could not run 'index.Tensor' with a boolean mask from the 'Meta' backend: its "
                "output's shape depends on the mask's values, which a meta tensor does not have");
  if (meta) c.metas.push_back(t.storage());
}

Tensor standin(const Tensor& t, std::string_view op) {
  if (!t.defined()) return t;
  DeviceType d = t.device().type;
  if (d != DeviceType::Meta) {
    // 0-d cpu tensors (Python numbers) mix with any device, and index ops take cpu indices,
    // as torch's.
    bool index = !is_floating_point(t.dtype()) && !is_complex(t.dtype()) &&
                 std::find(std::begin(kIndexOps), std::end(kIndexOps), op) != std::end(kIndexOps);
    EMBER_CHECK(d == DeviceType::CPU && (t.dim() == 0 || index), op, ": Tensor on device ",
                t.device().str(), " is not on the expected device meta!");
    return t;
  }
  Storage keep = t.storage();
  auto alias =
      make_intrusive<StorageImpl>(keep->data(), keep->nbytes(), Device(), [keep](void*) {});
  auto impl = make_intrusive<TensorImpl>(std::move(alias), t.dtype(), t.sizes(), t.strides(),
                                         t.storage_offset());
  impl->is_wrapped_number = t.impl()->is_wrapped_number;
  impl->quantizer = t.impl()->quantizer;
  return Tensor(std::move(impl));
}

Tensor to_meta(const Tensor& t, const Call& c) {
  if (!t.defined() || t.device().type == DeviceType::Meta) return t;
  Storage st;
  for (const Storage& m : c.metas)
    if (m->data() && m->data() == t.storage()->data() && m->nbytes() == t.storage()->nbytes())
      st = m;
  if (!st) st = meta_storage(t.storage()->nbytes());
  auto impl = make_intrusive<TensorImpl>(std::move(st), t.dtype(), t.sizes(), t.strides(),
                                         t.storage_offset());
  impl->quantizer = t.impl()->quantizer;
  return Tensor(std::move(impl));
}

void written(const Tensor& orig, const Tensor& held) {
  if (!orig.defined() || orig.device().type != DeviceType::Meta) return;
  const Storage& m = orig.storage();
  if (held.storage()->data() != m->data()) {  // the kernel resized its output: take the geometry
    orig.impl()->set_storage(meta_storage(held.storage()->nbytes()), held.dtype());
    orig.impl()->set_geometry(held.sizes(), held.strides(), held.storage_offset());
  } else if (!held.sizes().equals(orig.sizes()) || !held.strides().equals(orig.strides())) {
    orig.impl()->set_geometry(held.sizes(), held.strides(), held.storage_offset());
  }
  if (m->data() && m->nbytes()) madvise(m->data(), m->nbytes(), MADV_DONTNEED);
}

bool too_large(const Tensor& t) {
  return t.defined() && t.device().type == DeviceType::Meta &&
         t.storage()->nbytes() > kMetaCheckBytes;
}

void check_copy(const Tensor& self, const Tensor& src) {
  if (self.device().type != DeviceType::Meta)
    EMBER_ERROR(ErrorKind::NotImplemented, "Cannot copy out of meta tensor; no data!");
  IntArrayRef a = self.sizes(), b = src.sizes();
  bool ok = b.size() <= a.size();
  for (size_t i = 0; ok && i < b.size(); ++i) {
    int64_t x = a[a.size() - 1 - i], y = b[b.size() - 1 - i];
    ok = y == x || y == 1;
  }
  EMBER_CHECK(ok, "copy_: The size of tensor a (", a, ") must match the size of tensor b (", b,
              ") at non-singleton dimension");
}

}  // namespace ember::meta_detail
