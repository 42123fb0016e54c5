// Fused optimizer update bindings (ember._C._optim): one call per param group.
#include "common.h"
#include "ember/dispatch/profile_range.h"
#include "ember/optim/fused.h"

namespace ember::py {

namespace od = ember::optim::detail;
using TensorVec = std::vector<Tensor>;
// Each fused update is one op range under torch's name for its fused kernel (Note [Profiler rows]).
constexpr std::nullopt_t kNone = std::nullopt;

void bind_optim(nb::module_& optim) {
  optim.def(
      "sgd",
      [](const TensorVec& params, const TensorVec& grads, nb::list momentum_buffers, double lr,
         double momentum, double dampening, double weight_decay, bool nesterov, bool maximize) {
        // None entries are buffers torch creates on this step; the updated list is returned.
        TensorVec bufs;
        for (nb::handle h : momentum_buffers)
          bufs.push_back(h.is_none() ? Tensor() : nb::cast<Tensor>(h));
        {
          nb::gil_scoped_release release;
          profiler::OpRange range("_fused_sgd_", params, grads, bufs, weight_decay, momentum, lr,
                                  dampening, nesterov, maximize, false, kNone, kNone);
          od::sgd_step(params, grads, bufs,
                       {lr, momentum, dampening, weight_decay, nesterov, maximize});
        }
        nb::list out;
        for (const Tensor& b : bufs) out.append(b.defined() ? nb::cast(b) : nb::none());
        return out;
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("momentum_buffers"), nb::arg("lr"),
      nb::arg("momentum"), nb::arg("dampening"), nb::arg("weight_decay"), nb::arg("nesterov"),
      nb::arg("maximize"),
      "SGD step over a param group in place; returns the momentum buffers (created where None).");
  optim.def(
      "adam",
      [](const TensorVec& params, const TensorVec& grads, const TensorVec& exp_avgs,
         const TensorVec& exp_avg_sqs, const TensorVec& max_exp_avg_sqs, const TensorVec& steps,
         double lr, double beta1, double beta2, double eps, double weight_decay, bool amsgrad,
         bool maximize, bool decoupled_weight_decay) {
        nb::gil_scoped_release release;
        profiler::OpRange range(decoupled_weight_decay ? "_fused_adamw_" : "_fused_adam_", params,
                                grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps, lr, beta1,
                                beta2, weight_decay, eps, amsgrad, maximize, kNone, kNone);
        od::adam_step(
            params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, steps,
            {lr, beta1, beta2, eps, weight_decay, amsgrad, maximize, decoupled_weight_decay});
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("exp_avgs"), nb::arg("exp_avg_sqs"),
      nb::arg("max_exp_avg_sqs"), nb::arg("state_steps"), nb::arg("lr"), nb::arg("beta1"),
      nb::arg("beta2"), nb::arg("eps"), nb::arg("weight_decay"), nb::arg("amsgrad"),
      nb::arg("maximize"), nb::arg("decoupled_weight_decay"),
      "Adam/AdamW step over a param group in place (state tensors updated in place).");
  optim.def(
      "rmsprop",
      [](const TensorVec& params, const TensorVec& grads, const TensorVec& square_avgs,
         const TensorVec& grad_avgs, const TensorVec& momentum_buffers, const TensorVec& steps,
         double lr, double alpha, double eps, double weight_decay, double momentum, bool centered,
         bool maximize) {
        nb::gil_scoped_release release;
        profiler::OpRange range("_fused_rmsprop_", params, grads, square_avgs, grad_avgs,
                                momentum_buffers, steps, lr, alpha, eps, weight_decay, momentum,
                                centered, maximize);
        od::rmsprop_step(params, grads, square_avgs, grad_avgs, momentum_buffers, steps,
                         {lr, alpha, eps, weight_decay, momentum, centered, maximize});
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("square_avgs"), nb::arg("grad_avgs"),
      nb::arg("momentum_buffers"), nb::arg("state_steps"), nb::arg("lr"), nb::arg("alpha"),
      nb::arg("eps"), nb::arg("weight_decay"), nb::arg("momentum"), nb::arg("centered"),
      nb::arg("maximize"), "RMSprop step over a param group in place.");
  optim.def(
      "adagrad",
      [](const TensorVec& params, const TensorVec& grads, const TensorVec& sums,
         const TensorVec& steps, double lr, double lr_decay, double weight_decay, double eps,
         bool maximize) {
        nb::gil_scoped_release release;
        profiler::OpRange range("_fused_adagrad_", params, grads, sums, steps, lr, lr_decay,
                                weight_decay, eps, maximize, kNone, kNone);
        od::adagrad_step(params, grads, sums, steps, {lr, lr_decay, weight_decay, eps, maximize});
      },
      nb::arg("params"), nb::arg("grads"), nb::arg("state_sums"), nb::arg("state_steps"),
      nb::arg("lr"), nb::arg("lr_decay"), nb::arg("weight_decay"), nb::arg("eps"),
      nb::arg("maximize"), "Adagrad step over a param group in place.");
}

}  // namespace ember::py
