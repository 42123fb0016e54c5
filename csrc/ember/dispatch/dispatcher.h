#pragma once
// Operators by name with one kernel per dispatch key. See Note [Dispatch].
//
// Note [Dispatch]
// A call computes its key from the arguments: Autograd when grad mode is on and a tensor
// argument requires grad (and the op registered an Autograd kernel), else the backend of the
// tensors' device. The Autograd kernel records the graph node and redispatches to the backend.
// Ops and backends register from their own files through EMBER_REGISTER_KERNEL, so nothing
// central changes when either is added.
// Before all of them, while autocast is active, comes Autocast (Note [Autocast]); before
// that, while this thread has a Python dispatch mode on, the hook (Note [Python dispatch hook]).
#include <array>
#include <concepts>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "ember/core/grad_mode.h"
#include "ember/core/profiler.h"
#include "ember/core/tensor.h"
#include "ember/dispatch/autocast.h"
#include "ember/dispatch/fallback.h"
#include "ember/dispatch/op_schema.h"
#include "ember/dispatch/python_dispatch.h"

namespace ember {

enum class DispatchKey : uint8_t { CPU, CUDA, Meta, PrivateUse1, Autograd, Autocast, NumKeys };
constexpr size_t kNumDispatchKeys = size_t(DispatchKey::NumKeys);
/// The key's name ("CPU", "Autograd", ...).
const char* key_name(DispatchKey k);

/// The backend key for a device.
inline DispatchKey backend_key(Device d) { return DispatchKey(uint8_t(d.type)); }

/// One operator: its name, its schema (Note [Op schemas]) and a kernel pointer per key, all of
/// the signature its declaration names.
class OperatorEntry {
 public:
  OperatorEntry(std::string name, std::string schema)
      : name_(std::move(name)), schema_(std::move(schema)) {}
  const std::string& name() const { return name_; }
  const std::string& schema() const { return schema_; }
  void* kernel(DispatchKey k) const { return kernels_[size_t(k)]; }
  void set_kernel(DispatchKey k, void* fn) { kernels_[size_t(k)] = fn; }

 private:
  std::string name_;
  std::string schema_;
  std::array<void*, kNumDispatchKeys> kernels_{};
};

// Note [Kernels release the GIL]
// Backend kernels are pure computation: no autograd, no Python, no callbacks. A language binding
// can therefore let its other threads run while one executes, by installing hooks that the
// dispatcher calls around every backend kernel: `enter` gives up the interpreter lock and returns
// a token (null when there was nothing to give up, as inside a kernel that calls another op);
// `exit` takes it back. Recording autograd nodes and running Python hooks stays outside, under
// the lock. Code that waits for a mutex a kernel may hold opens a region too (KernelRegion), so
// it never waits while holding the interpreter lock that the holder needs back.
// Kernels over fewer than kRegionMinElements elements of tensor arguments skip the region: they
// finish in a few microseconds, and giving up and retaking the lock (~60 ns) would cost small
// ops ~12%.
constexpr int64_t kRegionMinElements = 1 << 14;
struct KernelRegionHooks {
  void* (*enter)() = nullptr;
  void (*exit)(void* token) = nullptr;
};
/// Installs the hooks (the Python extension does, at import).
void set_kernel_region_hooks(KernelRegionHooks hooks);
/// The installed hooks.
const KernelRegionHooks& kernel_region_hooks();

/// An open region (see Note [Kernels release the GIL]) for the lifetime of the object.
class KernelRegion {
 public:
  explicit KernelRegion(bool open = true) {
    auto& h = kernel_region_hooks();
    if (open && h.enter) token_ = h.enter();
  }
  ~KernelRegion() {
    if (token_) kernel_region_hooks().exit(token_);
  }
  KernelRegion(const KernelRegion&) = delete;
  KernelRegion& operator=(const KernelRegion&) = delete;

 private:
  void* token_ = nullptr;
};

/// The process-wide operator table.
class Dispatcher {
 public:
  static Dispatcher& singleton();
  /// The entry for an op declaration, created on first use; entries are never removed. Two
  /// declarations of one name with different schemas raise.
  OperatorEntry& op(std::string_view name, std::string_view schema);
  const OperatorEntry* find(std::string_view name) const;
  /// Every operator, by name: the registry behind ember's op listing.
  std::vector<const OperatorEntry*> entries() const;
};

namespace detail {
struct KeyState {
  bool requires_grad = false;
  bool quantized = false;  // Note [Quantized tensors] in core/quantizer.h
  std::optional<Device> device;
  void visit(const Tensor& t) {
    if (!t.defined()) return;
    quantized = quantized || is_quantized(t.dtype());
    if (!device || (device->is_cpu() && !t.device().is_cpu())) device = t.device();
    requires_grad = requires_grad || t.requires_grad();
  }
  void visit(const std::optional<Tensor>& t) {
    if (t) visit(*t);
  }
  void visit(TensorList ts) {
    for (const Tensor& t : ts) visit(t);
  }
  void visit(const std::vector<Tensor>& ts) { visit(TensorList(ts)); }
  template <class T>
  void visit(const T&) {}
};
[[noreturn]] void missing_kernel(const OperatorEntry& e, DispatchKey k);
// Quantized inputs (Note [Quantized tensors]): the ops that run on the integers and hand back a
// quantized result; any other op raises torch's NotImplementedError for 'QuantizedCPU'.
void check_quantized_op(const OperatorEntry& e);
Tensor quantized_repr(const Tensor& t);
Tensor quantized_result(const Tensor& out, const Tensor& like);
// A list argument (cat's tensors) takes part as its tensors do: the first quantized tensor of the
// call, in a list or not, gives the result its parameters, and a list's other tensors are
// requantized to them (quantized_list_repr).
template <class T>
void first_quantized(const Tensor*& found, const T& a) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) {
    if (!found && a.defined() && is_quantized(a.dtype())) found = &a;
  } else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::vector<Tensor>>) {
    for (const Tensor& t : a) first_quantized(found, t);
  }
}
std::vector<Tensor> quantized_list_repr(const OperatorEntry& e, TensorList ts, const Tensor& like);
/// Requantizes a quantized tensor to the parameters of `like` (installed by the layer that owns
/// quantize/dequantize: the Python extension).
using RequantizeFn = Tensor (*)(const Tensor& q, const Tensor& like);
void set_requantize_fn(RequantizeFn fn);
template <class T>
struct is_tuple : std::false_type {};
template <class... T>
struct is_tuple<std::tuple<T...>> : std::true_type {};
template <class T>
auto repr_arg(const OperatorEntry& e, const T& a, const Tensor& like) {
  using D = std::decay_t<T>;
  if constexpr (std::is_same_v<D, Tensor>) return quantized_repr(a);
  else if constexpr (std::is_same_v<D, TensorList> || std::is_same_v<D, std::vector<Tensor>>)
    return quantized_list_repr(e, a, like);
  else return D(a);
}
// Elements of a kernel's tensor arguments: a rough measure of its work.
inline int64_t elements(const Tensor& t) { return t.defined() ? t.numel() : 0; }
inline int64_t elements(const std::optional<Tensor>& t) { return t ? elements(*t) : 0; }
inline int64_t elements(TensorList ts) {
  int64_t n = 0;
  for (const Tensor& t : ts) n += elements(t);
  return n;
}
inline int64_t elements(const std::vector<Tensor>& ts) { return elements(TensorList(ts)); }
template <class T>
int64_t elements(const T&) {
  return 0;
}
// A profiled op's arguments (Note [Profiler inputs]), boxed as for the Python dispatch hook; an
// argument without a boxed form records as None. An OpRange's plain numbers and size vectors
// (Note [Profiler rows]) box as the schema's int, float and int[] would.
void profile_boxed(int64_t handle, const BoxedList& args);
template <class T>
void box_profiled(BoxedList& l, const T& a) {
  namespace pd = python_dispatch;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) pd::box(l, int64_t(a));
  else if constexpr (std::is_floating_point_v<T>) pd::box(l, double(a));
  else if constexpr (requires {
                       { a.data() } -> std::convertible_to<const int64_t*>;
                       a.size();
                     })
    pd::box(l, IntArrayRef(a.data(), a.size()));
  else if (!pd::box(l, a)) l.emplace_back();
}
template <class... Args>
void profile_inputs(int64_t handle, const Args&... args) {
  BoxedList boxed;
  boxed.reserve(sizeof...(Args));
  (box_profiled(boxed, args), ...);
  profile_boxed(handle, boxed);
}
}  // namespace detail

template <class Sig>
class TypedOperator;

/// A typed handle to an operator; ops keep one in a function-local static.
template <class R, class... Args>
class TypedOperator<R(Args...)> {
 public:
  TypedOperator(std::string_view name, std::string_view schema)
      : entry_(&Dispatcher::singleton().op(name, schema)) {}

  R call(Args... args) const {
    if (python_dispatch::maybe_active()) [[unlikely]]
      return call_hooked(std::forward<Args>(args)...);
    return call_keys(std::forward<Args>(args)...);
  }

  /// The call below the Python dispatch hook: key selection and the kernel.
  R call_keys(Args... args) const {
    if (autocast::is_active() && entry_->kernel(DispatchKey::Autocast)) [[unlikely]]
      return redispatch(DispatchKey::Autocast, std::forward<Args>(args)...);
    detail::KeyState st;
    (st.visit(args), ...);
    DispatchKey backend = backend_key(st.device.value_or(Device()));
    if (st.quantized) [[unlikely]]
      return call_quantized(backend, args...);
    if (st.requires_grad && GradMode::is_enabled() && entry_->kernel(DispatchKey::Autograd))
      return redispatch(DispatchKey::Autograd, std::forward<Args>(args)...);
    return redispatch(backend, std::forward<Args>(args)...);
  }

  /// Calls the kernel of a given key (the Autograd kernel uses this to reach the backend).
  /// Backend kernels run with grad mode off: the Autograd kernel already recorded the node, and
  /// composites inside a kernel must not record their own. Every call reaches a kernel through
  /// here, so this is where a profile records the op (Note [Profiler]); without a profile, the
  /// cost is the branch on profiler::enabled().
  R redispatch(DispatchKey k, Args... args) const {
    if (profiler::enabled()) [[unlikely]]
      return redispatch_profiled(k, std::forward<Args>(args)...);
    return run_kernel(k, std::forward<Args>(args)...);
  }

  const OperatorEntry& entry() const { return *entry_; }

 private:
  // Runs an op that copies integers (index, copy_, flip ...) on the integer views of its
  // quantized inputs and gives its result the quantizer of the first one.
  [[gnu::noinline]] R call_quantized(DispatchKey k, const std::decay_t<Args>&... args) const {
    detail::check_quantized_op(*entry_);
    const Tensor* like = nullptr;
    (detail::first_quantized(like, args), ...);
    Tensor keep = like ? *like : Tensor();
    auto conv = std::make_tuple(detail::repr_arg(*entry_, args, keep)...);
    if constexpr (std::is_reference_v<R>) {  // in place: the integers of `like` were written
      std::apply([&](auto&... a) -> R { return redispatch(k, a...); }, conv);
      return const_cast<R>(*like);
    } else if constexpr (std::is_same_v<R, Tensor>) {
      Tensor out = std::apply([&](auto&... a) -> Tensor { return redispatch(k, a...); }, conv);
      return detail::quantized_result(out, keep);
    } else if constexpr (detail::is_tuple<R>::value) {  // (values, indices) of pooling
      R out = std::apply([&](auto&... a) -> R { return redispatch(k, a...); }, conv);
      std::apply([&](auto&... t) { ((t = detail::quantized_result(t, keep)), ...); }, out);
      return out;
    } else {
      return std::apply([&](auto&... a) -> R { return redispatch(k, a...); }, conv);
    }
  }

  // Note [Python dispatch hook]: the op boxed and handed to the hook, or run un-hooked when
  // this thread has no mode on or an argument has no boxed form.
  [[gnu::noinline]] R call_hooked(Args... args) const {
    namespace pd = python_dispatch;
    if constexpr (!pd::returns_boxable<R>::value) {
      return call_keys(std::forward<Args>(args)...);
    } else {
      BoxedList in;
      in.reserve(sizeof...(Args));
      if (!pd::active() || !pd::hook() || !(pd::box(in, args) && ...))
        return call_keys(std::forward<Args>(args)...);
      auto below = [&](BoxedList& out) {
        pd::Suspend off;
        if constexpr (std::is_void_v<R>) call_keys(args...);
        else pd::box_result(out, call_keys(args...));
      };
      using BelowFn = decltype(below);
      BoxedList out;
      pd::hook()(
          *entry_, in, detail::is_tuple<std::decay_t<R>>::value,
          [](void* ctx, BoxedList& o) { (*static_cast<BelowFn*>(ctx))(o); }, &below, out);
      std::array<Tensor*, sizeof...(Args) + 1> written{};
      size_t n = 0;
      (pd::note_written<Args>(written.data(), n, args), ...);
      return pd::make_result<R>(*entry_, out, written.data());
    }
  }

  [[gnu::noinline]] R redispatch_profiled(DispatchKey k, Args... args) const {
    profiler::Range range(profiler::RangeKind::Op, entry_->name());
    if (range.handle() >= 0 && profiler::records_shapes())
      detail::profile_inputs(range.handle(), args...);
    return run_kernel(k, std::forward<Args>(args)...);
  }

  R run_kernel(DispatchKey k, Args... args) const {
    void* fn = entry_->kernel(k);
    if (!fn) [[unlikely]] {
      void* cpu = entry_->kernel(DispatchKey::CPU);  // Note [PrivateUse1] in core/allocator.h
      if (k == DispatchKey::Meta && cpu)             // Note [Meta fallback] in dispatch/fallback.h
        return meta_fallback<R, Args...>(entry_->name(), cpu, std::forward<Args>(args)...);
      if (k == DispatchKey::PrivateUse1 && cpu && privateuse1_cpu_fallback())
        return fallback_detail::cpu_fallback<R, Args...>(cpu, std::forward<Args>(args)...);
      detail::missing_kernel(*entry_, k);
    }
    auto kernel = reinterpret_cast<R (*)(Args...)>(fn);
    if (k == DispatchKey::Autograd || k == DispatchKey::Autocast)
      return kernel(std::forward<Args>(args)...);
    KernelRegion region((detail::elements(args) + ... + 0) >= kRegionMinElements);
    if (!GradMode::is_enabled()) return kernel(std::forward<Args>(args)...);
    AutoGradMode below_autograd(false);
    return kernel(std::forward<Args>(args)...);
  }

  OperatorEntry* entry_;
};

/// The backend key of a call's tensors (what the Autograd kernel redispatches to).
template <class... Args>
DispatchKey backend_of(const Args&... args) {
  detail::KeyState st;
  (st.visit(args), ...);
  return backend_key(st.device.value_or(Device()));
}

template <class Decl, class R, class... Args>
const TypedOperator<R(Args...)>& OpDecl<Decl, R(Args...)>::handle() {
  static const TypedOperator<R(Args...)> op(Decl::name, Decl::schema);
  return op;
}

/// Static registration helper behind EMBER_REGISTER_KERNEL. The kernel's type is the declared
/// signature's, so a kernel of another signature does not compile.
struct KernelRegistrar {
  template <class Decl>
  KernelRegistrar(const Decl&, DispatchKey k, typename Decl::Signature* fn) {
    Dispatcher::singleton().op(Decl::name, Decl::schema).set_kernel(k, reinterpret_cast<void*>(fn));
  }
};

}  // namespace ember

#define EMBER_CONCAT_(a, b) a##b
#define EMBER_CONCAT(a, b) EMBER_CONCAT_(a, b)
/// Registers `fn` as the kernel of operator declaration `op` (e.g. op::add) for dispatch key
/// `key`.
#define EMBER_REGISTER_KERNEL(op, key, fn)                                            \
  static ::ember::KernelRegistrar EMBER_CONCAT(ember_kernel_registrar_, __COUNTER__)( \
      op, ::ember::DispatchKey::key, fn)
