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
// The out= kernels the reductions' meta step (ops/reduce.cpp) hands the input in the dtype they
// reduce and an output of the reduced shape and result dtype (Note [Meta step] in ops/meta.h).
EMBER_DECLARE_OP(sum_out,
                 "sum.IntList_out(Tensor self, int[] dim, bool keepdim=False, *, ScalarType? "
                 "dtype=None, Tensor(a!) out) -> Tensor(a!)",
                 Tensor&(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>, Tensor&));
EMBER_DECLARE_OP(prod_out,
                 "prod.IntList_out(Tensor self, int[] dim, bool keepdim=False, *, ScalarType? "
                 "dtype=None, Tensor(a!) out) -> Tensor(a!)",
                 Tensor&(const Tensor&, IntArrayRef, bool, std::optional<ScalarType>, Tensor&));
EMBER_DECLARE_OP(amax_out,
                 "amax.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, IntArrayRef, bool, Tensor&));
EMBER_DECLARE_OP(amin_out,
                 "amin.out(Tensor self, int[1] dim=[], bool keepdim=False, *, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, IntArrayRef, bool, Tensor&));
EMBER_DECLARE_OP(max_dim_out,
                 "max.dim_max(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) max, "
                 "Tensor(b!) max_values) -> (Tensor(a!) values, Tensor(b!) indices)",
                 std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, bool, Tensor&, Tensor&));
EMBER_DECLARE_OP(min_dim_out,
                 "min.dim_min(Tensor self, int dim, bool keepdim=False, *, Tensor(a!) min, "
                 "Tensor(b!) min_indices) -> (Tensor(a!) values, Tensor(b!) indices)",
                 std::tuple<Tensor&, Tensor&>(const Tensor&, int64_t, bool, Tensor&, Tensor&));
EMBER_DECLARE_OP(argmax_out,
                 "argmax.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) "
                 "-> Tensor(a!)",
                 Tensor&(const Tensor&, std::optional<int64_t>, bool, Tensor&));
EMBER_DECLARE_OP(argmin_out,
                 "argmin.out(Tensor self, int? dim=None, bool keepdim=False, *, Tensor(a!) out) "
                 "-> Tensor(a!)",
                 Tensor&(const Tensor&, std::optional<int64_t>, bool, Tensor&));
EMBER_DECLARE_OP(var_mean_out,
                 "var_mean.correction_out(Tensor self, int[] dim, *, float correction, bool "
                 "keepdim=False, Tensor(a!) out0, Tensor(b!) out1) -> (Tensor(a!), Tensor(b!))",
                 std::tuple<Tensor&, Tensor&>(const Tensor&, IntArrayRef, double, bool, Tensor&,
                                              Tensor&));
EMBER_DECLARE_OP(all_out,
                 "all.dims_out(Tensor self, int[] dim, bool keepdim=False, *, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, IntArrayRef, bool, Tensor&));
EMBER_DECLARE_OP(any_out,
                 "any.dims_out(Tensor self, int[] dim, bool keepdim=False, *, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, IntArrayRef, bool, Tensor&));
EMBER_DECLARE_OP(cumsum, "cumsum(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<ScalarType>));
EMBER_DECLARE_OP(cumprod, "cumprod(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor",
                 Tensor(const Tensor&, int64_t, std::optional<ScalarType>));
EMBER_DECLARE_OP(cumsum_out,
                 "cumsum.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, int64_t, std::optional<ScalarType>, Tensor&));
EMBER_DECLARE_OP(cumprod_out,
                 "cumprod.out(Tensor self, int dim, *, ScalarType? dtype=None, Tensor(a!) out) -> "
                 "Tensor(a!)",
                 Tensor&(const Tensor&, int64_t, std::optional<ScalarType>, Tensor&));
EMBER_DECLARE_OP(cummax, "cummax(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t));
EMBER_DECLARE_OP(cummin, "cummin(Tensor self, int dim) -> (Tensor values, Tensor indices)",
                 std::tuple<Tensor, Tensor>(const Tensor&, int64_t));
EMBER_DECLARE_OP(logcumsumexp, "logcumsumexp(Tensor self, int dim) -> Tensor",
                 Tensor(const Tensor&, int64_t));

}  // namespace ember::op
