#include "ember/core/generator.h"

#include <random>

namespace ember {

Generator::Generator(uint64_t seed) : seed_(seed) {}

void Generator::manual_seed(uint64_t seed) { set_state(seed, 0); }

uint64_t Generator::seed() {
  std::random_device rd;
  uint64_t s = (uint64_t(rd()) << 32) ^ rd();
  manual_seed(s);
  return s;
}

uint64_t Generator::initial_seed() const {
  std::lock_guard<std::mutex> g(mutex_);
  return seed_;
}

uint64_t Generator::advance(uint64_t n) { return reserve(n).second; }

std::pair<uint64_t, uint64_t> Generator::reserve(uint64_t n) {
  std::lock_guard<std::mutex> g(mutex_);
  uint64_t first = offset_;
  offset_ += n;
  return {seed_, first};
}

std::pair<uint64_t, uint64_t> Generator::state() const {
  std::lock_guard<std::mutex> g(mutex_);
  return {seed_, offset_};
}

void Generator::set_state(uint64_t seed, uint64_t offset) {
  std::lock_guard<std::mutex> g(mutex_);
  seed_ = seed;
  offset_ = offset;
}

const GeneratorPtr& default_generator() {
  static const GeneratorPtr gen = std::make_shared<Generator>();
  return gen;
}

void manual_seed(uint64_t seed) { default_generator()->manual_seed(seed); }

}  // namespace ember
