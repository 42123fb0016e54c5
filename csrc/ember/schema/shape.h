#pragma once
// Shape ops with kernels (cat, flip, roll, ...): operator declarations (Note [Op schemas] in
// dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(cat, "cat(Tensor[] tensors, int dim=0) -> Tensor", Tensor(TensorList, int64_t));
// cat's kernel: the output comes from its meta step (Note [Meta step] in ops/meta.h).
EMBER_DECLARE_OP(cat_out, "cat.out(Tensor[] tensors, int dim=0, *, Tensor(a!) out) -> Tensor(a!)",
                 Tensor&(TensorList, int64_t, Tensor&));
EMBER_DECLARE_OP(flip, "flip(Tensor self, int[] dims) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef));
EMBER_DECLARE_OP(roll, "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef));
EMBER_DECLARE_OP(repeat_interleave, "repeat_interleave.Tensor(Tensor repeats) -> Tensor",
                 Tensor(const Tensor&));
EMBER_DECLARE_OP(_take_along_dim, "_take_along_dim(Tensor self, int dim, Tensor index) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&));
EMBER_DECLARE_OP(_place_along_dim,
                 "_place_along_dim(Tensor src, int dim, Tensor index, int size) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&, int64_t));

}  // namespace ember::op
