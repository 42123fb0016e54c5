#include "ember/core/generator.h"

#include <cstring>
#include <random>

#include "ember/core/error.h"

namespace ember {

namespace {

// Byte offsets of torch's CPUGeneratorImplState (a THGeneratorState, then the float normal).
constexpr int kSeedAt = 0, kLeftAt = 8, kSeededAt = 12, kNextAt = 16, kWordsAt = 24;
constexpr int kNormalYAt = 5024, kNormalValidAt = 5040, kFloatNormalAt = 5048, kFloatValidAt = 5052;

template <class T>
void put(std::vector<uint8_t>& b, int at, T v) {
  std::memcpy(b.data() + at, &v, sizeof v);
}
template <class T>
T get(const uint8_t* b, int at) {
  T v;
  std::memcpy(&v, b + at, sizeof v);
  return v;
}

}  // namespace

Generator::Generator(uint64_t seed) { reseed(seed); }

void Generator::reseed(uint64_t seed) {
  seed_ = seed;
  mt_[0] = uint32_t(seed);
  for (int j = 1; j < kN; ++j)
    mt_[size_t(j)] = 1812433253u * (mt_[size_t(j - 1)] ^ (mt_[size_t(j - 1)] >> 30)) + uint32_t(j);
  left_ = 1;
  next_ = 0;
  next_double_normal_.reset();
  next_float_normal_.reset();
}

void Generator::twist() {
  constexpr int kM = 397;
  auto mix = [](uint32_t u, uint32_t v) {
    uint32_t y = (u & 0x80000000u) | (v & 0x7fffffffu);
    return (y >> 1) ^ ((v & 1u) ? 0x9908b0dfu : 0u);
  };
  int i = 0;
  for (; i < kN - kM; ++i)
    mt_[size_t(i)] = mt_[size_t(i + kM)] ^ mix(mt_[size_t(i)], mt_[size_t(i + 1)]);
  for (; i < kN - 1; ++i)
    mt_[size_t(i)] = mt_[size_t(i + kM - kN)] ^ mix(mt_[size_t(i)], mt_[size_t(i + 1)]);
  mt_[kN - 1] = mt_[kM - 1] ^ mix(mt_[kN - 1], mt_[0]);
  left_ = kN;
  next_ = 0;
}

void Generator::manual_seed(uint64_t seed) {
  std::lock_guard<std::mutex> g(mutex_);
  reseed(seed);
}

uint64_t Generator::seed() {
  std::random_device rd;
  // 53 bits, as torch: the seed stays exact as a Python float too
  uint64_t s = ((uint64_t(rd()) << 32) + rd()) & ((uint64_t(1) << 53) - 1);
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> g(mutex_);
  return seed_;
}

std::vector<uint8_t> Generator::state() const {
  std::lock_guard<std::mutex> g(mutex_);
  std::vector<uint8_t> b(size_t(kStateBytes), 0);
  put(b, kSeedAt, seed_);
  put(b, kLeftAt, int32_t(left_));
  put(b, kSeededAt, int32_t(1));
  put(b, kNextAt, uint64_t(next_));
  for (int j = 0; j < kN; ++j) put(b, kWordsAt + 8 * j, uint64_t(mt_[size_t(j)]));
  if (next_double_normal_) {
    put(b, kNormalYAt, *next_double_normal_);
    put(b, kNormalValidAt, int32_t(1));
  }
  if (next_float_normal_) {
    put(b, kFloatNormalAt, *next_float_normal_);
    put(b, kFloatValidAt, uint8_t(1));
  }
  return b;
}

void Generator::set_state(const uint8_t* b, int64_t n) {
  EMBER_CHECK(n == kStateBytes, "Expected a CPUGeneratorImplState of size ", kStateBytes,
              " but found the input RNG state size to be ", n);
  const int32_t left = get<int32_t>(b, kLeftAt);
  const uint64_t next = get<uint64_t>(b, kNextAt);
  EMBER_CHECK(get<int32_t>(b, kSeededAt) != 0 && left > 0 && left <= kN && next <= uint64_t(kN),
              "Invalid mt19937 state");
  std::lock_guard<std::mutex> g(mutex_);
  seed_ = get<uint64_t>(b, kSeedAt);
  left_ = left;
  next_ = uint32_t(next);
  for (int j = 0; j < kN; ++j) mt_[size_t(j)] = uint32_t(get<uint64_t>(b, kWordsAt + 8 * j));
  next_double_normal_.reset();
  next_float_normal_.reset();
  if (get<int32_t>(b, kNormalValidAt)) next_double_normal_ = get<double>(b, kNormalYAt);
  if (get<uint8_t>(b, kFloatValidAt)) next_float_normal_ = get<float>(b, kFloatNormalAt);
}

const GeneratorPtr& default_generator() {
  static const GeneratorPtr gen = std::make_shared<Generator>();
  return gen;
}

void manual_seed(uint64_t seed) { default_generator()->manual_seed(seed); }

}  // namespace ember
