#include "ember/core/device.h"

#include "ember/core/error.h"

namespace ember {

Device::Device(const std::string& spec) {
  auto colon = spec.find(':');
  std::string kind = spec.substr(0, colon);
  if (kind == "cpu") type = DeviceType::CPU;
  else if (kind == "cuda") type = DeviceType::CUDA;
  else if (kind == "meta") type = DeviceType::Meta;
  else if (kind == "privateuseone") type = DeviceType::PrivateUse1;
  else
    EMBER_ERROR(ErrorKind::Runtime,
                "Expected one of cpu, cuda, meta, privateuseone device type at start of device "
                "string: ",
                spec);
  if (colon != std::string::npos) {
    std::string idx = spec.substr(colon + 1);
    EMBER_CHECK(!idx.empty() && idx.find_first_not_of("0123456789") == std::string::npos,
                "Invalid device string: '", spec, "'");
    index = int8_t(std::stoi(idx));
  }
}

std::string Device::str() const {
  const char* names[] = {"cpu", "cuda", "meta", "privateuseone"};
  std::string s = names[int(type)];
  if (index >= 0) s += ":" + std::to_string(index);
  return s;
}

}  // namespace ember
