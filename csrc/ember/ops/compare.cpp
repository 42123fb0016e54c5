// libtorch's C++ comparison surface: comparison and bitwise operators, isclose/allclose/equal,
// and clamp with number bounds.
#include "ember/ops/ops.h"

namespace ember {

#define EMBER_DEFINE_COMPARE_OPERATOR(op, name)                               \
  Tensor operator op(const Tensor& a, const Tensor& b) { return name(a, b); } \
  Tensor operator op(const Tensor& a, const Scalar& b) { return name(a, wrap_scalar(b)); }
EMBER_DEFINE_COMPARE_OPERATOR(==, eq)
EMBER_DEFINE_COMPARE_OPERATOR(!=, ne)
EMBER_DEFINE_COMPARE_OPERATOR(<, lt)
EMBER_DEFINE_COMPARE_OPERATOR(<=, le)
EMBER_DEFINE_COMPARE_OPERATOR(>, gt)
EMBER_DEFINE_COMPARE_OPERATOR(>=, ge)
#undef EMBER_DEFINE_COMPARE_OPERATOR
Tensor operator&(const Tensor& a, const Tensor& b) { return bitwise_and(a, b); }
Tensor operator|(const Tensor& a, const Tensor& b) { return bitwise_or(a, b); }
Tensor operator^(const Tensor& a, const Tensor& b) { return bitwise_xor(a, b); }
Tensor operator~(const Tensor& a) { return bitwise_not(a); }
Tensor operator/(const Scalar& a, const Tensor& b) { return true_divide(wrap_scalar(a), b); }

Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max) {
  auto bound = [](const std::optional<Scalar>& s) {
    return s ? std::optional<Tensor>(wrap_scalar(*s)) : std::nullopt;
  };
  return clamp(self, bound(min), bound(max));
}
Tensor clamp_min(const Tensor& self, const Scalar& min) { return clamp(self, min, std::nullopt); }
Tensor clamp_max(const Tensor& self, const Scalar& max) { return clamp(self, std::nullopt, max); }

Tensor isclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  EMBER_CHECK(self.dtype() == other.dtype(),
              "isclose: expected both tensors to have the same dtype; got ",
              dtype_name(self.dtype()), " and ", dtype_name(other.dtype()));
  EMBER_CHECK_VALUE(rtol >= 0 && atol >= 0, "isclose: expected rtol and atol >= 0; got rtol=", rtol,
                    " atol=", atol);
  Tensor close = eq(self, other);  // also covers equal infinities
  if (self.dtype() == kBool) return close;
  if (equal_nan) close = logical_or(close, logical_and(isnan(self), isnan(other)));
  // A finite difference implies both values are finite; only those use the tolerance.
  Tensor diff = abs(sub(self, other));
  Tensor tol = add(wrap_scalar(atol), mul(abs(other), wrap_scalar(rtol)));
  return logical_or(close, logical_and(isfinite(diff), le(diff, tol)));
}

bool allclose(const Tensor& self, const Tensor& other, double rtol, double atol, bool equal_nan) {
  return all(isclose(self, other, rtol, atol, equal_nan)).item<bool>();
}

bool equal(const Tensor& self, const Tensor& other) {
  return self.sizes().equals(other.sizes()) && all(eq(self, other)).item<bool>();
}

}  // namespace ember
