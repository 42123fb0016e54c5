#include "ember/core/dtype.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include "ember/core/dispatch_dtype.h"
#include "ember/core/error.h"
#include "ember/core/scalar.h"

namespace ember {

size_t element_size(ScalarType t) {
  switch (t) {
#define EMBER_SIZE(cpp, name, py) \
  case ScalarType::name:          \
    return sizeof(cpp);
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_SIZE)
    EMBER_FORALL_QUANTIZED_DTYPES(EMBER_SIZE)
#undef EMBER_SIZE
    default:
      EMBER_ASSERT(false);
  }
}

std::string_view dtype_name(ScalarType t) {
  switch (t) {
#define EMBER_NAME(cpp, name, py) \
  case ScalarType::name:          \
    return #py;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_NAME)
    EMBER_FORALL_QUANTIZED_DTYPES(EMBER_NAME)
#undef EMBER_NAME
    default:
      return "undefined";
  }
}

std::string_view scalar_type_name(ScalarType t) {
  switch (t) {
#define EMBER_NAME(cpp, name, py) \
  case ScalarType::name:          \
    return #name;
    EMBER_FORALL_DTYPES_AND_COMPLEX(EMBER_NAME)
    EMBER_FORALL_QUANTIZED_DTYPES(EMBER_NAME)
#undef EMBER_NAME
    default:
      return "Undefined";
  }
}

std::string_view cpp_type_name(ScalarType t) {
  switch (t) {
    case kByte:
      return "unsigned char";
    case kChar:
      return "signed char";
    case kShort:
      return "short int";
    case kInt:
      return "int";
    case kLong:
      return "long int";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kFloat:
      return "float";
    case kDouble:
      return "double";
    case kBool:
      return "bool";
    case kComplexFloat:
      return "c10::complex<float>";
    case kComplexDouble:
      return "c10::complex<double>";
    default:
      return "undefined";
  }
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == kBool) return b;
  if (b == kBool) return a;
  if (is_complex(a) || is_complex(b)) {
    // complex with anything: complex128 when either side holds double precision.
    bool wide = a == kComplexDouble || b == kComplexDouble || a == kDouble || b == kDouble;
    return wide ? kComplexDouble : kComplexFloat;
  }
  bool fa = is_floating_point(a), fb = is_floating_point(b);
  if (fa && fb) {
    if ((a == kHalf && b == kBFloat16) || (a == kBFloat16 && b == kHalf)) return kFloat;
    auto rank = [](ScalarType t) { return t == kDouble ? 3 : t == kFloat ? 2 : 1; };
    return rank(a) >= rank(b) ? a : b;
  }
  if (fa) return a;
  if (fb) return b;
  // Both integral. uint8 with a signed type needs the next wider signed type.
  auto bits = [](ScalarType t) { return int(element_size(t)) * 8; };
  if (a == kByte || b == kByte) {
    ScalarType s = a == kByte ? b : a;
    return bits(s) <= 8 ? kShort : s;
  }
  return bits(a) >= bits(b) ? a : b;
}

namespace {
ScalarType g_default_dtype = kFloat;
}

ScalarType default_dtype() { return g_default_dtype; }

void set_default_dtype(ScalarType t) {
  EMBER_CHECK_TYPE(t == kFloat || t == kDouble || t == kHalf || t == kBFloat16,
                   "only floating-point types are supported as the default type; got ",
                   dtype_name(t));
  g_default_dtype = t;
}

void unsupported_dtype(const char* op, ScalarType t) {
  EMBER_ERROR(ErrorKind::NotImplemented, "\"", op, "\" not implemented for '", scalar_type_name(t),
              "'");
}

// The names PyTorch's overflow message uses (c10's C++ types); python/src/module.cpp too.
const char* overflow_type_name(ScalarType t) {
  switch (t) {
    case kByte:
      return "uint8_t";
    case kChar:
      return "int8_t";
    case kShort:
      return "int16_t";
    case kInt:
      return "int";
    case kLong:
      return "int64_t";
    case kHalf:
      return "c10::Half";
    case kBFloat16:
      return "c10::BFloat16";
    case kDouble:
      return "double";
    case kComplexFloat:
      return "c10::complex<float>";
    default:
      return "float";
  }
}

namespace {
bool int_fits(const Scalar& v, int64_t lo, int64_t hi, bool is_unsigned) {
  if (v.is_bool()) return true;
  if (v.is_floating_point()) {
    double d = v.to_double();
    return !std::isnan(d) && d >= double(lo) && d <= double(hi);  // inf fails both
  }
  int64_t i = v.to_long();
  if (is_unsigned) return i <= hi && (i >= 0 || i >= -hi);
  return i >= lo && i <= hi;
}
}  // namespace

void check_scalar_fits(const Scalar& value, ScalarType dtype) {
  bool ok = true;
  switch (dtype) {
    case kByte:
      ok = int_fits(value, 0, 255, true);
      break;
    case kChar:
      ok = int_fits(value, -128, 127, false);
      break;
    case kShort:
      ok = int_fits(value, -32768, 32767, false);
      break;
    case kInt:
      ok = int_fits(value, INT32_MIN, INT32_MAX, false);
      break;
    case kLong:
      // a double at or past 2**63 rounds: compare against the first double out of range
      ok = value.is_floating_point() ? (std::isfinite(value.to_double()) &&
                                        value.to_double() >= -0x1p63 && value.to_double() < 0x1p63)
                                     : true;
      break;
    case kFloat:
    case kComplexFloat:  // each part a float
      if (value.is_floating_point()) {
        double d = value.to_double();
        ok = !std::isfinite(d) || std::abs(d) <= double(std::numeric_limits<float>::max());
      }
      break;
    case kHalf:
    case kBFloat16: {
      // any finite value past the type's max, an int included (70000 does not fit a half)
      double d = value.to_double(), hi = dtype == kHalf ? 65504.0 : 0x1.fep127;
      ok = value.is_bool() || !std::isfinite(d) || std::abs(d) <= hi;
      break;
    }
    default:
      break;
  }
  EMBER_CHECK(ok, "value cannot be converted to type ", overflow_type_name(dtype),
              " without overflow");
}

}  // namespace ember
