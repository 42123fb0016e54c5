#include "ember/dispatch/dispatcher.h"

#include "ember/core/quantizer.h"

#include <atomic>
#include <bit>
#include <map>
#include <memory>
#include <mutex>
#include <set>

namespace ember {

namespace {
struct Table {
  std::mutex mutex;
  std::map<std::string, std::unique_ptr<OperatorEntry>, std::less<>> ops;
};
Table& table() {
  static Table* t = new Table();  // leaked: registrations may run during static destruction
  return *t;
}
KernelRegionHooks g_region_hooks;
}  // namespace

const char* key_name(DispatchKey k) {
  const char* names[] = {"CPU", "CUDA", "Meta", "PrivateUse1", "Autograd", "Autocast"};
  return names[size_t(k)];
}

void set_kernel_region_hooks(KernelRegionHooks hooks) { g_region_hooks = hooks; }
const KernelRegionHooks& kernel_region_hooks() { return g_region_hooks; }

Dispatcher& Dispatcher::singleton() {
  static Dispatcher d;
  return d;
}

OperatorEntry& Dispatcher::op(std::string_view name, std::string_view schema) {
  auto& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  auto it = t.ops.find(name);
  if (it == t.ops.end())
    it = t.ops
             .emplace(std::string(name),
                      std::make_unique<OperatorEntry>(std::string(name), std::string(schema)))
             .first;
  EMBER_CHECK(it->second->schema() == schema, "operator '", name, "' is declared twice: '",
              it->second->schema(), "' and '", schema, "'");
  return *it->second;
}

const OperatorEntry* Dispatcher::find(std::string_view name) const {
  auto& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  auto it = t.ops.find(name);
  return it == t.ops.end() ? nullptr : it->second.get();
}

std::vector<const OperatorEntry*> Dispatcher::entries() const {
  auto& t = table();
  std::lock_guard<std::mutex> g(t.mutex);
  std::vector<const OperatorEntry*> out;
  for (auto& [n, e] : t.ops) out.push_back(e.get());
  return out;
}

namespace detail {
void check_quantized_op(const OperatorEntry& e) {
  static const std::set<std::string_view> kIntegerOps = {"copy_",
                                                         "index.Tensor",
                                                         "index_select",
                                                         "flip",
                                                         "gather",
                                                         "_take_along_dim",
                                                         "max_pool2d_with_indices",
                                                         "adaptive_max_pool2d",
                                                         "cat",
                                                         "sort",
                                                         "topk",
                                                         "max.dim",
                                                         "min.dim"};
  // torch's structured ops reach the backend through their out= overload, which its text names
  static const std::set<std::string_view> kStructured = {
      "amax",       "amin",   "argmax",   "argmin",  "abs",     "neg",        "sign",
      "floor",      "ceil",   "trunc",    "round",   "frac",    "exp",        "exp2",
      "expm1",      "log",    "log1p",    "sqrt",    "rsqrt",   "reciprocal", "sin",
      "cos",        "erf",    "digamma",  "lgamma",  "signbit", "isneginf",   "bitwise_not",
      "nan_to_num", "cumsum", "_softmax", "minimum", "maximum", "logical_not"};
  if (kIntegerOps.count(e.name())) return;
  std::string_view name = e.name();
  std::string aten(name.substr(0, name.find('.')));
  // ember's own overloads (".ember") are no ATen names: torch's text names the bare op
  std::string overload = name.find('.') == std::string_view::npos
                             ? std::string()
                             : std::string(name.substr(name.find('.')));
  if (overload == ".ember") overload.clear();
  if (overload.empty() && kStructured.count(name)) overload = ".out";
  EMBER_ERROR(ErrorKind::NotImplemented, "Could not run 'aten::", aten, overload,
              "' with arguments from the 'QuantizedCPU' backend. This could be because the "
              "operator doesn't exist for this backend, or was omitted during the selective/custom "
              "build process (if using custom build).");
}

namespace {
std::atomic<RequantizeFn> g_requantize{nullptr};

bool same_qparams(const Tensor& a, const Tensor& b) {
  const Quantizer* qa = quantizer_of(a);
  const Quantizer* qb = quantizer_of(b);
  return qa == qb || (qa && qb && qa->scale == qb->scale && qa->zero_point == qb->zero_point);
}
}  // namespace

void set_requantize_fn(RequantizeFn fn) { g_requantize.store(fn); }

// The integers of a list of quantized tensors, as torch's quantized cat takes them: all of one
// quantized dtype and per tensor; a tensor whose scale or zero point differs from `like`'s is
// requantized to them first (torch warns there, since the values lose precision).
std::vector<Tensor> quantized_list_repr(const OperatorEntry& e, TensorList ts, const Tensor& like) {
  std::string_view name = e.name();
  std::string aten(name.substr(0, name.find('.')));
  std::vector<Tensor> out;
  out.reserve(ts.size());
  for (const Tensor& t : ts) {
    EMBER_CHECK_KIND(t.defined() && is_quantized(t.dtype()), ErrorKind::NotImplemented,
                     "Could not run 'aten::qscheme' with arguments from the '",
                     key_name(backend_key(t.defined() ? t.device() : Device())),
                     "' backend. This could be because the operator doesn't exist for this "
                     "backend, or was omitted during the selective/custom build process (if using "
                     "custom build).");
    EMBER_CHECK(t.dtype() == like.dtype(), "All dtypes must be the same.");
    const Quantizer* q = quantizer_of(t);
    EMBER_CHECK(q && !is_per_channel(q->scheme), "Only per-tensor quantization is supported in '",
                aten, "'!");
    if (same_qparams(t, like)) {
      out.push_back(quantized_repr(t));
      continue;
    }
    RequantizeFn fn = g_requantize.load();
    EMBER_CHECK(fn, aten, ": expected inputs sharing one scale and zero point; got different ones");
    out.push_back(quantized_repr(fn(t, like)));
  }
  return out;
}

Tensor quantized_repr(const Tensor& t) {
  return t.defined() && is_quantized(t.dtype()) ? int_repr_view(t) : t;
}

Tensor quantized_result(const Tensor& out, const Tensor& like) {
  if (!like.defined() || !out.defined() || out.dtype() != underlying_type(like.dtype())) return out;
  return make_quantized_like(out, like);
}

void missing_kernel(const OperatorEntry& e, DispatchKey k) {
  if (k == DispatchKey::PrivateUse1)
    EMBER_ERROR(ErrorKind::NotImplemented, "Could not run '", e.name(),
                "' with arguments from the 'PrivateUse1' backend ('", privateuse1_backend_name(),
                "'): no kernel is registered for it, and the backend did not opt in to the CPU "
                "fallback (ember._C._set_privateuse1_cpu_fallback(True))");
  EMBER_ERROR(ErrorKind::NotImplemented, "Could not run '", e.name(), "' with arguments from the '",
              key_name(k), "' backend: no kernel is registered for it");
}
}  // namespace detail

namespace detail {

namespace {
using profiler::ValueKind;
void profile_tensor(int64_t h, const Tensor& t) {
  if (t.defined()) profiler::add_input_tensor(h, t.sizes(), t.strides(), int8_t(t.dtype()));
  else profiler::add_input_other(h);
}
void profile_value(int64_t h, const BoxedValue& v) {
  std::visit(
      [h](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, Tensor>) {
          profile_tensor(h, x);
        } else if constexpr (std::is_same_v<T, std::vector<Tensor>>) {
          profiler::add_input_list(h, int64_t(x.size()));
          for (const Tensor& t : x) profile_tensor(h, t);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          profiler::add_input_value(h, ValueKind::Int, x);
        } else if constexpr (std::is_same_v<T, double>) {
          profiler::add_input_value(h, ValueKind::Double, std::bit_cast<int64_t>(x));
        } else if constexpr (std::is_same_v<T, bool>) {
          profiler::add_input_value(h, ValueKind::Bool, x);
        } else if constexpr (std::is_same_v<T, ScalarType>) {
          profiler::add_input_value(h, ValueKind::DType, int64_t(x));
        } else if constexpr (std::is_same_v<T, Scalar>) {
          if (x.is_floating_point())
            profiler::add_input_value(h, ValueKind::Double, std::bit_cast<int64_t>(x.to_double()));
          else
            profiler::add_input_value(h, x.is_bool() ? ValueKind::Bool : ValueKind::Int,
                                      x.to_long());
        } else if constexpr (std::is_same_v<T, std::vector<int64_t>> ||
                             std::is_same_v<T, std::vector<bool>>) {
          if (x.size() > profiler::kMaxValueList) return profiler::add_input_other(h);
          std::vector<int64_t> bits(x.begin(), x.end());
          profiler::add_input_values(
              h, std::is_same_v<T, std::vector<bool>> ? ValueKind::Bool : ValueKind::Int,
              bits.data(), int64_t(bits.size()));
        } else {  // None, strings, lists of optional tensors: torch records no value
          profiler::add_input_other(h);
        }
      },
      v);
}
}  // namespace

void profile_boxed(int64_t handle, const BoxedList& args) {
  for (const BoxedValue& v : args) profile_value(handle, v);
}

}  // namespace detail

}  // namespace ember
