#pragma once
// The seedable random generator (Philox4x32-10), shared by the sampling ops and their kernels.
// PyTorch keeps its Generator in ATen/core for the same reason.
#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>

namespace ember {

// Note [Philox counters]
// Philox4x32-10 maps (a 128-bit counter, a 64-bit key) to 128 random bits, with no state between
// calls. The generator holds only (seed, offset): a sampling op reserves one counter per element,
// [offset, offset + n), and element i (in row-major order of the output) uses counter
// offset + i. Any chunking over threads computes the same bits for the same element, and the
// next op starts where this one ended, so a seed fixes every draw of a program.

/// The Philox4x32-10 bijection (Salmon et al., 2011; Random123's reference constants).
inline std::array<uint32_t, 4> philox4x32(std::array<uint32_t, 4> ctr,
                                          std::array<uint32_t, 2> key) {
  constexpr uint32_t kM0 = 0xD2511F53u, kM1 = 0xCD9E8D57u, kW0 = 0x9E3779B9u, kW1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      key[0] += kW0;
      key[1] += kW1;
    }
    uint64_t p0 = uint64_t(kM0) * ctr[0], p1 = uint64_t(kM1) * ctr[2];
    ctr = {uint32_t(p1 >> 32) ^ ctr[1] ^ key[0], uint32_t(p1), uint32_t(p0 >> 32) ^ ctr[3] ^ key[1],
           uint32_t(p0)};
  }
  return ctr;
}

/// The 128 random bits of counter `ctr` under `seed`.
inline std::array<uint32_t, 4> philox(uint64_t seed, uint64_t ctr) {
  return philox4x32({uint32_t(ctr), uint32_t(ctr >> 32), 0, 0},
                    {uint32_t(seed), uint32_t(seed >> 32)});
}

/// A counter-based generator (Philox 4x32-10): streams are reproducible and splittable.
class Generator {
 public:
  explicit Generator(uint64_t seed = 67280421310721ULL);
  /// Sets the seed and rewinds the counter.
  void manual_seed(uint64_t seed);
  /// Seeds from a non-deterministic source and returns the seed (torch.seed()).
  uint64_t seed();
  uint64_t initial_seed() const;
  /// Reserves `n` 128-bit blocks and returns the offset of the first (for parallel sampling).
  uint64_t advance(uint64_t n);
  /// Reserves `n` blocks and returns (seed, first offset) read together, safe against a
  /// concurrent manual_seed.
  std::pair<uint64_t, uint64_t> reserve(uint64_t n);
  /// Serializes/restores (seed, offset) for get_state/set_state.
  std::pair<uint64_t, uint64_t> state() const;
  void set_state(uint64_t seed, uint64_t offset);

 private:
  mutable std::mutex mutex_;
  uint64_t seed_;
  uint64_t offset_ = 0;
};
using GeneratorPtr = std::shared_ptr<Generator>;

/// The process-wide default generator (torch.default_generator).
const GeneratorPtr& default_generator();
/// Seeds the default generator.
void manual_seed(uint64_t seed);

}  // namespace ember
