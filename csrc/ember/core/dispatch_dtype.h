#pragma once
// dtype dispatch: one helper maps a runtime ScalarType to a C++ type for a kernel lambda. It is
// the one dtype switch of the project (kernels, factories, optimizer loops), so it lives in core.
#include "ember/core/dtype.h"

namespace ember {

constexpr uint32_t type_bit(ScalarType t) { return 1u << int(t); }
constexpr uint32_t kFloatTypes =
    type_bit(kHalf) | type_bit(kBFloat16) | type_bit(kFloat) | type_bit(kDouble);
constexpr uint32_t kIntTypes =
    type_bit(kByte) | type_bit(kChar) | type_bit(kShort) | type_bit(kInt) | type_bit(kLong);
constexpr uint32_t kIntBoolTypes = kIntTypes | type_bit(kBool);
constexpr uint32_t kNumericTypes = kIntTypes | kFloatTypes;
constexpr uint32_t kAllTypes = kNumericTypes | type_bit(kBool);
constexpr uint32_t kComplexTypes = type_bit(kComplexFloat) | type_bit(kComplexDouble);

/// Raises "<op>" not implemented for '<dtype>' (NotImplementedError), as PyTorch words it.
[[noreturn]] void unsupported_dtype(const char* op, ScalarType t);

/// Calls f(T{}) with T the C++ type of `t`; types outside `Allowed` raise
/// "<op>" not implemented for '<dtype>' (and are never instantiated).
template <uint32_t Allowed, class F>
void dispatch(ScalarType t, const char* op, F&& f) {
  switch (t) {
#define EMBER_DISPATCH_CASE(cpp, name, py)                  \
  case ScalarType::name:                                    \
    if constexpr ((Allowed >> int(ScalarType::name)) & 1) { \
      f(cpp{});                                             \
      return;                                               \
    }                                                       \
    break;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_DISPATCH_CASE)
#undef EMBER_DISPATCH_CASE
    default:
      break;
  }
  unsupported_dtype(op, t);
}

}  // namespace ember
