#pragma once
// Element types: one X-macro list drives the enum, names, sizes and every dtype dispatch.
#include <complex>
#include <cstdint>
#include <string_view>

#include "ember/core/error.h"
#include "ember/core/half.h"

namespace ember {

// (C++ type, enum name, Python name). The order is PyTorch's, so promotion reads like its table.
#define EMBER_FORALL_DTYPES(_)    \
  _(uint8_t, Byte, uint8)         \
  _(int8_t, Char, int8)           \
  _(int16_t, Short, int16)        \
  _(int32_t, Int, int32)          \
  _(int64_t, Long, int64)         \
  _(::ember::Half, Half, float16) \
  _(float, Float, float32)        \
  _(double, Double, float64)      \
  _(bool, Bool, bool)             \
  _(::ember::BFloat16, BFloat16, bfloat16)

// Complex types, after the real ones (torch's ComplexFloat/ComplexDouble). Kernels opt in to them
// through EMBER_FORALL_DTYPES_AND_COMPLEX and kComplexTypes (core/dispatch_dtype.h).
#define EMBER_FORALL_COMPLEX_DTYPES(_)            \
  _(std::complex<float>, ComplexFloat, complex64) \
  _(std::complex<double>, ComplexDouble, complex128)
#define EMBER_FORALL_DTYPES_AND_COMPLEX(_) \
  EMBER_FORALL_DTYPES(_)                   \
  EMBER_FORALL_COMPLEX_DTYPES(_)

// Quantized element types, appended after the complex ones: (storage C++ type, enum name, Python
// name). They are kept out of EMBER_FORALL_DTYPES so no dtype-dispatched kernel instantiates
// them; quantized tensors reach only the kernels of `cpu/quantized.cpp` (Note [Quantized tensors]
// in core/quantizer.h). quint4x2 packs two 4-bit values per byte.
#define EMBER_FORALL_QUANTIZED_DTYPES(_) \
  _(int8_t, QInt8, qint8)                \
  _(uint8_t, QUInt8, quint8)             \
  _(int32_t, QInt32, qint32)             \
  _(uint8_t, QUInt4x2, quint4x2)

/// The element type of a tensor (libtorch's `ScalarType`).
enum class ScalarType : int8_t {
#define EMBER_ENUM(cpp, name, py) name,
  EMBER_FORALL_DTYPES(EMBER_ENUM) EMBER_FORALL_COMPLEX_DTYPES(EMBER_ENUM)
      EMBER_FORALL_QUANTIZED_DTYPES(EMBER_ENUM)
#undef EMBER_ENUM
          Undefined,
  NumOptions = Undefined
};
using DType = ScalarType;

constexpr ScalarType kBool = ScalarType::Bool;
constexpr ScalarType kByte = ScalarType::Byte;
constexpr ScalarType kUInt8 = ScalarType::Byte;
constexpr ScalarType kChar = ScalarType::Char;
constexpr ScalarType kInt8 = ScalarType::Char;
constexpr ScalarType kShort = ScalarType::Short;
constexpr ScalarType kInt16 = ScalarType::Short;
constexpr ScalarType kInt = ScalarType::Int;
constexpr ScalarType kInt32 = ScalarType::Int;
constexpr ScalarType kLong = ScalarType::Long;
constexpr ScalarType kInt64 = ScalarType::Long;
constexpr ScalarType kHalf = ScalarType::Half;
constexpr ScalarType kFloat16 = ScalarType::Half;
constexpr ScalarType kBFloat16 = ScalarType::BFloat16;
constexpr ScalarType kFloat = ScalarType::Float;
constexpr ScalarType kFloat32 = ScalarType::Float;
constexpr ScalarType kDouble = ScalarType::Double;
constexpr ScalarType kFloat64 = ScalarType::Double;
constexpr ScalarType kComplexFloat = ScalarType::ComplexFloat;
constexpr ScalarType kComplexDouble = ScalarType::ComplexDouble;

/// Bytes per element.
size_t element_size(ScalarType t);
/// PyTorch's Python-facing name without the "torch." prefix, e.g. "float32".
std::string_view dtype_name(ScalarType t);
/// libtorch-style name used in error messages, e.g. "Float".
std::string_view scalar_type_name(ScalarType t);
/// The C++ type name some PyTorch messages print, e.g. "long int" or "c10::Half".
std::string_view cpp_type_name(ScalarType t);

constexpr bool is_floating_point(ScalarType t) {
  return t == kHalf || t == kBFloat16 || t == kFloat || t == kDouble;
}
constexpr bool is_integral(ScalarType t, bool include_bool) {
  return (include_bool && t == kBool) || t == kByte || t == kChar || t == kShort || t == kInt ||
         t == kLong;
}
constexpr bool is_signed(ScalarType t) {
  return t != kBool && t != kByte && t != ScalarType::QUInt8 && t != ScalarType::QUInt4x2;
}
constexpr bool is_complex(ScalarType t) { return t == kComplexFloat || t == kComplexDouble; }
/// Whether tensors of this type can carry gradients (floating or complex).
constexpr bool is_differentiable_type(ScalarType t) {
  return is_floating_point(t) || is_complex(t);
}
/// complex64 <-> float32, complex128 <-> float64 (real types narrower than float map to complex64).
constexpr ScalarType to_complex_type(ScalarType t) {
  return t == kDouble || t == kComplexDouble ? kComplexDouble : kComplexFloat;
}
constexpr ScalarType to_real_type(ScalarType t) {
  return t == kComplexDouble ? kDouble : t == kComplexFloat ? kFloat : t;
}
constexpr ScalarType kQInt8 = ScalarType::QInt8;
constexpr ScalarType kQUInt8 = ScalarType::QUInt8;
constexpr ScalarType kQInt32 = ScalarType::QInt32;
constexpr ScalarType kQUInt4x2 = ScalarType::QUInt4x2;
/// Whether `t` is one of the quantized types (qint8, quint8, qint32, quint4x2).
constexpr bool is_quantized(ScalarType t) {
  return t == kQInt8 || t == kQUInt8 || t == kQInt32 || t == kQUInt4x2;
}
/// The plain integer type holding a quantized type's values (`int_repr`'s dtype).
constexpr ScalarType underlying_type(ScalarType t) {
  return t == kQInt8 ? kChar : t == kQInt32 ? kInt : (t == kQUInt8 || t == kQUInt4x2) ? kByte : t;
}

/// PyTorch's pairwise promotion table (`torch.promote_types`).
ScalarType promote_types(ScalarType a, ScalarType b);

/// The default floating dtype (`torch.get_default_dtype`), float32 unless changed.
ScalarType default_dtype();
/// Sets the default floating dtype; only float types are allowed, as in PyTorch.
void set_default_dtype(ScalarType t);

template <class T>
struct CppTypeToScalarType;
#define EMBER_CPP_TO_DTYPE(cpp, name, py)                 \
  template <>                                             \
  struct CppTypeToScalarType<cpp> {                       \
    static constexpr ScalarType value = ScalarType::name; \
  };
EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_CPP_TO_DTYPE)
#undef EMBER_CPP_TO_DTYPE
/// The ScalarType of a C++ element type.
template <class T>
constexpr ScalarType dtype_of = CppTypeToScalarType<T>::value;

/// Accumulation type: 16-bit floats compute in float, small ints in int64 where sums need it.
template <class T>
struct AccType {
  using type = T;
};
template <>
struct AccType<Half> {
  using type = float;
};
template <>
struct AccType<BFloat16> {
  using type = float;
};
template <class T>
using acc_t = typename AccType<T>::type;

}  // namespace ember
