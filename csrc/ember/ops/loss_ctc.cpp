// ctc_loss: argument checks, target layouts, the Autograd kernel and the reduction. The
// alpha/beta recursions are in cpu/loss_ctc.cpp.
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/loss_util.h"
#include "ember/ops/ops.h"
#include "ember/schema/loss.h"

namespace ember {

// (log_probs (T, N, C), flat targets, per-sample target offsets, input lengths, target lengths,
// blank, zero_infinity) -> (negative log-likelihood (N,), log_alpha (N, T, 2 max_len + 1)).
// (grad (N,), log_probs, targets, offsets, input lengths, target lengths, log_alpha, blank,
// zero_infinity) -> gradient (T, N, C).

// The gradient is PyTorch's: with respect to the logits behind log_probs (which must come from
// log_softmax), exp(lp) - exp(log(sum alpha beta over the label's positions) + nll - lp).
EMBER_DERIVATIVE_OUTPUTS(
    op::_ctc_loss, "CtcLossBackward0",
    (log_probs, targets, offsets, input_lengths, target_lengths, blank, zero_infinity),
    (result, log_alpha),
    op::_ctc_loss_backward.call(grad, log_probs, targets, offsets, input_lengths, target_lengths,
                                log_alpha, blank, zero_infinity),
    not_differentiable(), not_differentiable(), not_differentiable(), not_differentiable());

namespace {

Tensor lengths_of(const Tensor& t, int64_t n, const char* what) {
  EMBER_CHECK(!is_floating_point(t.dtype()), what, " must be integral; got ",
              scalar_type_name(t.dtype()));
  Tensor out = contiguous(to_dtype(reshape(t, {-1}), kLong));
  EMBER_CHECK(out.numel() == n, what, " must be of size batch_size");
  return out;
}

}  // namespace

Tensor ctc_loss(const Tensor& log_probs, const Tensor& targets, const Tensor& input_lengths,
                const Tensor& target_lengths, int64_t blank, Reduction reduction,
                bool zero_infinity) {
  EMBER_CHECK(log_probs.dim() == 3 || log_probs.dim() == 2,
              "ctc_loss: expected log_probs of shape "
              "(T, N, C) or (T, C); got ",
              log_probs.sizes());
  EMBER_CHECK(log_probs.dtype() == kFloat || log_probs.dtype() == kDouble,
              "\"ctc_loss_cpu\" not implemented for '", scalar_type_name(log_probs.dtype()), "'");
  bool batched = log_probs.dim() == 3;
  Tensor lp = batched ? log_probs : unsqueeze(log_probs, 1);
  int64_t T = lp.size(0), N = lp.size(1), C = lp.size(2);
  EMBER_CHECK(blank >= 0 && blank < C, "blank must be in label range");
  Tensor il = lengths_of(input_lengths, N, "input_lengths");
  Tensor tl = lengths_of(target_lengths, N, "target_lengths");
  Tensor tg = batched ? targets : unsqueeze(targets, 0);
  EMBER_CHECK(!is_floating_point(tg.dtype()), "ctc_loss: targets must be integral; got ",
              scalar_type_name(tg.dtype()));
  EMBER_CHECK(tg.dim() == 1 || tg.dim() == 2, "ctc_loss: expected targets of 1 or 2 dims; got ",
              tg.sizes());
  Tensor flat = contiguous(to_dtype(reshape(tg, {-1}), kLong));
  Tensor offsets = empty({N}, TensorOptions(kLong));
  const int64_t* ilp = il.data_ptr<int64_t>();
  const int64_t* tlp = tl.data_ptr<int64_t>();
  int64_t* op = offsets.data_ptr<int64_t>();
  int64_t pos = 0;
  for (int64_t b = 0; b < N; ++b) {
    EMBER_CHECK(ilp[b] >= 0 && ilp[b] <= T, "Expected input_lengths to have value at most ", T,
                ", but got value ", ilp[b], " (while checking arguments for ctc_loss_cpu)");
    EMBER_CHECK(tlp[b] >= 0, "ctc_loss: target_lengths must be non-negative; got ", tlp[b]);
    if (tg.dim() == 2) {
      EMBER_CHECK(tlp[b] <= tg.size(1), "Expected tensor to have size at least ", tlp[b],
                  " at dimension 1, but got size ", tg.size(1),
                  " for argument #2 'targets' "
                  "(while checking arguments for ctc_loss_cpu)");
      op[b] = b * tg.size(1);
    } else {
      op[b] = pos;
      pos += tlp[b];
      EMBER_CHECK(pos <= flat.numel(), "ctc_loss: expected targets of at least ", pos,
                  " elements (the sum of target_lengths); got ", flat.numel());
    }
    const int64_t* fp = flat.data_ptr<int64_t>() + op[b];
    for (int64_t s = 0; s < tlp[b]; ++s)
      EMBER_CHECK_INDEX(fp[s] >= 0 && fp[s] < C, "ctc_loss: target ", fp[s],
                        " is out of bounds for ", C, " classes");
  }
  auto [nll, alpha] = op::_ctc_loss.call(lp, flat, offsets, il, tl, blank, zero_infinity);
  if (reduction == Reduction::None) return batched ? nll : reshape(nll, {});
  if (reduction == Reduction::Sum) return sum(nll);
  return mean(nll / clamp(to_dtype(tl, nll.dtype()), wrap_scalar(1), {}));
}

}  // namespace ember
