#pragma once
// Sparse kernels: operator declarations (Note [Op schemas] in dispatch/op_schema.h). The sparse
// tensors themselves are Python objects (python/ember/sparse/, docs/ARCHITECTURE.md "Sparse
// tensors"); these ops take their index and value arrays as plain tensors.
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(_sparse_csr_mm,
                 "_sparse_csr_mm.ember(Tensor crow_indices, Tensor col_indices, Tensor values, "
                 "Tensor dense) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(_sparse_sampled_dot,
                 "_sparse_sampled_dot.ember(Tensor rows, Tensor cols, Tensor a, Tensor b) -> "
                 "Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&, const Tensor&));

}  // namespace ember::op
