#pragma once
// Random numbers: a seedable generator and the sampling ops. Same seed, same numbers, whatever
// the thread count.
#include <memory>
#include <optional>

#include "ember/core/tensor.h"

namespace ember {

/// A counter-based generator (Philox 4x32-10): streams are reproducible and splittable.
class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL);
  void manual_seed(uint64_t seed);
  uint64_t initial_seed() const { return seed_; }
  /// Reserves `n` 128-bit blocks and returns the offset of the first (for parallel sampling).
  uint64_t advance(uint64_t n);
  /// Serializes/restores (seed, offset) for get_state/set_state.
  std::pair<uint64_t, uint64_t> state() const { return {seed_, offset_}; }
  void set_state(uint64_t seed, uint64_t offset);

 private:
  uint64_t seed_;
  uint64_t offset_ = 0;
};
using GeneratorPtr = std::shared_ptr<Generator>;

/// The process-wide default generator (torch.default_generator).
const GeneratorPtr& default_generator();
/// Seeds the default generator.
void manual_seed(uint64_t seed);

Tensor rand(IntArrayRef size, const GeneratorPtr& gen = nullptr, ScalarType dtype = default_dtype());
Tensor randn(IntArrayRef size, const GeneratorPtr& gen = nullptr, ScalarType dtype = default_dtype());
/// Integers in [low, high).
Tensor randint(int64_t low, int64_t high, IntArrayRef size, const GeneratorPtr& gen = nullptr,
               ScalarType dtype = kLong);
Tensor randperm(int64_t n, const GeneratorPtr& gen = nullptr, ScalarType dtype = kLong);
Tensor& uniform_(Tensor& self, double from = 0, double to = 1, const GeneratorPtr& gen = nullptr);
Tensor& normal_(Tensor& self, double mean = 0, double std = 1, const GeneratorPtr& gen = nullptr);
Tensor& bernoulli_(Tensor& self, double p, const GeneratorPtr& gen = nullptr);
Tensor& random_(Tensor& self, int64_t from, std::optional<int64_t> to,
                const GeneratorPtr& gen = nullptr);
/// 0/1 samples with probabilities `self`.
Tensor bernoulli(const Tensor& self, const GeneratorPtr& gen = nullptr);
Tensor multinomial(const Tensor& self, int64_t num_samples, bool replacement = false,
                   const GeneratorPtr& gen = nullptr);
/// normal(mean, std) with tensor arguments (broadcast).
Tensor normal(const Tensor& mean, const Tensor& std, const GeneratorPtr& gen = nullptr);

}  // namespace ember
