#pragma once
// im2col/col2im and embedding: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(im2col,
                 "im2col.ember(Tensor self, int[2] output_size, int[2] kernel_size, int[2] "
                 "dilation, int[2] padding, int[2] stride) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef,
                        IntArrayRef));
EMBER_DECLARE_OP(col2im,
                 "col2im(Tensor self, SymInt[2] output_size, int[2] kernel_size, int[2] dilation, "
                 "int[2] padding, int[2] stride) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef,
                        IntArrayRef));
EMBER_DECLARE_OP(embedding,
                 "embedding(Tensor weight, Tensor indices, int padding_idx=-1, bool "
                 "scale_grad_by_freq=False) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, int64_t, bool));

}  // namespace ember::op
