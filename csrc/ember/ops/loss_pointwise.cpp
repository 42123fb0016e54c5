// Elementwise and margin losses as compositions of public ops. The two binary cross-entropies
// record a node of their own so their gradients stay finite where the composite's would not
// (log of 0, saturated logits), with PyTorch's formulas.
#include <climits>

#include "ember/autograd/grad_mode.h"
#include "ember/autograd/node.h"
#include "ember/autograd/task.h"
#include "ember/core/profiler.h"
#include "ember/ops/loss_util.h"
#include "ember/ops/ops.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

Tensor num(double v) { return wrap_scalar(v); }

// log(sigmoid(x)) = -(max(-x, 0) + log1p(exp(-|x|))), finite for every x.
Tensor log_sigmoid_value(const Tensor& x) { return -(relu(-x) + log1p(exp(-abs(x)))); }

Tensor with_weight(const Tensor& loss, const std::optional<Tensor>& weight) {
  return weight ? loss * *weight : loss;
}

// The regression losses take a bool target as numbers, as PyTorch's kernels do (`-` rejects bool).
Tensor numeric(const Tensor& target, const Tensor& input) {
  return target.dtype() == kBool ? to_dtype(target, promote_types(input.dtype(), kBool)) : target;
}

// huber_loss and soft_margin_loss return the input's dtype whatever the target's, as PyTorch's
// kernels do (they write into a tensor shaped and typed like the input).
Tensor like_input(const Tensor& target, const Tensor& input) {
  return target.dtype() == input.dtype() ? target : to_dtype(target, input.dtype());
}

}  // namespace

Tensor binary_cross_entropy(const Tensor& input, const Tensor& target,
                            const std::optional<Tensor>& weight, Reduction reduction) {
  EMBER_CHECK_VALUE(input.sizes().equals(target.sizes()), "Using a target size (", target.sizes(),
                    ") that is different to the input size (", input.sizes(),
                    ") is deprecated. Please ensure they have the same size.");
  Tensor loss;
  {
    NoGradGuard no_grad;
    EMBER_CHECK(!any(logical_not(logical_and(ge(input, num(0)), le(input, num(1))))).item<bool>(),
                "all elements of input should be between 0 and 1");
    Tensor lo = num(-100);
    loss = -(target * clamp(log(input), lo, {}) + (1 - target) * clamp(log1p(-input), lo, {}));
  }
  // d/dx = (x - t) / max(x (1 - x), 1e-12); d/dt = log(1 - x) - log(x), as PyTorch.
  auto node = autograd::record("BinaryCrossEntropyBackward0", {input, target}, {loss},
                               [](FunctionNode& n, const variable_list& g) {
                                 Tensor x = n.saved(0), t = n.saved(1), gx, gt;
                                 if (autograd::task_should_compute_output(n, 0))
                                   gx = g[0] * (x - t) / clamp((1 - x) * x, num(1e-12), {});
                                 if (autograd::task_should_compute_output(n, 1)) {
                                   Tensor lo = num(-100);
                                   gt = g[0] * (clamp(log1p(-x), lo, {}) - clamp(log(x), lo, {}));
                                 }
                                 return variable_list{gx, gt};
                               });
  if (node) {
    node->save(input);
    node->save(target);
  }
  return apply_reduction(with_weight(loss, weight), reduction);
}

Tensor binary_cross_entropy_with_logits(const Tensor& input, const Tensor& target,
                                        const std::optional<Tensor>& weight,
                                        const std::optional<Tensor>& pos_weight,
                                        Reduction reduction) {
  EMBER_CHECK_VALUE(input.sizes().equals(target.sizes()), "Target size (", target.sizes(),
                    ") must be the same as input size (", input.sizes(), ")");
  Tensor pw = pos_weight ? *pos_weight : Tensor();
  Tensor loss;
  {
    NoGradGuard no_grad;
    Tensor log_weight = pw.defined() ? (pw - 1) * target + 1 : Tensor();
    Tensor ls = log_sigmoid_value(input);
    loss = (1 - target) * input - (pw.defined() ? log_weight * ls : ls);
  }
  // loss = (1 - t) x - lw log_sigmoid(x), lw = 1 + (pw - 1) t.
  auto node = autograd::record("BinaryCrossEntropyWithLogitsBackward0", {input, target, pw}, {loss},
                               [has_pw = pw.defined()](FunctionNode& n, const variable_list& g) {
                                 Tensor x = n.saved(0), t = n.saved(1),
                                        p = has_pw ? n.saved(2) : Tensor();
                                 Tensor lw = has_pw ? (p - 1) * t + 1 : Tensor(), gx, gt, gp;
                                 if (autograd::task_should_compute_output(n, 0)) {
                                   Tensor s = sigmoid(-x);
                                   gx = g[0] * ((1 - t) - (has_pw ? lw * s : s));
                                 }
                                 if (autograd::task_should_compute_output(n, 1))
                                   gt = g[0] * (has_pw ? -x - (p - 1) * log_sigmoid_value(x) : -x);
                                 if (autograd::task_should_compute_output(n, 2))
                                   gp = g[0] * (-t * log_sigmoid_value(x));
                                 return variable_list{gx, gt, gp};
                               });
  if (node) {
    node->save(input);
    node->save(target);
    if (pw.defined()) node->save(pw);
  }
  return apply_reduction(with_weight(loss, weight), reduction);
}

Tensor mse_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  profiler::Range prof_range(profiler::RangeKind::Op, "mse_loss");
  return apply_reduction(square(input - numeric(target, input)), reduction);
}

Tensor l1_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return apply_reduction(abs(input - target), reduction);
}

Tensor smooth_l1_loss(const Tensor& input, const Tensor& target, Reduction reduction, double beta) {
  EMBER_CHECK(beta >= 0, "smooth_l1_loss does not support negative values for beta.");
  if (beta == 0) return l1_loss(input, target, reduction);
  Tensor d = abs(input - numeric(target, input));
  return apply_reduction(where(lt(d, num(beta)), square(d) * (0.5 / beta), d - 0.5 * beta),
                         reduction);
}

Tensor huber_loss(const Tensor& input, const Tensor& target, Reduction reduction, double delta) {
  EMBER_CHECK(delta > 0, "huber_loss does not support non-positive values for delta.");
  Tensor d = abs(input - like_input(numeric(target, input), input));
  return apply_reduction(where(lt(d, num(delta)), square(d) * 0.5, (d - 0.5 * delta) * delta),
                         reduction);
}

Tensor kl_div(const Tensor& input, const Tensor& target, Reduction reduction, bool log_target) {
  EMBER_CHECK(is_floating_point(input.dtype()) && is_floating_point(target.dtype()),
              "kl_div: Integral inputs not supported; got input ", scalar_type_name(input.dtype()),
              " and target ", scalar_type_name(target.dtype()));
  Tensor loss;
  if (log_target) {
    loss = exp(target) * (target - input);
  } else {
    // xlogy(t, t): 0 where t == 0 (the log's argument is made safe so no NaN gradient leaks).
    Tensor zero = eq(target, num(0));
    Tensor safe = where(zero, ones_like(target), target);
    loss = where(zero, zeros_like(target), target * log(safe)) - target * input;
  }
  return apply_reduction(loss, reduction);
}

Tensor cosine_embedding_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                             double margin, Reduction reduction) {
  int64_t td = target.dim();
  EMBER_CHECK(td == 0 || td == 1, "0D or 1D target tensor expected, multi-target not supported");
  int64_t want = td + 1;
  EMBER_CHECK(input1.dim() == want && input2.dim() == want, td == 1 ? "2D" : "1D",
              " target tensor expects ", td == 1 ? "2D" : "1D",
              " input tensors, but found inputs "
              "with sizes ",
              input1.sizes(), " and ", input2.sizes(), ".");
  const double kEps = 1e-12;
  int64_t d = td;
  Tensor prod = sum(input1 * input2, {d});
  Tensor mag = (sum(input1 * input1, {d}) + kEps) * (sum(input2 * input2, {d}) + kEps);
  Tensor cos = prod / sqrt(mag);
  Tensor zero = zeros_like(cos);
  Tensor pos = where(eq(target, num(1)), 1 - cos, zero);
  Tensor neg = where(eq(target, num(-1)), clamp(cos - margin, num(0), {}), zero);
  return apply_reduction(pos + neg, reduction);
}

Tensor margin_ranking_loss(const Tensor& input1, const Tensor& input2, const Tensor& target,
                           double margin, Reduction reduction) {
  return apply_reduction(clamp(-target * (input1 - input2) + margin, num(0), {}), reduction);
}

Tensor triplet_margin_loss(const Tensor& anchor, const Tensor& positive, const Tensor& negative,
                           double margin, double p, double eps, bool swap, Reduction reduction) {
  int64_t a = anchor.dim(), pd = positive.dim(), nd = negative.dim();
  EMBER_CHECK(a == pd && a == nd,
              "The anchor, positive, and negative tensors are expected to have "
              "the same number of dimensions, but got: anchor ",
              a, "D, positive ", pd, "D, and negative ", nd, "D inputs");
  EMBER_CHECK(margin > 0, "triplet_margin_loss: expected margin to be greater than 0, got ", margin,
              " instead");
  auto dist = [&](const Tensor& x, const Tensor& y) {
    return norm(x - y + eps, Scalar(p), {std::max<int64_t>(x.dim(), y.dim()) - 1});
  };
  Tensor d_pos = dist(anchor, positive), d_neg = dist(anchor, negative);
  if (swap) d_neg = minimum(d_neg, dist(positive, negative));
  return apply_reduction(clamp(d_pos - d_neg + margin, num(0), {}), reduction);
}

Tensor hinge_embedding_loss(const Tensor& input, const Tensor& target, double margin,
                            Reduction reduction) {
  Tensor zero = zeros_like(input);
  Tensor margin_part = where(ne(target, num(1)), clamp(margin - input, num(0), {}), zero);
  Tensor self_part = where(ne(target, num(-1)), input, zero);
  return apply_reduction(margin_part + self_part, reduction);
}

Tensor soft_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  return apply_reduction(log1p(exp(-input * like_input(target, input))), reduction);
}

Tensor poisson_nll_loss(const Tensor& input, const Tensor& target, bool log_input, bool full,
                        double eps, Reduction reduction) {
  Tensor loss = log_input ? exp(input) - target * input : input - target * log(input + eps);
  if (full) {
    // Stirling's approximation of log(t!), only where t > 1.
    Tensor big = gt(target, num(1));
    Tensor safe = where(big, target, ones_like(target));
    Tensor stirling = safe * log(safe) - safe + log(safe * (2 * M_PI)) * 0.5;
    loss = loss + where(big, stirling, zeros_like(stirling));
  }
  return apply_reduction(loss, reduction);
}

Tensor multi_margin_loss(const Tensor& input, const Tensor& target, int64_t p, double margin,
                         const std::optional<Tensor>& weight, Reduction reduction) {
  EMBER_CHECK(p == 1 || p == 2, "only p == 1 and p == 2 supported");
  EMBER_CHECK(input.dim() == 2 || (input.dim() <= 1 && input.numel() > 0),
              "Expected non-empty vector or matrix with optional 0-dim batch size, but got: ",
              input.sizes());
  check_long_target(target);
  Tensor x = input.dim() <= 1 ? reshape(input, {1, -1}) : input;
  Tensor t = reshape(to_dtype(target, kLong), {-1});
  int64_t C = x.size(1);
  EMBER_CHECK(t.numel() == x.size(0), "inconsistent target size, expected ", x.size(0), " but got ",
              target.sizes());
  if (weight)
    EMBER_CHECK(weight->dim() <= 1 && weight->numel() == C, "inconsistent weight size, expected ",
                C, " but got ", weight->sizes());
  check_targets_in_range(t, C, INT64_MIN);
  Tensor idx = unsqueeze(t, 1);
  // torch's kernel adds a class's margin only where it is > 0, so a NaN adds nothing
  Tensor z = gather(x, 1, idx) * -1 + x + margin;
  z = where(gt(z, num(0)), z, zeros_like(z));
  if (p == 2) z = square(z);
  if (weight) z = z * unsqueeze(index_select(*weight, 0, t), 1);
  z = scatter(z, 1, idx, Scalar(0.0));
  Tensor loss = sum(z, {1}) / double(C);
  if (reduction == Reduction::None) return input.dim() <= 1 ? reshape(loss, {}) : loss;
  return apply_reduction(loss, reduction);
}

Tensor multilabel_margin_loss(const Tensor& input, const Tensor& target, Reduction reduction) {
  EMBER_CHECK(
      input.dim() <= 2 && target.dim() == input.dim() && target.sizes().equals(input.sizes()),
      "inconsistent target size: ", target.sizes(), " for input of size: ", input.sizes());
  check_long_target(target);
  Tensor x = input.dim() <= 1 ? reshape(input, {1, -1}) : input;
  Tensor t = contiguous(to_dtype(reshape(target, {x.size(0), x.size(1)}), kLong));
  int64_t N = x.size(0), C = x.size(1);
  // count[i, j]: times class j is listed before row i's first -1; is_target marks those classes.
  Tensor count = zeros({N, C}, TensorOptions(x.dtype()).device(x.device()));
  {
    const int64_t* tp = t.data_ptr<int64_t>();
    Tensor cnt = zeros({N, C}, TensorOptions(kDouble).device(x.device()));
    double* cp = cnt.data_ptr<double>();
    for (int64_t i = 0; i < N; ++i)
      for (int64_t j = 0; j < C && tp[i * C + j] >= 0; ++j) {
        EMBER_CHECK_INDEX(tp[i * C + j] < C, "Target ", tp[i * C + j], " is out of bounds.");
        cp[i * C + tp[i * C + j]] += 1;
      }
    count = to_dtype(cnt, x.dtype());
  }
  Tensor others = to_dtype(eq(count, num(0)), x.dtype());
  Tensor h = clamp(unsqueeze(x, 1) - unsqueeze(x, 2) + 1, num(0), {});
  // Only (target, non-target) pairs enter: a pair left out contributes 0, never 0 * inf (an
  // infinite score gives torch's inf, not nan).
  Tensor pairs = unsqueeze(count, 2) * unsqueeze(others, 1);
  Tensor loss = sum(where(ne(pairs, num(0)), pairs * h, num(0)), {1, 2}) / double(C);
  if (reduction == Reduction::None) return input.dim() <= 1 ? reshape(loss, {}) : loss;
  return apply_reduction(loss, reduction);
}

Tensor multilabel_soft_margin_loss(const Tensor& input, const Tensor& target,
                                   const std::optional<Tensor>& weight, Reduction reduction) {
  // torch's own formula: a target of exactly 0 or 1 never multiplies an infinite log-sigmoid by
  // 0, so an infinite score gives inf where binary_cross_entropy_with_logits gives nan.
  Tensor loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input));
  loss = with_weight(loss, weight);
  EMBER_CHECK_INDEX(input.dim() > 0, "Dimension specified as -1 but tensor has no dimensions");
  int64_t cdim = input.dim() - 1;
  return apply_reduction(sum(loss, {cdim}) / double(input.size(cdim)), reduction);
}

}  // namespace ember
