#pragma once
// Einstein summation (ops/einsum.cpp).
#include <string>

#include "ember/core/tensor.h"

namespace ember {

/// Einstein summation: explicit ('->') or implicit output, repeated subscripts (diagonals),
/// '...' broadcasting, and sums over subscripts absent from the output.
Tensor einsum(const std::string& equation, TensorList operands);

}  // namespace ember
