// nll_loss and cross_entropy: shape checks shared by both, the fused class-index cross-entropy
// op with its Autograd kernel, and the soft (probability-target) and label-smoothing rules.
#include "ember/ops/loss.h"

#include "ember/autograd/node.h"
#include "ember/core/profiler.h"
#include "ember/core/shape.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/ops/derivative.h"
#include "ember/ops/loss_util.h"
#include "ember/ops/ops.h"
#include "ember/schema/loss.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

// (input (M, C), target (M,), weight, reduction, ignore_index) -> (loss, total weight).
// (grad, target, weight, reduction, ignore_index, total weight, C) -> gradient (M, C).
EMBER_DERIVATIVE_OUTPUTS(op::_nll_loss_index, "NllLossBackward0",
                         (self, target, weight, reduction, ignore_index), (result, total_weight),
                         op::_nll_loss_index_backward.call(grad, target, weight, reduction,
                                                           ignore_index, total_weight,
                                                           self_sizes[1]),
                         not_differentiable(), not_differentiable());

namespace {

// The gradient scatters -w[t] * s into each row's target column; in public ops for create_graph.
Tensor nll_backward_composite(const Tensor& grad, const Tensor& t,
                              const std::optional<Tensor>& weight, int64_t reduction,
                              int64_t ignore_index, const Tensor& total, int64_t C) {
  Tensor mask = ne(t, wrap_scalar(ignore_index));
  Tensor safe = where(mask, t, zeros_like(t));
  Tensor maskf = to_dtype(mask, grad.dtype());
  Tensor wt = weight ? index_select(*weight, 0, safe) * maskf : maskf;
  Tensor s = reduction == int64_t(Reduction::Mean) ? grad / total : grad;
  Tensor src = unsqueeze(-(wt * s), 1);
  return scatter(zeros({t.size(0), C}, TensorOptions(grad.dtype()).device(grad.device())), 1,
                 unsqueeze(safe, 1), src);
}
EMBER_REGISTER_KERNEL(op::_nll_loss_index_backward, Autograd, nll_backward_composite);

// Note [Fused cross-entropy]
// _cross_entropy_index(x (M, C), t (M,), weight, reduction, ignore_index, eps) returns the loss,
// each row's logsumexp and the total weight in one pass over x. Per row with w = weight[t]:
//   loss = (1 - eps) w (lse - x_t) + eps / C * sum_c w_c (lse - x_c)
// and Mean divides the sum by the total of w over non-ignored rows (both terms, as PyTorch).
// The gradient s * ((1 - eps) w (p - onehot(t)) + eps / C (W p - w_c)), p = exp(x - lse),
// W = sum_c w_c, is the op _cross_entropy_index_backward; its Autograd kernel (reached only by
// create_graph) evaluates the same formula in public ops.
}  // namespace

EMBER_DERIVATIVE_OUTPUTS(op::_cross_entropy_index, "NllLossBackward0",
                         (self, target, weight, reduction, ignore_index, label_smoothing),
                         (result, lse, total_weight),
                         op::_cross_entropy_index_backward.call(grad, self, target, weight,
                                                                reduction, ignore_index,
                                                                label_smoothing, lse, total_weight),
                         not_differentiable(), not_differentiable());

namespace {

Tensor ce_backward_composite(const Tensor& grad, const Tensor& x, const Tensor& t,
                             const std::optional<Tensor>& weight, int64_t reduction,
                             int64_t ignore_index, double eps, const Tensor&, const Tensor& total) {
  int64_t C = x.size(1);
  Tensor mask = ne(t, wrap_scalar(ignore_index));
  Tensor safe = where(mask, t, zeros_like(t));
  Tensor maskf = to_dtype(mask, x.dtype());
  Tensor wt = weight ? index_select(*weight, 0, safe) * maskf : maskf;
  Tensor s = reduction == int64_t(Reduction::Mean) ? grad / total : grad;
  Tensor big_w = weight ? sum(*weight) : wrap_scalar(double(C));
  Tensor a = wt * (1 - eps) + maskf * big_w * (eps / C);
  Tensor onehot = scatter(zeros_like(x), 1, unsqueeze(safe, 1), Scalar(1.0));
  Tensor col = unsqueeze(s * maskf, 1);
  Tensor g = unsqueeze(a, 1) * softmax(x, 1) - unsqueeze(wt * (1 - eps), 1) * onehot;
  if (eps > 0) g = g - (weight ? unsqueeze(*weight, 0) : ones_like(x)) * (eps / C);
  return col * g;
}
EMBER_REGISTER_KERNEL(op::_cross_entropy_index_backward, Autograd, ce_backward_composite);

// The class-index layout both losses accept, reduced to rows: (M, C) input and (M,) targets.
struct ClassRows {
  Tensor input, target;
  DimVector out_shape;  // the shape of an unreduced loss
};

ClassRows as_rows(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight) {
  EMBER_CHECK_VALUE(input.dim() >= 1, "Expected 1 or more dimensions (got ", input.dim(), ")");
  EMBER_CHECK_VALUE(input.dim() == 1 || target.dim() == 0 || input.size(0) == target.size(0),
                    "Expected input batch_size (", input.size(0), ") to match target batch_size (",
                    target.size(0), ").");
  int64_t C = input.dim() == 1 ? input.size(0) : input.size(1);
  if (weight)
    EMBER_CHECK(weight->dim() == 1 && weight->numel() == C,
                "weight tensor should be defined either for all ", C,
                " classes or no classes but got weight tensor of shape: ", weight->sizes());
  // The target's shape is checked before its dtype, as torch's (a float (N, K) target of a
  // (N, C) input is reported as multi-target, not as a wrong dtype).
  if (input.dim() <= 2) {
    EMBER_CHECK(target.dim() <= 1, "0D or 1D target tensor expected, multi-target not supported");
    check_class_target(target);
    Tensor t = to_dtype(target, kLong);
    // an unbatched (C,) input takes a 0-d target or a 1-element one (torch's Python check)
    EMBER_CHECK_VALUE(
        input.dim() != 1 || target.dim() != 1 || target.size(0) == 1,
        "For 1D input, 1D target must have size 1, but got target size: ", target.size(0));
    bool no_batch = input.dim() == 1;
    EMBER_CHECK(no_batch || (input.dim() == 2 && target.dim() == 1),
                "size mismatch (got input: ", input.sizes(), ", target: ", target.sizes(), ")");
    if (no_batch) return {unsqueeze(input, 0), reshape(t, {1}), {}};
    return {input, t, DimVector(target.sizes())};
  }
  DimVector expected{input.size(0)};
  for (int64_t d = 2; d < input.dim(); ++d) expected.push_back(input.size(d));
  EMBER_CHECK(target.sizes().equals(expected), "Expected target size ", IntArrayRef(expected),
              ", got ", target.sizes());
  check_class_target(target);
  return {reshape(movedim(input, {1}, {-1}), {-1, C}), reshape(to_dtype(target, kLong), {-1}),
          expected};
}

Tensor reduce_rows(const Tensor& loss, const ClassRows& r, Reduction reduction) {
  return reduction == Reduction::None ? reshape(loss, r.out_shape) : loss;
}

std::optional<Tensor> weight_as(const std::optional<Tensor>& weight, ScalarType dtype) {
  if (!weight || weight->dtype() == dtype) return weight;
  return to_dtype(*weight, dtype);
}

// Soft targets: -sum_c w_c t_c log p_c per row; Mean divides by the number of rows.
Tensor soft_cross_entropy(const Tensor& input, const Tensor& target,
                          const std::optional<Tensor>& weight, Reduction reduction,
                          int64_t ignore_index, double eps) {
  EMBER_CHECK(is_floating_point(target.dtype()),
              "Expected floating point type for target with "
              "class probabilities, got ",
              scalar_type_name(target.dtype()));
  EMBER_CHECK(ignore_index < 0, "ignore_index is not supported for floating point target");
  int64_t cdim = input.dim() == 1 ? 0 : 1, C = input.size(cdim);
  Tensor t = eps > 0 ? target * (1 - eps) + eps / C : target;
  Tensor prod = log_softmax(input, cdim) * t;
  if (weight) {
    DimVector shape(size_t(input.dim()), 1);
    shape[size_t(cdim)] = C;
    prod = prod * view(*weight, shape);
  }
  Tensor loss = -sum(prod, {cdim});
  if (reduction == Reduction::None) return loss;
  if (reduction == Reduction::Sum) return sum(loss);
  return sum(loss) / double(C == 0 ? 0 : input.numel() / C);
}

}  // namespace

Tensor nll_loss(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                Reduction reduction, int64_t ignore_index) {
  profiler::OpRange prof_range("nll_loss", input, target, weight, int64_t(reduction), ignore_index);
  if (!(input.dtype() == kFloat || input.dtype() == kDouble))
    return to_dtype(nll_loss(to_dtype(input, kFloat), target, weight, reduction, ignore_index),
                    input.dtype());
  ClassRows r = as_rows(input, target, weight);
  check_targets_in_range(r.target, r.input.size(1), ignore_index);
  auto [loss, total] = op::_nll_loss_index.call(r.input, r.target, weight_as(weight, input.dtype()),
                                                int64_t(reduction), ignore_index);
  return reduce_rows(loss, r, reduction);
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const std::optional<Tensor>& weight,
                     Reduction reduction, int64_t ignore_index, double label_smoothing) {
  profiler::OpRange prof_range("cross_entropy", input, target, weight, int64_t(reduction),
                               ignore_index, label_smoothing);
  // torch checks only the upper bound, and smooths only for a positive value: a negative one
  // computes the unsmoothed loss
  EMBER_CHECK(label_smoothing <= 1.0,
              "label_smoothing must be between 0.0 and 1.0. Got: ", label_smoothing);
  label_smoothing = std::max(label_smoothing, 0.0);
  if (input.sizes().equals(target.sizes()))
    return soft_cross_entropy(input, target, weight, reduction, ignore_index, label_smoothing);
  EMBER_CHECK(input.dim() >= 1, "cross_entropy: expected input of 1 or more dimensions; got 0");
  if (profiler::enabled() && label_smoothing == 0 && reduction != Reduction::None &&
      (input.dtype() == kFloat || input.dtype() == kDouble)) [[unlikely]] {
    // Under a profile, torch's composition (log_softmax, then nll_loss_nd), whose rows and
    // backward nodes the profile then shows (Note [Profiler rows]); the fused kernel otherwise.
    Tensor logp = log_softmax(input, input.dim() == 1 ? 0 : 1, input.dtype());
    profiler::OpRange nd("nll_loss_nd", logp, target, weight, int64_t(reduction), ignore_index);
    return nll_loss(logp, target, weight, reduction, ignore_index);
  }
  if (!(input.dtype() == kFloat || input.dtype() == kDouble)) {
    int64_t cdim = input.dim() == 1 ? 0 : 1;
    Tensor logp = log_softmax(input, cdim);
    if (label_smoothing == 0) return nll_loss(logp, target, weight, reduction, ignore_index);
    return to_dtype(cross_entropy(to_dtype(input, kFloat), target, weight, reduction, ignore_index,
                                  label_smoothing),
                    input.dtype());
  }
  ClassRows r = as_rows(input, target, weight);
  check_targets_in_range(r.target, r.input.size(1), ignore_index);
  auto [loss, lse, total] =
      op::_cross_entropy_index.call(r.input, r.target, weight_as(weight, input.dtype()),
                                    int64_t(reduction), ignore_index, label_smoothing);
  return reduce_rows(loss, r, reduction);
}

}  // namespace ember

namespace ember {

void check_class_target(const Tensor& target) {
  EMBER_CHECK(target.dtype() == kLong || target.dtype() == kByte,
              "expected target dtype to be Long or Byte, but got ",
              scalar_type_name(target.dtype()));
}

void check_long_target(const Tensor& target) {
  EMBER_CHECK(target.dtype() == kLong, "expected scalar type Long but found ",
              scalar_type_name(target.dtype()));
}

void check_targets_in_range(const Tensor& target, int64_t C, int64_t ignore_index) {
  Tensor t = contiguous(target);
  const int64_t* p = t.data_ptr<int64_t>();
  for (int64_t i = 0, n = t.numel(); i < n; ++i)
    EMBER_CHECK_INDEX(p[i] == ignore_index || (p[i] >= 0 && p[i] < C), "Target ", p[i],
                      " is out of bounds.");
}

Tensor apply_reduction(const Tensor& loss, Reduction reduction) {
  if (reduction == Reduction::Mean) return mean(loss);
  if (reduction == Reduction::Sum) return sum(loss);
  return loss;
}

}  // namespace ember
