#pragma once
// Helpers shared by the loss files (not public API).
#include "ember/ops/loss.h"

namespace ember {

/// Class-index targets must be integers ("expected scalar type Long but found Float").
void check_class_target(const Tensor& target);
/// Every int64 target is ignore_index or in [0, C); otherwise IndexError "Target t is out of bounds."
void check_targets_in_range(const Tensor& target, int64_t C, int64_t ignore_index);
/// The unreduced loss, its mean or its sum.
Tensor apply_reduction(const Tensor& loss, Reduction reduction);

}  // namespace ember
