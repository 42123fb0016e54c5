#pragma once
// Reductions over dims (int or list), with keepdim and an optional accumulation dtype.
#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {

/// Sum of all elements (ints and bool sum to int64).
Tensor sum(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
/// Sum over `dim` (all dims if empty).
Tensor sum(const Tensor& self, IntArrayRef dim, bool keepdim = false,
           std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor mean(const Tensor& self, IntArrayRef dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, std::optional<ScalarType> dtype = std::nullopt);
Tensor prod(const Tensor& self, int64_t dim, bool keepdim = false,
            std::optional<ScalarType> dtype = std::nullopt);
/// Largest value over `dim` (all dims if empty); NaN propagates.
Tensor amax(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
Tensor amin(const Tensor& self, IntArrayRef dim = {}, bool keepdim = false);
/// Largest value of the whole tensor.
Tensor max(const Tensor& self);
Tensor min(const Tensor& self);
/// (values, indices) along one dim.
std::tuple<Tensor, Tensor> max(const Tensor& self, int64_t dim, bool keepdim = false);
std::tuple<Tensor, Tensor> min(const Tensor& self, int64_t dim, bool keepdim = false);
/// Index of the largest value (flattened if dim is absent); the first one on ties.
Tensor argmax(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
Tensor argmin(const Tensor& self, std::optional<int64_t> dim = std::nullopt, bool keepdim = false);
/// Variance with `correction` (1 = unbiased, Bessel) over `dim` (all if absent).
Tensor var(const Tensor& self, std::optional<std::vector<int64_t>> dim = std::nullopt,
           std::optional<double> correction = std::nullopt, bool keepdim = false);
Tensor std(const Tensor& self, std::optional<std::vector<int64_t>> dim = std::nullopt,
           std::optional<double> correction = std::nullopt, bool keepdim = false);
std::tuple<Tensor, Tensor> var_mean(const Tensor& self,
                                    std::optional<std::vector<int64_t>> dim = std::nullopt,
                                    std::optional<double> correction = std::nullopt,
                                    bool keepdim = false);
std::tuple<Tensor, Tensor> std_mean(const Tensor& self,
                                    std::optional<std::vector<int64_t>> dim = std::nullopt,
                                    std::optional<double> correction = std::nullopt,
                                    bool keepdim = false);
/// p-norm (p = 2 by default; inf, -inf, 0, 1, any real; "fro" is 2, "nuc" is unsupported).
Tensor norm(const Tensor& self, std::optional<Scalar> p = std::nullopt, IntArrayRef dim = {},
            bool keepdim = false, std::optional<ScalarType> dtype = std::nullopt);
/// log(sum(exp(x))) computed stably.
Tensor logsumexp(const Tensor& self, IntArrayRef dim, bool keepdim = false);
/// True if every / any element is nonzero.
Tensor all(const Tensor& self);
Tensor all(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor any(const Tensor& self);
Tensor any(const Tensor& self, IntArrayRef dim, bool keepdim = false);
Tensor count_nonzero(const Tensor& self, IntArrayRef dim = {});

}  // namespace ember
