#pragma once
// Random numbers: the sampling ops over the seedable generator of core/generator.h. Same seed,
// same numbers as torch, whatever the thread count. See Note [torch's random stream].
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "ember/core/generator.h"
#include "ember/core/tensor.h"
#include "ember/ops/creation.h"

namespace ember {

/// Uniform in [0, 1).
Tensor rand(IntArrayRef size, const GeneratorPtr& gen = nullptr,
            ScalarType dtype = default_dtype());
/// Standard normal.
Tensor randn(IntArrayRef size, const GeneratorPtr& gen = nullptr,
             ScalarType dtype = default_dtype());
Tensor rand_like(const Tensor& self, const GeneratorPtr& gen = nullptr);
Tensor randn_like(const Tensor& self, const GeneratorPtr& gen = nullptr);
/// Integers in [low, high).
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const GeneratorPtr& gen = nullptr,
               ScalarType dtype = kLong);
/// libtorch's forms with TensorOptions (dtype defaults as above; requires_grad honored).
Tensor rand(IntArrayRef size, const TensorOptions& options);
Tensor randn(IntArrayRef size, const TensorOptions& options);
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const TensorOptions& options);
/// Integers in [0, high).
Tensor randint(int64_t high, IntArrayRef size, const TensorOptions& options = {});
/// A random permutation of 0..n-1 (torch's shuffle).
Tensor randperm(int64_t n, const GeneratorPtr& gen = nullptr, ScalarType dtype = kLong);
/// Fills with U[from, to).
Tensor& uniform_(Tensor& self, double from = 0, double to = 1, const GeneratorPtr& gen = nullptr);
/// Fills with N(mean, std^2).
Tensor& normal_(Tensor& self, double mean = 0, double std = 1, const GeneratorPtr& gen = nullptr);
/// Fills with 1 (probability p) or 0; any dtype.
Tensor& bernoulli_(Tensor& self, double p, const GeneratorPtr& gen = nullptr);
/// Fills with integers in [from, to); without `to`, up to the dtype's largest value (2^mantissa
/// for floating dtypes), as torch's random_.
Tensor& random_(Tensor& self, int64_t from = 0, std::optional<int64_t> to = std::nullopt,
                const GeneratorPtr& gen = nullptr);
/// Fills with Exp(lambd) samples.
Tensor& exponential_(Tensor& self, double lambd = 1, const GeneratorPtr& gen = nullptr);
/// Fills with Cauchy(median, sigma) samples.
Tensor& cauchy_(Tensor& self, double median = 0, double sigma = 1,
                const GeneratorPtr& gen = nullptr);
/// Fills with exp of N(mean, std^2) samples.
Tensor& log_normal_(Tensor& self, double mean = 1, double std = 2,
                    const GeneratorPtr& gen = nullptr);
/// Fills with the trial of the first success of Bernoulli(p) trials (from 1).
Tensor& geometric_(Tensor& self, double p, const GeneratorPtr& gen = nullptr);
/// 0/1 samples with probabilities `self`.
Tensor bernoulli(const Tensor& self, const GeneratorPtr& gen = nullptr);
/// Indices sampled from the rows of `self` (1-d or 2-d, unnormalized weights).
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false,
                   const GeneratorPtr& gen = nullptr);
/// normal(mean, std) with tensor arguments (broadcast).
Tensor normal(const Tensor& mean, const Tensor& std, const GeneratorPtr& gen = nullptr);
/// normal(mean, std) with scalar arguments and an explicit size.
Tensor normal(double mean, double std, IntArrayRef size, const GeneratorPtr& gen = nullptr,
              ScalarType dtype = default_dtype());

}  // namespace ember
