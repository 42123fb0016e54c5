#pragma once
// Class-index losses (ops/loss.cpp): cross-entropy runs one fused log_softmax + nll kernel. The
// elementwise losses are in ops/loss_pointwise.h, CTC in ops/loss_ctc.h.
#include <optional>

#include "ember/core/reduction.h"
#include "ember/core/tensor.h"

namespace ember {

/// Negative log-likelihood of class indices: input (N, C), (C,) or (N, C, d1, ...) of
/// log-probabilities; Mean divides by the summed weights of the non-ignored targets.
Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight = {},
                Reduction reduction = Reduction::Mean, int64_t ignore_index = -100);
/// log_softmax + nll_loss for class-index targets (fused), or soft cross-entropy when `target`
/// has the input's shape (class probabilities); label smoothing as PyTorch.
Tensor cross_entropy(const Tensor& input, const Tensor& target,
                     const std::optional<Tensor>& weight = {},
                     Reduction reduction = Reduction::Mean, int64_t ignore_index = -100,
                     double label_smoothing = 0.0);

}  // namespace ember
