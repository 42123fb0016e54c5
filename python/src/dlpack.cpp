// DLPack capsules, both ways: a tensor exported as a (versioned or legacy) DLPack capsule, and a
// capsule consumed into a tensor over the producer's memory. The Python protocol around them
// (`__dlpack__` arguments, calling a producer's `__dlpack__`) lives in ember/utils/dlpack.py.
#include <Python.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "common.h"

namespace ember::py {

namespace {

// The DLPack 1.x ABI (dlpack.h), declared here: ember needs only these few structs.
struct DLDevice {
  int32_t device_type;  // 1: kDLCPU
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;  // 0 int, 1 uint, 2 float, 4 bfloat, 5 complex, 6 bool
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null means row-major contiguous
  uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t kFlagIsCopied = 1u << 1;
constexpr int32_t kDLCPU = 1;
constexpr uint32_t kMajor = 1, kMinor = 0;

constexpr const char* kLegacy = "dltensor";
constexpr const char* kLegacyUsed = "used_dltensor";
constexpr const char* kVersioned = "dltensor_versioned";
constexpr const char* kVersionedUsed = "used_dltensor_versioned";

DLDataType dl_dtype(ScalarType t) {
  DLDataType d{2, uint8_t(element_size(t) * 8), 1};
  switch (t) {
    case kBool:
      d.code = 6;
      break;
    case kByte:
      d.code = 1;
      break;
    case kChar:
    case kShort:
    case kInt:
    case kLong:
      d.code = 0;
      break;
    case kBFloat16:
      d.code = 4;
      break;
    case kComplexFloat:
    case kComplexDouble:
      d.code = 5;
      break;
    case kHalf:
    case kFloat:
    case kDouble:
      break;
    default:
      throw nb::buffer_error(
          ("to_dlpack: expected a dtype DLPack can describe; got " + std::string(dtype_name(t)))
              .c_str());
  }
  return d;
}

ScalarType ember_dtype(DLDataType d) {
  auto fail = [&]() -> ScalarType {
    throw nb::buffer_error(("from_dlpack: expected a dtype ember has; got DLPack code " +
                            std::to_string(d.code) + " with " + std::to_string(d.bits) +
                            " bits and " + std::to_string(d.lanes) + " lanes")
                               .c_str());
  };
  if (d.lanes != 1) return fail();
  switch (d.code) {
    case 0:
      if (d.bits == 8) return kChar;
      if (d.bits == 16) return kShort;
      if (d.bits == 32) return kInt;
      if (d.bits == 64) return kLong;
      break;
    case 1:
      if (d.bits == 8) return kByte;
      break;
    case 2:
      if (d.bits == 16) return kHalf;
      if (d.bits == 32) return kFloat;
      if (d.bits == 64) return kDouble;
      break;
    case 4:
      if (d.bits == 16) return kBFloat16;
      break;
    case 5:
      if (d.bits == 64) return kComplexFloat;
      if (d.bits == 128) return kComplexDouble;
      break;
    case 6:
      if (d.bits == 8) return kBool;
      break;
  }
  return fail();
}

// What an exported capsule owns: a handle on the tensor (keeping its storage alive) and the
// shape/stride arrays the DLTensor points into.
template <class Managed>
struct Export {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
  Managed managed{};
};

template <class Managed>
void delete_export(Managed* m) {
  delete static_cast<Export<Managed>*>(m->manager_ctx);
}

// A capsule nobody consumed still owns its tensor: free it when the capsule goes.
template <class Managed>
void capsule_destructor(PyObject* capsule) {
  const char* name = std::is_same_v<Managed, DLManagedTensor> ? kLegacy : kVersioned;
  if (!PyCapsule_IsValid(capsule, name)) return;  // consumed: the consumer owns it now
  auto* m = static_cast<Managed*>(PyCapsule_GetPointer(capsule, name));
  if (m && m->deleter) m->deleter(m);
}

template <class Managed>
nb::object export_capsule(const Tensor& t, uint64_t flags) {
  auto* ctx = new Export<Managed>{t, t.sizes().vec(), t.strides().vec()};
  DLTensor& dl = ctx->managed.dl_tensor;
  dl.data = t.data_ptr();
  dl.device = {kDLCPU, 0};
  dl.ndim = int32_t(t.dim());
  try {
    dl.dtype = dl_dtype(t.dtype());
  } catch (...) {
    delete ctx;
    throw;
  }
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
  ctx->managed.manager_ctx = ctx;
  ctx->managed.deleter = &delete_export<Managed>;
  const char* name = kLegacy;
  if constexpr (std::is_same_v<Managed, DLManagedTensorVersioned>) {
    ctx->managed.version = {kMajor, kMinor};
    ctx->managed.flags = flags;
    name = kVersioned;
  }
  PyObject* cap = PyCapsule_New(&ctx->managed, name, &capsule_destructor<Managed>);
  if (!cap) {
    delete ctx;
    throw nb::python_error();
  }
  return nb::steal(cap);
}

// A tensor over the memory a DLTensor describes; `release` runs the producer's deleter once,
// when the tensor's storage goes.
Tensor wrap(const DLTensor& dl, std::function<void()> release) {
  if (dl.device.device_type != kDLCPU) {
    release();
    throw nb::buffer_error(("from_dlpack: expected a CPU tensor (device type 1); got device type " +
                            std::to_string(dl.device.device_type))
                               .c_str());
  }
  ScalarType dtype;
  try {
    dtype = ember_dtype(dl.dtype);
  } catch (...) {
    release();
    throw;
  }
  std::vector<int64_t> sizes(dl.shape, dl.shape + dl.ndim), strides(size_t(dl.ndim));
  int64_t step = 1;
  for (int i = dl.ndim - 1; i >= 0; --i) {
    strides[size_t(i)] = dl.strides ? dl.strides[i] : step;
    step *= std::max<int64_t>(sizes[size_t(i)], 1);
    if (strides[size_t(i)] < 0 && sizes[size_t(i)] > 1) {
      release();
      throw nb::buffer_error(
          "from_dlpack: expected non-negative strides (ember tensors have no negative strides); "
          "got a negative one");
    }
  }
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  auto shared = std::make_shared<std::function<void()>>(std::move(release));
  return from_blob(data, sizes, strides, dtype, [shared](void*) {
    if (!Py_IsInitialized()) return;  // interpreter gone: the process is ending anyway
    nb::gil_scoped_acquire g;         // producers' deleters may touch Python objects
    (*shared)();
  });
}

[[noreturn]] void invalid_capsule() {
  throw std::runtime_error(
      "from_dlpack received an invalid capsule. Note that DLTensor capsules can be consumed only "
      "once, so you might have already constructed a tensor from it once.");
}

Tensor consume(nb::handle capsule) {
  PyObject* cap = capsule.ptr();
  if (PyCapsule_IsValid(cap, kVersioned)) {
    auto* m = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(cap, kVersioned));
    if (m->version.major > kMajor) {
      throw nb::buffer_error(("from_dlpack: expected DLPack major version <= " +
                              std::to_string(kMajor) + "; got " + std::to_string(m->version.major))
                                 .c_str());
    }
    PyCapsule_SetName(cap, kVersionedUsed);
    return wrap(m->dl_tensor, [m] {
      if (m->deleter) m->deleter(m);
    });
  }
  if (PyCapsule_IsValid(cap, kLegacy)) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(cap, kLegacy));
    PyCapsule_SetName(cap, kLegacyUsed);
    return wrap(m->dl_tensor, [m] {
      if (m->deleter) m->deleter(m);
    });
  }
  invalid_capsule();
}

}  // namespace

void bind_dlpack(nb::module_& m) {
  m.def(
      "_to_dlpack",
      [](const Tensor& t, bool versioned, bool copied) {
        EMBER_CHECK(t.device().type == DeviceType::CPU,
                    "to_dlpack: expected a CPU tensor; got one on ", t.device().str());
        if (versioned)
          return export_capsule<DLManagedTensorVersioned>(t, copied ? kFlagIsCopied : 0);
        return export_capsule<DLManagedTensor>(t, 0);
      },
      nb::arg("tensor"), nb::arg("versioned") = false, nb::arg("copied") = false,
      doc("_to_dlpack(tensor, versioned=False, copied=False) -> PyCapsule",
          "The tensor as a DLPack capsule sharing its memory: 'dltensor_versioned' (DLPack 1.0) "
          "when versioned, else the legacy 'dltensor'."));
  m.def("_from_dlpack_capsule", &consume, nb::arg("capsule"),
        doc("_from_dlpack_capsule(capsule) -> Tensor",
            "A tensor over the memory of a DLPack capsule (legacy or versioned); the capsule is "
            "marked used and the producer's deleter runs once, when the tensor's storage goes."));
}

}  // namespace ember::py
