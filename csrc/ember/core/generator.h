#pragma once
// The seedable random generator (torch's CPU generator: mt19937), shared by the sampling ops and
// their kernels. PyTorch keeps its Generator in ATen/core for the same reason.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

namespace ember {

// Note [torch's random stream]
// Programs seeded with manual_seed must draw torch's numbers (`import ember as torch` changes
// nothing), so the generator is torch's CPU one: a 32-bit Mersenne Twister (mt19937) seeded with
// the low 32 bits of the seed by Knuth's linear recurrence, random64() = two draws, the first in
// the high half, and one cached double normal sample (the second output of Box-Muller). A sampling
// op holds lock() for all its draws and draws in torch's order: elements in memory order, one or
// two 32-bit draws each as torch's distribution does (cpu/random.cpp). get_state() is torch's
// 5056-byte layout, so states move between ember and torch.

/// torch's CPU generator: mt19937 plus the cached normal samples.
class Generator {
 public:
  static constexpr uint64_t kDefaultSeed = 67280421310721ULL;
  static constexpr int64_t kStateBytes = 5056;

  explicit Generator(uint64_t seed = kDefaultSeed);
  /// Sets the seed, restarts the stream and drops the cached normals.
  void manual_seed(uint64_t seed);
  /// Seeds from a non-deterministic source and returns the seed (torch.seed()).
  uint64_t seed();
  uint64_t initial_seed() const;
  /// Held by a sampling op for all its draws (torch's generator mutex).
  std::unique_lock<std::mutex> lock() const { return std::unique_lock<std::mutex>(mutex_); }

  // The draws: call with lock() held.
  uint32_t random() {
    if (--left_ == 0) twist();
    uint32_t y = mt_[next_++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    return y ^ (y >> 18);
  }
  uint64_t random64() {
    uint64_t hi = random();
    return hi << 32 | random();
  }
  /// The second normal of the last Box-Muller pair of double draws, until used.
  std::optional<double>& next_double_normal() { return next_double_normal_; }

  /// torch's state tensor bytes (CPUGeneratorImplState).
  std::vector<uint8_t> state() const;
  /// Restores state() bytes; raises torch's errors for a wrong size or an invalid state.
  void set_state(const uint8_t* bytes, int64_t n);

 private:
  static constexpr int kN = 624;
  void reseed(uint64_t seed);
  void twist();

  mutable std::mutex mutex_;
  uint64_t seed_ = 0;
  std::array<uint32_t, kN> mt_{};
  int left_ = 1;
  uint32_t next_ = 0;
  std::optional<double> next_double_normal_;
  std::optional<float> next_float_normal_;  // kept for torch's state round trip
};
using GeneratorPtr = std::shared_ptr<Generator>;

/// The process-wide default generator (torch.default_generator).
const GeneratorPtr& default_generator();
/// Seeds the default generator.
void manual_seed(uint64_t seed);

}  // namespace ember
