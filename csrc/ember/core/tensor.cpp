#include "ember/core/tensor.h"

#include "ember/core/allocator.h"
#include "ember/core/grad_mode.h"
#include "ember/core/shape.h"

namespace ember {

int64_t Tensor::size(int64_t d) const { return sizes()[size_t(maybe_wrap_dim(d, dim()))]; }
int64_t Tensor::stride(int64_t d) const { return strides()[size_t(maybe_wrap_dim(d, dim()))]; }

Scalar Tensor::item() const {
  EMBER_CHECK(numel() == 1, "a Tensor with ", numel(), " elements cannot be converted to Scalar");
  EMBER_CHECK(device().type != DeviceType::Meta, "Tensor.item() cannot be called on meta tensors");
  EMBER_CHECK(!is_complex(dtype()), "item: a complex value is not a Scalar; read it from Python");
  const char* p = impl_->data();
  alignas(16) char host[16];  // a PrivateUse1 backend's element, copied out of its memory
  if (device().type == DeviceType::PrivateUse1) {
    copy_bytes(host, Device(), p, device(), element_size());
    p = host;
  }
  switch (dtype()) {
#define EMBER_ITEM(cpp, name, py) \
  case ScalarType::name:          \
    return Scalar(*reinterpret_cast<const cpp*>(p));
    EMBER_FORALL_DTYPES(EMBER_ITEM)
#undef EMBER_ITEM
    default:
      EMBER_ASSERT(false);
  }
}

Tensor Tensor::as_strided_view(IntArrayRef sizes, IntArrayRef strides, int64_t offset) const {
  auto impl = make_intrusive<TensorImpl>(storage(), dtype(), sizes, strides, offset);
  impl->quantizer = impl_->quantizer;  // views of a quantized tensor share its parameters
  return Tensor(std::move(impl));
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, ScalarType dtype, Device device) {
  EMBER_CHECK(
      device.is_cpu() || device.type == DeviceType::PrivateUse1 || device.type == DeviceType::Meta,
      "empty: ember has kernels for cpu only; got device ", device.str());
  if (device.type == DeviceType::PrivateUse1 && device.index < 0) device.index = 0;
  for (int64_t s : sizes)
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  // 1 + the largest reachable offset, in bytes; every step is overflow-checked so a huge shape
  // is rejected here rather than wrapping into a small allocation.
  int64_t extent = 1, nbytes = 0;
  bool overflow = false, empty_tensor = false;
  for (size_t i = 0; i < sizes.size(); ++i) {
    int64_t step = 0;
    if (sizes[i] == 0) empty_tensor = true;
    overflow |= __builtin_mul_overflow(std::max<int64_t>(sizes[i] - 1, 0), strides[i], &step);
    overflow |= __builtin_add_overflow(extent, step, &extent);
  }
  overflow |= __builtin_mul_overflow(extent, int64_t(element_size(dtype)), &nbytes);
  // an empty tensor needs no storage, whatever its other sizes (torch's ones(2**62, 0) builds)
  EMBER_CHECK(!overflow || empty_tensor, "Storage size calculation overflowed with sizes=", sizes,
              " and strides=", strides);
  auto storage = make_intrusive<StorageImpl>(empty_tensor ? 0 : size_t(nbytes), device);
  storage->set_inference(InferenceMode::is_enabled());
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

Tensor empty(IntArrayRef sizes, ScalarType dtype, Device device) {
  for (int64_t s : sizes)  // before the strides, which a negative size would make meaningless
    EMBER_CHECK(s >= 0, "Trying to create tensor with negative dimension ", s, ": ", sizes);
  return empty_strided(sizes, contiguous_strides(sizes), dtype, device);
}

Tensor from_blob(void* data, IntArrayRef sizes, IntArrayRef strides, ScalarType dtype,
                 Deleter deleter) {
  int64_t extent = 1;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] == 0) extent = 0;
    if (extent) extent += (sizes[i] - 1) * strides[i];
  }
  auto storage = make_intrusive<StorageImpl>(data, size_t(extent) * element_size(dtype), Device(),
                                             std::move(deleter));
  storage->set_inference(InferenceMode::is_enabled());
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), dtype, sizes, strides, 0));
}

Tensor scalar_tensor(const Scalar& s, ScalarType dtype, bool wrapped) {
  Tensor t = empty({}, dtype);
  switch (dtype) {
#define EMBER_FILL(cpp, name, py)                   \
  case ScalarType::name:                            \
    *static_cast<cpp*>(t.data_ptr()) = s.to<cpp>(); \
    break;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_FILL)
#undef EMBER_FILL
    default:
      EMBER_ASSERT(false);
  }
  t.impl()->is_wrapped_number = wrapped;
  return t;
}

}  // namespace ember
