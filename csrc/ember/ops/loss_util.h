#pragma once
// Helpers shared by the loss files (not public API).
#include "ember/ops/loss.h"

namespace ember {

/// nll_loss/cross_entropy targets are int64 or uint8, as PyTorch's kernels accept.
void check_class_target(const Tensor& target);
/// Margin-loss targets are int64 ("expected scalar type Long but found Int").
void check_long_target(const Tensor& target);
/// Every int64 target is ignore_index or in [0, C); otherwise IndexError "Target t is out of
/// bounds."
void check_targets_in_range(const Tensor& target, int64_t C, int64_t ignore_index);
/// The unreduced loss, its mean or its sum.
Tensor apply_reduction(const Tensor& loss, Reduction reduction);

}  // namespace ember
