#pragma once
// Connectionist temporal classification loss (ops/loss_ctc.cpp).
#include <optional>

#include "ember/core/reduction.h"
#include "ember/core/tensor.h"

namespace ember {

/// Connectionist temporal classification: log_probs (T, N, C) or (T, C), targets padded (N, S)
/// or concatenated 1-d; Mean divides each loss by its target length, then averages.
Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank = 0,
                Reduction reduction = Reduction::Mean, bool zero_infinity = false);

}  // namespace ember
