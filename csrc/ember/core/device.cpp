#include "ember/core/device.h"

#include "ember/core/error.h"

namespace ember {

namespace {
std::string& backend_name() {
  static auto* name = new std::string("privateuseone");  // leaked: read during static teardown
  return *name;
}
}  // namespace

void rename_privateuse1_backend(const std::string& name) {
  EMBER_CHECK(!name.empty() && name.find(':') == std::string::npos,
              "rename_privateuse1_backend: expected a device name without ':'; got '", name, "'");
  EMBER_CHECK(name != "cpu" && name != "cuda" && name != "meta", "rename_privateuse1_backend: '",
              name, "' is a built-in device type");
  std::string& cur = backend_name();
  EMBER_CHECK(cur == "privateuseone" || cur == name,
              "torch.register_privateuse1_backend() has already been set! Current backend: ", cur);
  cur = name;
}

const std::string& privateuse1_backend_name() { return backend_name(); }

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  if (kind == "cpu") type = DeviceType::CPU;
  else if (kind == "cuda") type = DeviceType::CUDA;
  else if (kind == "meta") type = DeviceType::Meta;
  else if (kind == "privateuseone" || kind == backend_name()) type = DeviceType::PrivateUse1;
  else
    EMBER_ERROR(ErrorKind::Runtime, "Expected one of cpu, cuda, meta, ", backend_name(),
                " device type at start of device string: ", spec);
  if (colon != std::string::npos) {
    std::string idx = spec.substr(colon + 1);
    EMBER_CHECK(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos,
                "Invalid device string: '", spec, "'");
    index = int8_t(std::stoi(idx));
  }
}

std::string Device::str() const {
  const char* names[] = {"cpu", "cuda", "meta", nullptr};
  std::string s = type == DeviceType::PrivateUse1 ? backend_name() : names[int(type)];
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember
