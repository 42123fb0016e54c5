#pragma once
// Reductions and scans: operator declarations (Note [Op schemas] in dispatch/op_schema.h).
#include "ember/dispatch/dispatcher.h"

namespace ember::op {

EMBER_DECLARE_OP(sum,
                 "sum.dim_IntList(Tensor self, int[] dim, bool keepdim=False, *, ScalarType? "
                 "dtype=None) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>));
EMBER_DECLARE_OP(prod,
                 "prod.dim_IntList(Tensor self, int[] dim, bool keepdim=False, *, ScalarType? "
                 "dtype=None) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>));
EMBER_DECLARE_OP(amax, "amax(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
EMBER_DECLARE_OP(amin, "amin(Tensor self, int[1] dim=[], bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
EMBER_DECLARE_OP(
    max_dim, "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool));
EMBER_DECLARE_OP(
    min_dim, "min.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)",
    std::tuple<Tensor, Tensor>(const Tensor&, int64_t, bool));
EMBER_DECLARE_OP(argmax, "argmax(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, std::optional<int64_t>, bool));
EMBER_DECLARE_OP(argmin, "argmin(Tensor self, int? dim=None, bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, std::optional<int64_t>, bool));
EMBER_DECLARE_OP(var_mean,
                 "var_mean.correction(Tensor self, int[] dim, *, float correction, bool "
                 "keepdim=False) -> (Tensor, Tensor)",
                 std::tuple<Tensor, Tensor>(const Tensor&, IntArrayRef, double, bool));
EMBER_DECLARE_OP(all, "all.dims(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
EMBER_DECLARE_OP(any, "any.dims(Tensor self, int[] dim, bool keepdim=False) -> Tensor",
                 Tensor(const Tensor&, IntArrayRef, bool));
EMBER_DECLARE_OP(cumsum, "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<ScalarType>));
EMBER_DECLARE_OP(cumprod, "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<ScalarType>));
EMBER_DECLARE_OP(cummax, "cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t));
EMBER_DECLARE_OP(cummin, "cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t));
EMBER_DECLARE_OP(logcumsumexp, "logcumsumexp(Tensor self, int dim) -> Tensor",
                 Tensor(const Tensor&, int64_t));

}  // namespace ember::op
