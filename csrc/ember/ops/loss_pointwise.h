#pragma once
// The losses composed of elementwise public ops (ops/loss_pointwise.cpp).
#include <optional>

#include "ember/core/reduction.h"
#include "ember/core/tensor.h"

namespace ember {

/// -(t log x + (1 - t) log(1 - x)), each log clamped at -100; input must lie in [0, 1].
Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight = {},
                            Reduction reduction = Reduction::Mean);
/// Sigmoid + binary cross-entropy in the stable log-sigmoid form; pos_weight scales positives.
Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight = {},
                                        const std::optional<Tensor>& pos_weight = {},
                                        Reduction reduction = Reduction::Mean);
/// (x - y)^2.
Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// |x - y|.
Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean);
/// 0.5 d^2 / beta where d = |x - y| < beta, else d - 0.5 beta (beta = 0 is l1_loss).
Tensor smooth_l1_loss(const Tensor& input, const Tensor& target,
                      Reduction reduction = Reduction::Mean, double beta = 1.0);
/// 0.5 d^2 where d = |x - y| < delta, else delta (d - 0.5 delta).
Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
                  double delta = 1.0);
/// Pointwise KL divergence t (log t - x) with input in log space (target too if log_target).
Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction = Reduction::Mean,
              bool log_target = false);
/// 1 - cos(x1, x2) for y = 1, max(0, cos(x1, x2) - margin) for y = -1.
Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin = 0.0, Reduction reduction = Reduction::Mean);
/// max(0, -y (x1 - x2) + margin).
Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin = 0.0, Reduction reduction = Reduction::Mean);
/// max(0, margin + d(a, p) - d(a, n)) with the p-norm pairwise distance.
Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin = 1.0, double p = 2.0, double eps = 1e-6,
                           bool swap = false, Reduction reduction = Reduction::Mean);
/// x for y = 1, max(0, margin - x) for y = -1.
Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin = 1.0,
                            Reduction reduction = Reduction::Mean);
/// log(1 + exp(-y x)).
Tensor soft_margin_loss(const Tensor& input, const Tensor& target,
                        Reduction reduction = Reduction::Mean);
/// Poisson negative log-likelihood (input as log-rate if log_input), Stirling term if full.
Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input = true,
                        bool full = false, double eps = 1e-8,
                        Reduction reduction = Reduction::Mean);
/// Multi-class hinge loss: sum over j != y of max(0, margin - x_y + x_j)^p (p = 1 or 2) / C.
Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p = 1,
                         double margin = 1.0, const std::optional<Tensor>& weight = {},
                         Reduction reduction = Reduction::Mean);
/// Multi-label hinge loss; each target row lists class indices up to the first -1.
Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target,
                              Reduction reduction = Reduction::Mean);
/// Mean over classes of the binary cross-entropy with logits per class.
Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const std::optional<Tensor>& weight = {},
                                   Reduction reduction = Reduction::Mean);

}  // namespace ember
