#include "ember/dispatch/autocast.h"

#include <array>
#include <unordered_map>
#include <utility>

#include "ember/core/tensor.h"

namespace ember::autocast {

namespace {
constexpr size_t kDeviceTypes = 4;
struct State {
  std::array<bool, kDeviceTypes> enabled{};
  std::array<ScalarType, kDeviceTypes> dtype{kBFloat16, kHalf, kBFloat16, kBFloat16};
  bool cache_enabled = true;
  bool excluded = false;
  int64_t nesting = 0;
  // source TensorImpl -> (source, cast): the source is held so its address is not reused while
  // the entry lives.
  std::unordered_map<const void*, std::pair<Tensor, Tensor>> cache;
};
thread_local State t_state;
// The hot-path flag: enabled[CPU] && !excluded.
thread_local bool t_active = false;

void refresh() { t_active = t_state.enabled[size_t(DeviceType::CPU)] && !t_state.excluded; }
size_t slot(DeviceType d) { return size_t(d) < kDeviceTypes ? size_t(d) : 0; }
}  // namespace

bool is_autocast_enabled(DeviceType device_type) { return t_state.enabled[slot(device_type)]; }
void set_autocast_enabled(DeviceType device_type, bool enabled) {
  t_state.enabled[slot(device_type)] = enabled;
  refresh();
}
ScalarType get_autocast_dtype(DeviceType device_type) { return t_state.dtype[slot(device_type)]; }
void set_autocast_dtype(DeviceType device_type, ScalarType dtype) {
  EMBER_CHECK(dtype == kBFloat16 || dtype == kHalf || dtype == kFloat,
              "set_autocast_dtype: expected bfloat16 or float16; got ", scalar_type_name(dtype));
  t_state.dtype[slot(device_type)] = dtype;
}
bool is_autocast_cache_enabled() { return t_state.cache_enabled; }
void set_autocast_cache_enabled(bool enabled) { t_state.cache_enabled = enabled; }
int64_t increment_nesting() { return ++t_state.nesting; }
int64_t decrement_nesting() {
  if (t_state.nesting > 0 && --t_state.nesting == 0) clear_cache();
  return t_state.nesting;
}
void clear_cache() { t_state.cache.clear(); }

bool is_active() { return t_active; }
bool is_excluded() { return t_state.excluded; }
void set_excluded(bool excluded) {
  t_state.excluded = excluded;
  refresh();
}
ExcludeGuard::ExcludeGuard() : prev_(t_state.excluded) { set_excluded(true); }
ExcludeGuard::~ExcludeGuard() { set_excluded(prev_); }

Tensor cached_cast(ScalarType to, const Tensor& t) {
  if (!t.defined() || !t.is_floating_point() || t.dtype() == kDouble || t.dtype() == to ||
      !t.device().is_cpu())
    return t;
  const bool cacheable = t_state.cache_enabled && to != kFloat && t.dtype() == kFloat &&
                         t.is_leaf() && t.requires_grad();
  if (!cacheable) return t.to(to);
  auto it = t_state.cache.find(t.impl());
  if (it != t_state.cache.end()) return it->second.second;
  Tensor cast = t.to(to);
  t_state.cache.emplace(t.impl(), std::make_pair(t, cast));
  return cast;
}

}  // namespace ember::autocast
