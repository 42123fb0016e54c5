// Softmax family and loss function bindings (ember._C._nn). Reductions arrive as PyTorch's
// enum values (0 none, 1 mean, 2 sum); the Python wrappers parse strings and legacy arguments.
#include "common.h"

namespace ember::py {

namespace {

using OptT = std::optional<Tensor>;
using Dt = std::optional<ScalarType>;

Reduction red(int64_t r) {
  EMBER_CHECK_VALUE(r >= 0 && r <= 2, "invalid reduction enum value ", r);
  return Reduction(r);
}

}  // namespace

void bind_nn_loss(nb::module_& nn) {
  nn.def(
      "softmax", [](const Tensor& x, int64_t dim, Dt dtype) { return softmax(x, dim, dtype); },
      nb::arg("input"), nb::arg("dim"), nb::arg("dtype").none() = nb::none(),
      "softmax(input, dim, dtype=None) -> Tensor");
  nn.def(
      "log_softmax",
      [](const Tensor& x, int64_t dim, Dt dtype) { return log_softmax(x, dim, dtype); },
      nb::arg("input"), nb::arg("dim"), nb::arg("dtype").none() = nb::none(),
      "log_softmax(input, dim, dtype=None) -> Tensor");
  nn.def(
      "softmin", [](const Tensor& x, int64_t dim, Dt dtype) { return softmin(x, dim, dtype); },
      nb::arg("input"), nb::arg("dim"), nb::arg("dtype").none() = nb::none(),
      "softmin(input, dim, dtype=None) -> Tensor");

  nn.def(
      "nll_loss",
      [](const Tensor& x, const Tensor& t, OptT w, int64_t r, int64_t ii) {
        return nll_loss(x, t, w, red(r), ii);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight").none(), nb::arg("reduction"),
      nb::arg("ignore_index"), "Negative log-likelihood loss of class indices.");
  nn.def(
      "cross_entropy",
      [](const Tensor& x, const Tensor& t, OptT w, int64_t r, int64_t ii, double ls) {
        return cross_entropy(x, t, w, red(r), ii, ls);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight").none(), nb::arg("reduction"),
      nb::arg("ignore_index"), nb::arg("label_smoothing"),
      "Cross-entropy of logits against class indices or class probabilities.");
  nn.def(
      "binary_cross_entropy",
      [](const Tensor& x, const Tensor& t, OptT w, int64_t r) {
        return binary_cross_entropy(x, t, w, red(r));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight").none(), nb::arg("reduction"),
      "Binary cross-entropy of probabilities.");
  nn.def(
      "binary_cross_entropy_with_logits",
      [](const Tensor& x, const Tensor& t, OptT w, OptT pw, int64_t r) {
        return binary_cross_entropy_with_logits(x, t, w, pw, red(r));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight").none(), nb::arg("pos_weight").none(),
      nb::arg("reduction"), "Binary cross-entropy of logits.");
  using Pair = Tensor (*)(const Tensor&, const Tensor&, Reduction);
  auto pair = [&](const char* name, Pair fn, const char* doc) {
    nn.def(
        name, [fn](const Tensor& x, const Tensor& t, int64_t r) { return fn(x, t, red(r)); },
        nb::arg("input"), nb::arg("target"), nb::arg("reduction"), doc);
  };
  pair("mse_loss", &mse_loss, "Squared error loss.");
  pair("l1_loss", &l1_loss, "Absolute error loss.");
  pair("soft_margin_loss", &soft_margin_loss, "log(1 + exp(-y x)).");
  pair("multilabel_margin_loss", &multilabel_margin_loss, "Multi-label hinge loss.");
  nn.def(
      "smooth_l1_loss",
      [](const Tensor& x, const Tensor& t, int64_t r, double beta) {
        return smooth_l1_loss(x, t, red(r), beta);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("reduction"), nb::arg("beta"),
      "Smooth L1 loss.");
  nn.def(
      "huber_loss",
      [](const Tensor& x, const Tensor& t, int64_t r, double delta) {
        return huber_loss(x, t, red(r), delta);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("reduction"), nb::arg("delta"), "Huber loss.");
  nn.def(
      "kl_div",
      [](const Tensor& x, const Tensor& t, int64_t r, bool log_target) {
        return kl_div(x, t, red(r), log_target);
      },
      nb::arg("input"), nb::arg("target"), nb::arg("reduction"), nb::arg("log_target"),
      "Pointwise KL divergence.");
  nn.def(
      "cosine_embedding_loss",
      [](const Tensor& a, const Tensor& b, const Tensor& y, double m, int64_t r) {
        return cosine_embedding_loss(a, b, y, m, red(r));
      },
      nb::arg("input1"), nb::arg("input2"), nb::arg("target"), nb::arg("margin"),
      nb::arg("reduction"), "Cosine embedding loss.");
  nn.def(
      "margin_ranking_loss",
      [](const Tensor& a, const Tensor& b, const Tensor& y, double m, int64_t r) {
        return margin_ranking_loss(a, b, y, m, red(r));
      },
      nb::arg("input1"), nb::arg("input2"), nb::arg("target"), nb::arg("margin"),
      nb::arg("reduction"), "Margin ranking loss.");
  nn.def(
      "triplet_margin_loss",
      [](const Tensor& a, const Tensor& p, const Tensor& n, double margin, double norm_p,
         double eps, bool swap,
         int64_t r) { return triplet_margin_loss(a, p, n, margin, norm_p, eps, swap, red(r)); },
      nb::arg("anchor"), nb::arg("positive"), nb::arg("negative"), nb::arg("margin"), nb::arg("p"),
      nb::arg("eps"), nb::arg("swap"), nb::arg("reduction"), "Triplet margin loss.");
  nn.def(
      "hinge_embedding_loss",
      [](const Tensor& x, const Tensor& y, double m, int64_t r) {
        return hinge_embedding_loss(x, y, m, red(r));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("margin"), nb::arg("reduction"),
      "Hinge embedding loss.");
  nn.def(
      "poisson_nll_loss",
      [](const Tensor& x, const Tensor& t, bool log_input, bool full, double eps, int64_t r) {
        return poisson_nll_loss(x, t, log_input, full, eps, red(r));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("log_input"), nb::arg("full"), nb::arg("eps"),
      nb::arg("reduction"), "Poisson negative log-likelihood loss.");
  nn.def(
      "multi_margin_loss",
      [](const Tensor& x, const Tensor& t, int64_t p, double margin, OptT w, int64_t r) {
        return multi_margin_loss(x, t, p, margin, w, red(r));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("p"), nb::arg("margin"),
      nb::arg("weight").none(), nb::arg("reduction"), "Multi-class hinge loss.");
  nn.def(
      "multilabel_soft_margin_loss",
      [](const Tensor& x, const Tensor& t, OptT w, int64_t r) {
        return multilabel_soft_margin_loss(x, t, w, red(r));
      },
      nb::arg("input"), nb::arg("target"), nb::arg("weight").none(), nb::arg("reduction"),
      "Multi-label one-versus-all loss.");
  nn.def(
      "ctc_loss",
      [](const Tensor& lp, const Tensor& t, const Tensor& il, const Tensor& tl, int64_t blank,
         int64_t r,
         bool zero_infinity) { return ctc_loss(lp, t, il, tl, blank, red(r), zero_infinity); },
      nb::arg("log_probs"), nb::arg("targets"), nb::arg("input_lengths"), nb::arg("target_lengths"),
      nb::arg("blank"), nb::arg("reduction"), nb::arg("zero_infinity"),
      "Connectionist temporal classification loss.");
}

}  // namespace ember::py
