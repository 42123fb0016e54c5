#pragma once
// Binary elementwise ops: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

// A binary op over two tensors, its in-place form and its out= form (the kernel: Note [Meta
// step] in ops/meta.h), with torch's overload names.
#define EMBER_DECLARE_BINARY_OP(name, overload, inplace_overload, out_overload)                \
  EMBER_DECLARE_OP(name, #name overload "(Tensor self, Tensor other) -> Tensor",               \
                   Tensor(const Tensor&, const Tensor&));                                      \
  EMBER_DECLARE_OP(name##_,                                                                    \
                   #name "_" inplace_overload "(Tensor(a!) self, Tensor other) -> Tensor(a!)", \
                   Tensor&(Tensor&, const Tensor&));                                           \
  EMBER_DECLARE_OP(name##_out,                                                                 \
                   #name out_overload                                                          \
                   "(Tensor self, Tensor other, *, Tensor(a!) out) -> Tensor(a!)",             \
                   Tensor&(const Tensor&, const Tensor&, Tensor&))
EMBER_DECLARE_BINARY_OP(mul, ".Tensor", ".Tensor", ".out");
EMBER_DECLARE_BINARY_OP(true_divide, ".Tensor", ".Tensor", ".out");
EMBER_DECLARE_BINARY_OP(div_trunc, "", "", ".out");
EMBER_DECLARE_BINARY_OP(floor_divide, "", ".Tensor", ".out");
EMBER_DECLARE_BINARY_OP(remainder, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(fmod, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(atan2, "", "", ".out");
EMBER_DECLARE_BINARY_OP(hypot, "", "", ".out");
EMBER_DECLARE_BINARY_OP(copysign, ".Tensor", ".Tensor", ".out");
EMBER_DECLARE_BINARY_OP(minimum, "", "", ".out");
EMBER_DECLARE_BINARY_OP(maximum, "", "", ".out");
EMBER_DECLARE_BINARY_OP(fmin, "", "", ".out");
EMBER_DECLARE_BINARY_OP(fmax, "", "", ".out");
EMBER_DECLARE_BINARY_OP(bitwise_and, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(bitwise_or, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(bitwise_xor, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(bitwise_left_shift, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(bitwise_right_shift, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(logical_and, "", "", ".out");
EMBER_DECLARE_BINARY_OP(logical_or, "", "", ".out");
EMBER_DECLARE_BINARY_OP(logical_xor, "", "", ".out");
EMBER_DECLARE_BINARY_OP(eq, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(ne, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(lt, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(le, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(gt, ".Tensor", ".Tensor", ".Tensor_out");
EMBER_DECLARE_BINARY_OP(ge, ".Tensor", ".Tensor", ".Tensor_out");
#undef EMBER_DECLARE_BINARY_OP
EMBER_DECLARE_OP(pow, "pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor",
                 Tensor(const Tensor&, const Tensor&));
EMBER_DECLARE_OP(pow_, "pow_.Tensor(Tensor(a!) self, Tensor exponent) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&));
EMBER_DECLARE_OP(pow_out,
                 "pow.Tensor_Tensor_out(Tensor self, Tensor exponent, *, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, const Tensor&, Tensor&));
EMBER_DECLARE_OP(add, "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(add_,
                 "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(add_out,
                 "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, const Tensor&, const Scalar&, Tensor&));
EMBER_DECLARE_OP(sub, "sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(sub_,
                 "sub_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(where, "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(where_out,
                 "where.self_out(Tensor condition, Tensor self, Tensor other, *, Tensor(a!) out) "
                 "-> Tensor(a!)",
                 Tensor&(const Tensor&, const Tensor&, const Tensor&, Tensor&));
// clamp(x, lo, hi) of an integer tensor by Python-number bounds in one pass (ops/binary.cpp's
// clamp; a bound outside the dtype's range saturates, which is how an absent one is passed).
EMBER_DECLARE_OP(_ember_clamp_int, "_ember_clamp_int(Tensor self, int min, int max) -> Tensor",
                 Tensor(const Tensor&, int64_t, int64_t));
EMBER_DECLARE_OP(lerp, "lerp.Tensor(Tensor self, Tensor end, Tensor weight) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(lerp_out,
                 "lerp.Tensor_out(Tensor self, Tensor end, Tensor weight, *, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, const Tensor&, const Tensor&, Tensor&));

}  // namespace ember::op
