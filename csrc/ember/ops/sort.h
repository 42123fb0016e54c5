#pragma once
// Scans, sorting, selection and counting (ops/sort.cpp).
#include <optional>
#include <tuple>

#include "ember/core/tensor.h"

namespace ember {
/// Prefix sums; integer and bool inputs accumulate and return int64 unless `dtype` is given.
Tensor cumsum(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// log(cumsum(exp(self))) along dim, without overflow or underflow of the early prefixes.
Tensor logcumsumexp(const Tensor& self, int64_t dim);
/// Prefix products, with cumsum's dtype rule.
Tensor cumprod(const Tensor& self, int64_t dim, std::optional<ScalarType> dtype = std::nullopt);
/// Running maximum and the index where it was (the latest on ties); NaN propagates.
std::tuple<Tensor, Tensor> cummax(const Tensor& self, int64_t dim);
std::tuple<Tensor, Tensor> cummin(const Tensor& self, int64_t dim);

/// (values, indices) sorted along dim; NaN sorts as the largest value; always stable.
std::tuple<Tensor, Tensor> sort(const Tensor& self, int64_t dim = -1, bool descending = false,
                                bool stable = false);
Tensor argsort(const Tensor& self, int64_t dim = -1, bool descending = false, bool stable = false);
/// The k largest (or smallest) values along dim and their indices.
std::tuple<Tensor, Tensor> topk(const Tensor& self, int64_t k, int64_t dim = -1,
                                bool largest = true, bool sorted = true);
/// The k-th smallest value (1-based) along dim and its index.
std::tuple<Tensor, Tensor> kthvalue(const Tensor& self, int64_t k, int64_t dim = -1,
                                    bool keepdim = false);
/// The lower median of all elements.
Tensor median(const Tensor& self);
/// The lower median along dim and its index (a row with NaN gives its first NaN).
std::tuple<Tensor, Tensor> median(const Tensor& self, int64_t dim, bool keepdim = false);
/// The most frequent value along dim (the smallest on ties) and the last index holding it.
std::tuple<Tensor, Tensor> mode(const Tensor& self, int64_t dim = -1, bool keepdim = false);
/// (values, inverse, counts); inverse/counts are undefined unless requested. Values come out
/// sorted even when `sorted` is false (any order is allowed then); each NaN is its own value.
std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& self, bool sorted = true,
                                          bool return_inverse = false, bool return_counts = false,
                                          std::optional<int64_t> dim = std::nullopt);
/// Occurrences (or summed weights) of each value of a 1-d non-negative integer tensor.
Tensor bincount(const Tensor& self, const std::optional<Tensor>& weights = std::nullopt,
                int64_t minlength = 0);
/// Histogram with `bins` equal bins over [min, max] (the data's range when min == max).
Tensor histc(const Tensor& self, int64_t bins = 100, double min = 0, double max = 0);

}  // namespace ember
