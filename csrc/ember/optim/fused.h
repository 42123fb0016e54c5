#pragma once
// Fused optimizer updates shared by ember.optim (Python) and ember::optim (C++): one call per
// param group updates every parameter in place, in one pass over its elements.
//
// Note [Fused optimizer math]
// Each kernel follows torch's single-tensor (foreach=False) update step by step: every scalar
// coefficient is computed in double exactly as torch computes it in Python, then cast to the
// element's compute type (float for float32/float16/bfloat16, double for float64), and each
// elementwise op of torch's sequence is one expression here in the same order, so trajectories
// agree with torch to rounding. The kernels record no autograd history; they bump the version
// counter of every tensor they write, like an in-place op under no_grad.
#include <vector>

#include "ember/core/tensor.h"

namespace ember::optim::detail {

/// Hyper-parameters of one SGD step (torch.optim.SGD).
struct SGDConfig {
  double lr = 1e-3, momentum = 0, dampening = 0, weight_decay = 0;
  bool nesterov = false, maximize = false;
};

/// Hyper-parameters of one Adam/AdamW step; `decoupled` selects AdamW's weight decay.
struct AdamConfig {
  double lr = 1e-3, beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0;
  bool amsgrad = false, maximize = false, decoupled = false;
};

/// Hyper-parameters of one RMSprop step.
struct RMSpropConfig {
  double lr = 1e-2, alpha = 0.99, eps = 1e-8, weight_decay = 0, momentum = 0;
  bool centered = false, maximize = false;
};

/// Hyper-parameters of one Adagrad step.
struct AdagradConfig {
  double lr = 1e-2, lr_decay = 0, weight_decay = 0, eps = 1e-10;
  bool maximize = false;
};

/// SGD over params[i] with grads[i]; an undefined momentum_buffers[i] is created on this step as
/// a copy of the (decayed) gradient, as torch does. momentum_buffers is ignored when momentum == 0.
void sgd_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
              std::vector<Tensor>& momentum_buffers, const SGDConfig& cfg);

/// Adam/AdamW; `steps` are 0-d float tensors incremented here. max_exp_avg_sqs is read only
/// when amsgrad.
void adam_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
               const std::vector<Tensor>& exp_avgs, const std::vector<Tensor>& exp_avg_sqs,
               const std::vector<Tensor>& max_exp_avg_sqs, const std::vector<Tensor>& steps,
               const AdamConfig& cfg);

/// RMSprop; grad_avgs are read only when centered, momentum_buffers only when momentum > 0.
void rmsprop_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& square_avgs, const std::vector<Tensor>& grad_avgs,
                  const std::vector<Tensor>& momentum_buffers, const std::vector<Tensor>& steps,
                  const RMSpropConfig& cfg);

/// Adagrad; `sums` are the running sums of squared gradients.
void adagrad_step(const std::vector<Tensor>& params, const std::vector<Tensor>& grads,
                  const std::vector<Tensor>& sums, const std::vector<Tensor>& steps,
                  const AdagradConfig& cfg);

}  // namespace ember::optim::detail
