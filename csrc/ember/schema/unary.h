#pragma once
// Unary elementwise ops: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/core/unary_list.h"
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

// The unary lists (core/unary_list.h): each op and its in-place form.
#define EMBER_DECLARE_UNARY_OP(name, node)                                        \
  EMBER_DECLARE_OP(name, #name "(Tensor self) -> Tensor", Tensor(const Tensor&)); \
  EMBER_DECLARE_OP(name##_, #name "_(Tensor(a!) self) -> Tensor(a!)", Tensor&(Tensor&));
EMBER_UNARY_FLOAT_OPS(EMBER_DECLARE_UNARY_OP)
EMBER_UNARY_SAME_OPS(EMBER_DECLARE_UNARY_OP)
#undef EMBER_DECLARE_UNARY_OP

// Predicates and logical_not: a bool result, no in-place form.
#define EMBER_DECLARE_PREDICATE_OP(name) \
  EMBER_DECLARE_OP(name, #name "(Tensor self) -> Tensor", Tensor(const Tensor&))
EMBER_DECLARE_PREDICATE_OP(isnan);
EMBER_DECLARE_PREDICATE_OP(isinf);
EMBER_DECLARE_PREDICATE_OP(isfinite);
EMBER_DECLARE_PREDICATE_OP(isposinf);
EMBER_DECLARE_PREDICATE_OP(isneginf);
EMBER_DECLARE_PREDICATE_OP(signbit);
EMBER_DECLARE_PREDICATE_OP(logical_not);
#undef EMBER_DECLARE_PREDICATE_OP
EMBER_DECLARE_OP(relu_backward, "relu_backward(Tensor grad_output, Tensor result) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(
    nan_to_num,
    "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor",
    Tensor(const Tensor&, std::optional<double>, std::optional<double>, std::optional<double>));
EMBER_DECLARE_OP(round_decimals, "round.decimals(Tensor self, *, int decimals) -> Tensor",
                 Tensor(const Tensor&, int64_t));

}  // namespace ember::op
