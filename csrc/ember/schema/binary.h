#pragma once
// Binary elementwise ops: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

// A binary op over two tensors and its in-place form, with torch's overload names.
#define EMBER_DECLARE_BINARY_OP(name, overload, inplace_overload)                              \
  EMBER_DECLARE_OP(name, #name overload "(Tensor self, Tensor other) -> Tensor",               \
                   Tensor(const Tensor&, const Tensor&));                                      \
  EMBER_DECLARE_OP(name##_,                                                                    \
                   #name "_" inplace_overload "(Tensor(a!) self, Tensor other) -> Tensor(a!)", \
                   Tensor&(Tensor&, const Tensor&))
EMBER_DECLARE_BINARY_OP(mul, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(true_divide, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(div_trunc, "", "");
EMBER_DECLARE_BINARY_OP(floor_divide, "", ".Tensor");
EMBER_DECLARE_BINARY_OP(remainder, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(fmod, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(atan2, "", "");
EMBER_DECLARE_BINARY_OP(hypot, "", "");
EMBER_DECLARE_BINARY_OP(copysign, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(minimum, "", "");
EMBER_DECLARE_BINARY_OP(maximum, "", "");
EMBER_DECLARE_BINARY_OP(fmin, "", "");
EMBER_DECLARE_BINARY_OP(fmax, "", "");
EMBER_DECLARE_BINARY_OP(bitwise_and, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(bitwise_or, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(bitwise_xor, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(bitwise_left_shift, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(bitwise_right_shift, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(logical_and, "", "");
EMBER_DECLARE_BINARY_OP(logical_or, "", "");
EMBER_DECLARE_BINARY_OP(logical_xor, "", "");
EMBER_DECLARE_BINARY_OP(eq, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(ne, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(lt, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(le, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(gt, ".Tensor", ".Tensor");
EMBER_DECLARE_BINARY_OP(ge, ".Tensor", ".Tensor");
#undef EMBER_DECLARE_BINARY_OP
EMBER_DECLARE_OP(pow, "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(pow_, "pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&));
EMBER_DECLARE_OP(add, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(add_,
                 "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(sub, "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(sub_,
                 "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(where, "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(lerp, "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));

}  // namespace ember::op
