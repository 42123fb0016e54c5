// Operators defined from Python (ember.library) and the PrivateUse1 backend's Python side.
//
// Note [Python custom ops]
// A custom op is a dispatcher entry like ember's own ("mylib::foo", with its schema), created at
// run time, whose kernels are Python callables. The dispatcher's kernels are typed function
// pointers, so every Python op shares one boxed signature: the call's tensors (from which the
// dispatcher picks the key, and the profiler reads the shapes) and a frame holding the Python
// arguments and, afterwards, the result. One C++ trampoline per key finds the op's Python kernel
// for that key in the frame and calls it. The call therefore takes the same path as `a + b`:
// key selection, the profiler hook in TypedOperator::redispatch, grad mode off below Autograd,
// the PrivateUse1 fallback rule.
#include "common.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>

#include "ember/core/memory_format.h"
#include "ember/dispatch/fallback.h"

namespace ember::py {

namespace {

struct PyOp;
struct PyFrame {
  const PyOp* op;
  nb::object args, kwargs, result;
};
using Boxed = void(const std::vector<Tensor>&, PyFrame*);

struct PyOp {
  TypedOperator<Boxed> handle;
  std::array<PyObject*, kNumDispatchKeys> kernels{};  // owned references, never released
  PyOp(const std::string& name, const std::string& schema) : handle(name, schema) {}
};

std::mutex g_ops_mutex;
std::deque<PyOp*>& ops() {
  static auto* v = new std::deque<PyOp*>();  // leaked: ops live as long as the process
  return *v;
}

PyOp& op_at(size_t i) {
  std::lock_guard<std::mutex> g(g_ops_mutex);
  EMBER_CHECK(i < ops().size(), "custom op handle ", i, " does not exist");
  return *ops()[i];
}

template <DispatchKey K>
void py_kernel(const std::vector<Tensor>&, PyFrame* frame) {
  nb::gil_scoped_acquire gil;
  PyObject* fn = frame->op->kernels[size_t(K)];
  if (!fn) detail::missing_kernel(frame->op->handle.entry(), K);
  nb::handle f(fn);
  frame->result = f(*frame->args, **frame->kwargs);
}

template <size_t... I>
constexpr std::array<void*, sizeof...(I)> trampolines(std::index_sequence<I...>) {
  return {reinterpret_cast<void*>(&py_kernel<DispatchKey(I)>)...};
}
const std::array<void*, kNumDispatchKeys> kTrampolines =
    trampolines(std::make_index_sequence<kNumDispatchKeys>());

DispatchKey key_from(const std::string& name) {
  for (size_t k = 0; k < kNumDispatchKeys; ++k)
    if (name == key_name(DispatchKey(k))) return DispatchKey(k);
  EMBER_ERROR(ErrorKind::Value, "unknown dispatch key '", name, "'");
}

// Host memory for a backend whose device memory is the host's (tests and Python backends).
std::atomic<int64_t> g_host_allocs{0}, g_host_frees{0}, g_host_bytes{0};
void* host_alloc(size_t n) {
  g_host_allocs++;
  g_host_bytes += int64_t(n);
  return std::malloc(n ? n : 1);
}
void host_free(void* p, size_t n) {
  g_host_frees++;
  g_host_bytes -= int64_t(n);
  std::free(p);
}
void host_copy(void* dst, const void* src, size_t n) { std::memcpy(dst, src, n); }

// A meta tensor with t's shape and dtype: t's strides where they are dense (as torch's .to('meta'),
// which lays out the copy as empty_like does), else contiguous ones.
Tensor to_meta(const Tensor& t) {
  DimVector strides = is_non_overlapping_and_dense(t.sizes(), t.strides())
                          ? DimVector(t.strides())
                          : dense_strides_like(t.sizes(), t.strides());
  return empty_strided(t.sizes(), strides, t.dtype(), Device(DeviceType::Meta));
}

Tensor copy_to_device(const Tensor& t, Device d) {
  const Storage& src = t.storage();
  if (d.type == DeviceType::PrivateUse1 && d.index < 0) d.index = 0;
  auto dst = make_intrusive<StorageImpl>(src->nbytes(), d);
  copy_bytes(dst->data(), d, src->data(), src->device(), src->nbytes());
  return Tensor(
      make_intrusive<TensorImpl>(dst, t.dtype(), t.sizes(), t.strides(), t.storage_offset()));
}

}  // namespace

void bind_library(nb::module_& m) {
  m.def(
      "_custom_op_define",
      [](const std::string& name, const std::string& schema) {
        auto* op = new PyOp(name, schema);  // raises when the name has another schema
        std::lock_guard<std::mutex> g(g_ops_mutex);
        ops().push_back(op);
        return ops().size() - 1;
      },
      nb::arg("name"), nb::arg("schema"),
      doc("_custom_op_define(name, schema) -> int",
          "Creates the dispatcher entry of a Python custom op (Note [Python custom ops]); returns "
          "its handle."));
  m.def(
      "_custom_op_set_kernel",
      [](size_t h, const std::string& key, nb::object fn) {
        PyOp& op = op_at(h);
        DispatchKey k = key_from(key);
        if (fn.is_none()) {
          op.kernels[size_t(k)] = nullptr;
          const_cast<OperatorEntry&>(op.handle.entry()).set_kernel(k, nullptr);
          return;
        }
        op.kernels[size_t(k)] = fn.inc_ref().ptr();
        const_cast<OperatorEntry&>(op.handle.entry()).set_kernel(k, kTrampolines[size_t(k)]);
      },
      nb::arg("handle"), nb::arg("key"), nb::arg("fn").none(),
      doc("_custom_op_set_kernel(handle, key, fn) -> None",
          "Makes fn(*args, **kwargs) the op's kernel for a dispatch key (None removes it)."));
  m.def(
      "_custom_op_call",
      [](size_t h, const std::vector<Tensor>& tensors, nb::tuple args, nb::dict kwargs) {
        PyOp& op = op_at(h);
        PyFrame frame{&op, args, kwargs, nb::none()};
        op.handle.call(tensors, &frame);
        return frame.result;
      },
      nb::arg("handle"), nb::arg("tensors"), nb::arg("args"), nb::arg("kwargs"),
      doc("_custom_op_call(handle, tensors, args, kwargs) -> object",
          "Calls a custom op through the dispatcher: tensors pick the key (and are what the "
          "profiler records), args and kwargs reach the kernel."));
  m.def(
      "_custom_op_redispatch",
      [](size_t h, const std::string& key, const std::vector<Tensor>& tensors, nb::tuple args,
         nb::dict kwargs) {
        PyOp& op = op_at(h);
        PyFrame frame{&op, args, kwargs, nb::none()};
        DispatchKey k = key == "backend" ? backend_of(tensors) : key_from(key);
        op.handle.redispatch(k, tensors, &frame);
        return frame.result;
      },
      nb::arg("handle"), nb::arg("key"), nb::arg("tensors"), nb::arg("args"), nb::arg("kwargs"),
      doc("_custom_op_redispatch(handle, key, tensors, args, kwargs) -> object",
          "Calls one key's kernel of a custom op ('backend': the tensors' backend), as an "
          "Autograd kernel reaches the backend."));
  m.def(
      "_bump_version", [](const Tensor& t) { t.bump_version(); }, nb::arg("self"),
      doc("_bump_version(self) -> None",
          "Records an in-place change of self's storage (a custom op's mutated argument)."));
  m.def(
      "_dispatch_keys",
      [] {
        std::vector<std::string> out;
        for (size_t k = 0; k < kNumDispatchKeys; ++k) out.push_back(key_name(DispatchKey(k)));
        return out;
      },
      doc("_dispatch_keys() -> List[str]", "The dispatcher's keys, in order."));

  m.def("_rename_privateuse1_backend", &rename_privateuse1_backend, nb::arg("name"),
        doc("_rename_privateuse1_backend(name) -> None",
            "Names the PrivateUse1 device type (Note [PrivateUse1] in core/allocator.h)."));
  m.def(
      "_get_privateuse1_backend_name", [] { return privateuse1_backend_name(); },
      doc("_get_privateuse1_backend_name() -> str",
          "The PrivateUse1 device type's name ('privateuseone' until renamed)."));
  m.def("_set_privateuse1_cpu_fallback", &set_privateuse1_cpu_fallback, nb::arg("on"),
        doc("_set_privateuse1_cpu_fallback(on) -> None",
            "Lets ops without a PrivateUse1 kernel run on the CPU, copying in and out."));
  m.def("_get_privateuse1_cpu_fallback", &privateuse1_cpu_fallback,
        doc("_get_privateuse1_cpu_fallback() -> bool", "Whether the CPU fallback is on."));
  m.def(
      "_privateuse1_has_allocator", [] { return privateuse1_allocator() != nullptr; },
      doc("_privateuse1_has_allocator() -> bool",
          "Whether a backend registered its allocator for PrivateUse1."));
  m.def(
      "_privateuse1_register_host_allocator",
      [] {
        PrivateUse1Allocator a;
        a.alloc = host_alloc;
        a.free = host_free;
        a.copy_to_device = host_copy;
        a.copy_to_host = host_copy;
        register_privateuse1_allocator(a);
      },
      doc("_privateuse1_register_host_allocator() -> None",
          "Registers an allocator over host memory for PrivateUse1: for a backend (a Python one, "
          "a test's) whose device memory is the host's."));
  m.def(
      "_privateuse1_host_allocator_stats",
      [] {
        return std::make_tuple(g_host_allocs.load(), g_host_frees.load(), g_host_bytes.load());
      },
      doc("_privateuse1_host_allocator_stats() -> Tuple[int, int, int]",
          "Allocations, frees and bytes in use of the host allocator for PrivateUse1."));
  m.def("_to_meta", &to_meta, nb::arg("self"),
        doc("_to_meta(self) -> Tensor",
            "A meta tensor (no data) with self's shape, dtype and dense strides."));
  m.def(
      "_empty_meta",
      [](std::vector<int64_t> sizes, std::optional<std::vector<int64_t>> strides,
         ScalarType dtype) {
        DimVector st = strides ? DimVector(IntArrayRef(*strides)) : contiguous_strides(sizes);
        return empty_strided(sizes, st, dtype, Device(DeviceType::Meta));
      },
      nb::arg("size"), nb::arg("stride").none(), nb::arg("dtype"),
      doc("_empty_meta(size, stride, dtype) -> Tensor",
          "A meta tensor: shape, strides and dtype, and no memory for its data."));
  m.def(
      "_copy_to_device",
      [](const Tensor& t, const std::string& device) { return copy_to_device(t, Device(device)); },
      nb::arg("self"), nb::arg("device"),
      doc("_copy_to_device(self, device) -> Tensor",
          "A copy of self's storage on another device (cpu or the PrivateUse1 backend), with "
          "self's sizes, strides and offset; not recorded by autograd."));
}

}  // namespace ember::py
