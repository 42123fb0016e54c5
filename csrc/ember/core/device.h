#pragma once
// Where a tensor lives. Only CPU has kernels today; the enum keeps room for more.
#include <cstdint>
#include <string>

namespace ember {

enum class DeviceType : int8_t { CPU, CUDA, Meta, PrivateUse1 };

/// A device and index, e.g. cpu or cuda:1.
struct Device {
  DeviceType type = DeviceType::CPU;
  int8_t index = -1;
  Device() = default;
  Device(DeviceType t, int8_t i = -1) : type(t), index(i) {}
  /// Parses "cpu", "cuda", "cuda:0" (and the PrivateUse1 backend's name); an unknown name
  /// raises RuntimeError.
  explicit Device(const std::string& spec);
  bool operator==(const Device&) const = default;
  bool is_cpu() const { return type == DeviceType::CPU; }
  std::string str() const;
};

/// Gives the PrivateUse1 device type its backend's name (Note [PrivateUse1] in
/// core/allocator.h): "privateuseone" until then. Allowed once (again with the same name).
void rename_privateuse1_backend(const std::string& name);
/// The PrivateUse1 device type's name as strings spell it.
const std::string& privateuse1_backend_name();

constexpr DeviceType kCPU = DeviceType::CPU;
constexpr DeviceType kCUDA = DeviceType::CUDA;

}  // namespace ember
