#pragma once
// Unary elementwise ops (ops/unary.cpp). Their one table is schema/unary.h (Note [Unary
// table]); this header, which most of ember includes, declares the stable C++ API (the ops that
// are also Tensor methods, core/tensor.h), so a new row does not rebuild its includers.
// ops/unary_table.h declares every row's function.
#include "ember/core/tensor.h"

namespace ember {

#define EMBER_DECLARE_UNARY(name)  \
  Tensor name(const Tensor& self); \
  Tensor& name##_(Tensor& self);
EMBER_TENSOR_UNARY_METHODS(EMBER_DECLARE_UNARY)
#undef EMBER_DECLARE_UNARY

/// self * self with pow's dtype rule (bool squares to int64).
Tensor square(const Tensor& self);
/// Unary predicates returning bool tensors.
Tensor isnan(const Tensor& self);
Tensor isinf(const Tensor& self);
Tensor isfinite(const Tensor& self);
Tensor isposinf(const Tensor& self);
Tensor isneginf(const Tensor& self);
Tensor logical_not(const Tensor& self);
Tensor signbit(const Tensor& self);
/// Replaces NaN and infinities (defaults: 0, largest and lowest finite value).
Tensor nan_to_num(const Tensor& self, std::optional<double> nan = std::nullopt,
                  std::optional<double> posinf = std::nullopt,
                  std::optional<double> neginf = std::nullopt);
/// Rounds to `decimals` places (half to even, as torch.round).
Tensor round(const Tensor& self, int64_t decimals);

}  // namespace ember
