#pragma once
// Option vocabulary shared by modules and functionals: ExpandingArray and libtorch's k-constants.
#include <array>
#include <initializer_list>
#include <string>
#include <vector>

#include "ember/core/array_ref.h"
#include "ember/core/error.h"

namespace ember {

namespace enumtype {
struct kValid {};
struct kSame {};
}  // namespace enumtype
/// Convolution padding that keeps no border / keeps the input size (padding='valid'/'same').
inline constexpr enumtype::kValid kValid{};
inline constexpr enumtype::kSame kSame{};

// Modes and names are strings inside ember; the constants keep libtorch spellings working.
inline constexpr const char* kZeros = "zeros";
inline constexpr const char* kReflect = "reflect";
inline constexpr const char* kReplicate = "replicate";
inline constexpr const char* kCircular = "circular";
inline constexpr const char* kConstant = "constant";
inline constexpr const char* kFanIn = "fan_in";
inline constexpr const char* kFanOut = "fan_out";
inline constexpr const char* kLinear = "linear";
inline constexpr const char* kReLU = "relu";
inline constexpr const char* kLeakyReLU = "leaky_relu";
inline constexpr const char* kTanh = "tanh";
inline constexpr const char* kSigmoid = "sigmoid";

/// D integers given as one value (repeated) or as exactly D values: `3` or `{3, 5}`.
template <size_t D>
class ExpandingArray {
 public:
  ExpandingArray(int64_t v) { values_.fill(v); }
  ExpandingArray(std::initializer_list<int64_t> list) : ExpandingArray(IntArrayRef(list)) {}
  ExpandingArray(const std::vector<int64_t>& list) : ExpandingArray(IntArrayRef(list)) {}
  ExpandingArray(IntArrayRef list) {
    EMBER_CHECK_VALUE(list.size() == D, "Expected ", D, " values but got ", list.size());
    for (size_t i = 0; i < D; ++i) values_[i] = list[i];
  }
  operator IntArrayRef() const { return IntArrayRef(values_.data(), D); }
  int64_t operator[](size_t i) const { return values_[i]; }
  constexpr size_t size() const { return D; }
  const std::array<int64_t, D>& operator*() const { return values_; }

 private:
  std::array<int64_t, D> values_;
};

}  // namespace ember
