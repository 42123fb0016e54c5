#include "ember/dispatch/dispatcher.h"

#include <map>
#include <memory>
#include <mutex>

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
void missing_kernel(const OperatorEntry& e, DispatchKey k) {
  EMBER_ERROR(ErrorKind::NotImplemented, "Could not run '", e.name(), "' with arguments from the '",
              key_name(k), "' backend: no kernel is registered for it");
}
}  // namespace detail

}  // namespace ember
