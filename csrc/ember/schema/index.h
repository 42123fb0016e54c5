#pragma once
// Indexing, gathering and scattering: operator declarations (Note [Op schemas] in
// dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(gather, "gather(Tensor self, int dim, Tensor index) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&));
EMBER_DECLARE_OP(scatter, "scatter.src(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(scatter_,
                 "scatter_.src(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
                 Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(scatter_add,
                 "scatter_add(Tensor self, int dim, Tensor index, Tensor src) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(scatter_add_,
                 "scatter_add_(Tensor(a!) self, int dim, Tensor index, Tensor src) -> Tensor(a!)",
                 Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(scatter_reduce,
                 "scatter_reduce.two(Tensor self, int dim, Tensor index, Tensor src, str reduce, "
                 "*, bool include_self=True) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, const std::string&,
                        bool));
EMBER_DECLARE_OP(scatter_reduce_,
                 "scatter_reduce_.two(Tensor(a!) self, int dim, Tensor index, Tensor src, str "
                 "reduce, *, bool include_self=True) -> Tensor(a!)",
                 Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&, const std::string&, bool));
EMBER_DECLARE_OP(index_select, "index_select(Tensor self, int dim, Tensor index) -> Tensor",
                 Tensor(const Tensor&, int64_t, const Tensor&));
EMBER_DECLARE_OP(
    index_add,
    "index_add(Tensor self, int dim, Tensor index, Tensor source, *, Scalar alpha=1) -> Tensor",
    Tensor(const Tensor&, int64_t, const Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(index_add_,
                 "index_add_(Tensor(a!) self, int dim, Tensor index, Tensor source, *, Scalar "
                 "alpha=1) -> Tensor(a!)",
                 Tensor&(Tensor&, int64_t, const Tensor&, const Tensor&, const Scalar&));
EMBER_DECLARE_OP(masked_fill,
                 "masked_fill.Tensor(Tensor self, Tensor mask, Tensor value) -> Tensor",
                 Tensor(const Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(masked_fill_,
                 "masked_fill_.Tensor(Tensor(a!) self, Tensor mask, Tensor value) -> Tensor(a!)",
                 Tensor&(Tensor&, const Tensor&, const Tensor&));
EMBER_DECLARE_OP(index, "index.Tensor(Tensor self, Tensor?[] indices) -> Tensor",
                 Tensor(const Tensor&, const std::vector<std::optional<Tensor>>&));
EMBER_DECLARE_OP(
    index_put,
    "index_put(Tensor self, Tensor?[] indices, Tensor values, bool accumulate=False) -> Tensor",
    Tensor(const Tensor&, const std::vector<std::optional<Tensor>>&, const Tensor&, bool));
EMBER_DECLARE_OP(index_put_,
                 "index_put_(Tensor(a!) self, Tensor?[] indices, Tensor values, bool "
                 "accumulate=False) -> Tensor(a!)",
                 Tensor&(Tensor&, const std::vector<std::optional<Tensor>>&, const Tensor&, bool));
EMBER_DECLARE_OP(nonzero, "nonzero(Tensor self) -> Tensor", Tensor(const Tensor&));

}  // namespace ember::op
