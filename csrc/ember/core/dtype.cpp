#include "ember/core/dtype.h"

#include "ember/core/dispatch_dtype.h"
#include "ember/core/error.h"

namespace ember {

size_t element_size(ScalarType t) {
  switch (t) {
#define EMBER_SIZE(cpp, name, py) \
  case ScalarType::name:          \
    return sizeof(cpp);
    EMBER_FORALL_DTYPES(EMBER_SIZE)
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
    EMBER_FORALL_DTYPES(EMBER_NAME)
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
    EMBER_FORALL_DTYPES(EMBER_NAME)
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
    default:
      return "undefined";
  }
}

ScalarType promote_types(ScalarType a, ScalarType b) {
  if (a == b) return a;
  if (a == kBool) return b;
  if (b == kBool) return a;
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

}  // namespace ember
