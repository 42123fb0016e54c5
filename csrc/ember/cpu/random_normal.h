#pragma once
// torch's normal_ of a contiguous tensor of 16 or more elements (Note [normal in blocks of 16]).
#include <cstdint>

#include "ember/core/generator.h"
#include "ember/core/half.h"

namespace ember::cpu {

/// Fills data[0, n) (n >= 16) with N(mean, std) samples as torch does; the generator is locked.
void normal_fill(float* data, int64_t n, double mean, double std, Generator& g);
void normal_fill(double* data, int64_t n, double mean, double std, Generator& g);
void normal_fill(Half* data, int64_t n, double mean, double std, Generator& g);
void normal_fill(BFloat16* data, int64_t n, double mean, double std, Generator& g);

}  // namespace ember::cpu
