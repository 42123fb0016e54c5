#pragma once
// 16-bit floating types stored as bits; arithmetic happens in float.
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ember {

/// IEEE 754 binary16.
struct Half {
  uint16_t x = 0;
  Half() = default;
  Half(float f) : x(from_float(f)) {}
  operator float() const { return to_float(x); }

  static float to_float(uint16_t h) {
    uint32_t sign = uint32_t(h & 0x8000) << 16;
    uint32_t exp = (h >> 10) & 0x1f;
    uint32_t man = h & 0x3ff;
    uint32_t bits;
    if (exp == 0x1f) {
      bits = sign | 0x7f800000u | (man << 13);
    } else if (exp == 0) {
      if (man == 0) return std::bit_cast<float>(sign);
      // Subnormal half: value is man * 2^-24.
      float v = float(man) * 5.9604644775390625e-08f;
      return sign ? -v : v;
    } else {
      bits = sign | ((exp + 112) << 23) | (man << 13);
    }
    return std::bit_cast<float>(bits);
  }

  static uint16_t from_float(float f) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    uint16_t sign = uint16_t((bits >> 16) & 0x8000);
    uint32_t abs = bits & 0x7fffffffu;
    if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00 : 0x7c00);
    if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds to beyond max half: inf
    if (abs < 0x38800000u) {
      // Result is subnormal (or zero): scale so the integer part is the mantissa, round to even.
      float a = std::bit_cast<float>(abs);
      float scaled = a * 16777216.0f;  // 2^24
      return sign | uint16_t(std::nearbyint(scaled));
    }
    uint32_t mant_odd = (abs >> 13) & 1;
    abs += 0xc8000fffu + mant_odd;  // rebias exponent (-112 << 23) and round to nearest even
    return sign | uint16_t(abs >> 13);
  }
};

/// bfloat16: the upper half of a float32.
struct BFloat16 {
  uint16_t x = 0;
  BFloat16() = default;
  BFloat16(float f) : x(from_float(f)) {}
  operator float() const { return std::bit_cast<float>(uint32_t(x) << 16); }

  static uint16_t from_float(float f) {
    uint32_t bits = std::bit_cast<uint32_t>(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return uint16_t((bits >> 16) | 0x40);  // quiet NaN
    uint32_t lsb = (bits >> 16) & 1;
    return uint16_t((bits + 0x7fffu + lsb) >> 16);
  }
};

}  // namespace ember

namespace std {
template <>
class numeric_limits<ember::Half> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::Half lowest() { return ember::Half(-65504.0f); }
  static ember::Half max() { return ember::Half(65504.0f); }
  static ember::Half min() { return ember::Half(6.103515625e-05f); }
  static ember::Half epsilon() { return ember::Half(0.0009765625f); }
  static ember::Half infinity() { return ember::Half(std::numeric_limits<float>::infinity()); }
  static ember::Half quiet_NaN() { return ember::Half(std::numeric_limits<float>::quiet_NaN()); }
};
template <>
class numeric_limits<ember::BFloat16> {
 public:
  static constexpr bool is_specialized = true;
  static constexpr bool is_signed = true;
  static constexpr bool is_integer = false;
  static constexpr bool has_infinity = true;
  static constexpr bool has_quiet_NaN = true;
  static ember::BFloat16 lowest() { return ember::BFloat16(-3.38953139e38f); }
  static ember::BFloat16 max() { return ember::BFloat16(3.38953139e38f); }
  static ember::BFloat16 min() { return ember::BFloat16(1.17549435e-38f); }
  static ember::BFloat16 epsilon() { return ember::BFloat16(0.0078125f); }
  static ember::BFloat16 infinity() {
    return ember::BFloat16(std::numeric_limits<float>::infinity());
  }
  static ember::BFloat16 quiet_NaN() {
    return ember::BFloat16(std::numeric_limits<float>::quiet_NaN());
  }
};
}  // namespace std
