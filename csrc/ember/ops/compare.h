#pragma once
// Comparison and bitwise operators, number-bounded clamps, isclose/allclose/equal
// (ops/compare.cpp).
#include <optional>

#include "ember/core/tensor.h"

namespace ember {
/// Comparisons give bool tensors, as libtorch's.
#define EMBER_DECLARE_COMPARE_OPERATOR(op)              \
  Tensor operator op(const Tensor& a, const Tensor& b); \
  Tensor operator op(const Tensor& a, const Scalar& b);
EMBER_DECLARE_COMPARE_OPERATOR(==)
EMBER_DECLARE_COMPARE_OPERATOR(!=)
EMBER_DECLARE_COMPARE_OPERATOR(<)
EMBER_DECLARE_COMPARE_OPERATOR(<=)
EMBER_DECLARE_COMPARE_OPERATOR(>)
EMBER_DECLARE_COMPARE_OPERATOR(>=)
#undef EMBER_DECLARE_COMPARE_OPERATOR
/// Bitwise (logical on bool masks).
Tensor operator&(const Tensor& a, const Tensor& b);
Tensor operator|(const Tensor& a, const Tensor& b);
Tensor operator^(const Tensor& a, const Tensor& b);
Tensor operator~(const Tensor& a);

/// clamp with number bounds, and its one-sided forms.
Tensor clamp(const Tensor& self, const std::optional<Scalar>& min,
             const std::optional<Scalar>& max = std::nullopt);
Tensor clamp_min(const Tensor& self, const Scalar& min);
Tensor clamp_max(const Tensor& self, const Scalar& max);
/// Elementwise |self - other| <= atol + rtol * |other| (NaNs equal only with equal_nan).
Tensor isclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
               bool equal_nan = false);
/// isclose everywhere (after broadcasting).
bool allclose(const Tensor& self, const Tensor& other, double rtol = 1e-5, double atol = 1e-8,
              bool equal_nan = false);
/// Same sizes and exactly the same values.
bool equal(const Tensor& self, const Tensor& other);

}  // namespace ember
