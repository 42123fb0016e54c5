#pragma once
// Sorting, selection and counting: operator declarations (Note [Op schemas] in
// dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(sort,
                 "sort(Tensor self, int dim=-1, bool descending=False, bool stable=False) -> "
                 "(Tensor values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool, bool));
EMBER_DECLARE_OP(topk,
                 "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> "
                 "(Tensor values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool, bool));
EMBER_DECLARE_OP(kthvalue,
                 "kthvalue(Tensor self, SymInt k, int dim=-1, bool keepdim=False) -> (Tensor "
                 "values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t, int64_t, bool));
EMBER_DECLARE_OP(
    median_dim,
    "median.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool));
EMBER_DECLARE_OP(median, "median(Tensor self) -> Tensor", Tensor(const Tensor&));
// The out= kernels of the selections along a dim: the step (ops/sort.cpp) wraps the dim and hands
// them outputs of the reduced shape (Note [Meta step] in ops/meta.h).
EMBER_DECLARE_OP(kthvalue_out,
                 "kthvalue.values(Tensor self, SymInt k, int dim=-1, bool keepdim=False, *, "
                 "Tensor(a!) values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) "
                 "indices)",
                 std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, int64_t, bool, Tensor&,
                                              Tensor&));
EMBER_DECLARE_OP(median_dim_out,
                 "median.dim_values(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) "
                 "values, Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
                 std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, bool, Tensor&, Tensor&));
EMBER_DECLARE_OP(mode_out,
                 "mode.values(Tensor self, int dim=-1, bool keepdim=False, *, Tensor(a!) values, "
                 "Tensor(b!) indices) -> (Tensor(a!) values, Tensor(b!) indices)",
                 std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, bool, Tensor&, Tensor&));
EMBER_DECLARE_OP(
    mode, "mode(Tensor self, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)",
    std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool));
EMBER_DECLARE_OP(unique,
                 "_unique.ember(Tensor self, bool sorted, bool return_inverse, bool return_counts, "
                 "int? dim) -> (Tensor output, Tensor inverse_indices, Tensor counts)",
                 std::tuple<Tensor, Tensor, Tensor>(const Tensor&, bool, bool, bool,
                                                    std::optional<int64_t>));
EMBER_DECLARE_OP(bincount,
                 "bincount(Tensor self, Tensor? weights=None, SymInt minlength=0) -> Tensor",
                 Tensor(const Tensor&, const std::optional<Tensor>&, int64_t));
EMBER_DECLARE_OP(histc, "histc(Tensor self, int bins=100, float min=0, float max=0) -> Tensor",
                 Tensor(const Tensor&, int64_t, double, double));

}  // namespace ember::op
