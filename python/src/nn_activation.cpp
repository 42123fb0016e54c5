// Activation, normalization, dropout, linear and distance bindings (ember._C._nn). The Python
// wrappers in ember/nn/functional/_activation.py add torch's signatures (inplace=, defaults).
#include <nanobind/stl/string_view.h>

#include "common.h"

namespace ember::py {

namespace {
using OptT = std::optional<Tensor>;
}  // namespace

void bind_nn_activation(nb::module_& nn) {
  auto x = nb::arg("input");
  nn.def(
      "gelu", [](const Tensor& t, std::string_view a) { return gelu(t, a); }, x,
      nb::arg("approximate") = "none", "x * Phi(x) (exact, or the tanh approximation).");
  nn.def(
      "silu", [](const Tensor& t) { return silu(t); }, x, "x * sigmoid(x).");
  nn.def("silu_", inplace([](Tensor& t) { silu_(t); }), x,
         "In-place form of silu: overwrites input and returns it.");
  nn.def(
      "mish", [](const Tensor& t) { return mish(t); }, x, "x * tanh(softplus(x)).");
  nn.def("mish_", inplace([](Tensor& t) { mish_(t); }), x,
         "In-place form of mish: overwrites input and returns it.");
  nn.def(
      "leaky_relu", [](const Tensor& t, Scalar s) { return leaky_relu(t, s); }, x,
      nb::arg("negative_slope") = 0.01, "max(0, x) + negative_slope * min(0, x).");
  nn.def("leaky_relu_", inplace([](Tensor& t, Scalar s) { leaky_relu_(t, s); }), x,
         nb::arg("negative_slope") = 0.01,
         "In-place form of leaky_relu: overwrites input and returns it.");
  nn.def(
      "elu", [](const Tensor& t, Scalar a, Scalar s, Scalar is) { return elu(t, a, s, is); }, x,
      nb::arg("alpha") = 1.0, nb::arg("scale") = 1.0, nb::arg("input_scale") = 1.0,
      "Exponential linear unit.");
  nn.def("elu_", inplace([](Tensor& t, Scalar a, Scalar s, Scalar is) { elu_(t, a, s, is); }), x,
         nb::arg("alpha") = 1.0, nb::arg("scale") = 1.0, nb::arg("input_scale") = 1.0,
         "In-place form of elu: overwrites input and returns it.");
  nn.def(
      "selu", [](const Tensor& t) { return selu(t); }, x, "Scaled exponential linear unit.");
  nn.def("selu_", inplace([](Tensor& t) { selu_(t); }), x,
         "In-place form of selu: overwrites input and returns it.");
  nn.def(
      "celu", [](const Tensor& t, Scalar a) { return celu(t, a); }, x, nb::arg("alpha") = 1.0,
      "Continuously differentiable exponential linear unit.");
  nn.def("celu_", inplace([](Tensor& t, Scalar a) { celu_(t, a); }), x, nb::arg("alpha") = 1.0,
         "In-place form of celu: overwrites input and returns it.");
  nn.def(
      "softplus", [](const Tensor& t, Scalar b, Scalar th) { return softplus(t, b, th); }, x,
      nb::arg("beta") = 1, nb::arg("threshold") = 20, "log(1 + exp(beta x)) / beta.");
  nn.def(
      "hardtanh", [](const Tensor& t, Scalar lo, Scalar hi) { return hardtanh(t, lo, hi); }, x,
      nb::arg("min_val") = -1, nb::arg("max_val") = 1, "Clamps into [min_val, max_val].");
  nn.def("hardtanh_", inplace([](Tensor& t, Scalar lo, Scalar hi) { hardtanh_(t, lo, hi); }), x,
         nb::arg("min_val") = -1, nb::arg("max_val") = 1,
         "In-place form of hardtanh: overwrites input and returns it.");
  nn.def(
      "relu6", [](const Tensor& t) { return relu6(t); }, x, "min(max(0, x), 6).");
  nn.def("relu6_", inplace([](Tensor& t) { relu6_(t); }), x,
         "In-place form of relu6: overwrites input and returns it.");
  nn.def(
      "hardsigmoid", [](const Tensor& t) { return hardsigmoid(t); }, x, "relu6(x + 3) / 6.");
  nn.def("hardsigmoid_", inplace([](Tensor& t) { hardsigmoid_(t); }), x,
         "In-place form of hardsigmoid: overwrites input and returns it.");
  nn.def(
      "hardswish", [](const Tensor& t) { return hardswish(t); }, x, "x * relu6(x + 3) / 6.");
  nn.def("hardswish_", inplace([](Tensor& t) { hardswish_(t); }), x,
         "In-place form of hardswish: overwrites input and returns it.");
  nn.def(
      "softsign", [](const Tensor& t) { return softsign(t); }, x, "x / (1 + |x|).");
  nn.def(
      "threshold", [](const Tensor& t, Scalar th, Scalar v) { return threshold(t, th, v); }, x,
      nb::arg("threshold"), nb::arg("value"), "x > threshold ? x : value.");
  nn.def("threshold_", inplace([](Tensor& t, Scalar th, Scalar v) { threshold_(t, th, v); }), x,
         nb::arg("threshold"), nb::arg("value"),
         "In-place form of threshold: overwrites input and returns it.");
  nn.def(
      "prelu", [](const Tensor& t, const Tensor& w) { return prelu(t, w); }, x, nb::arg("weight"),
      "max(0, x) + weight * min(0, x) (weight per channel).");
  nn.def(
      "log_sigmoid", [](const Tensor& t) { return logsigmoid(t); }, x, "log(sigmoid(x)).");
  nn.def(
      "tanhshrink", [](const Tensor& t) { return tanhshrink(t); }, x, "x - tanh(x).");
  nn.def(
      "softshrink", [](const Tensor& t, Scalar l) { return softshrink(t, l); }, x,
      nb::arg("lambd") = 0.5, "Soft shrinkage.");
  nn.def(
      "hardshrink", [](const Tensor& t, Scalar l) { return hardshrink(t, l); }, x,
      nb::arg("lambd") = 0.5, "Hard shrinkage.");
  nn.def(
      "glu", [](const Tensor& t, int64_t d) { return glu(t, d); }, x, nb::arg("dim") = -1,
      "Gated linear unit: a * sigmoid(b) for the halves of input along dim.");

  nn.def(
      "batch_norm",
      [](const Tensor& t, const OptT& w, const OptT& b, const OptT& rm, const OptT& rv,
         bool training, double momentum,
         double eps) { return batch_norm(t, w, b, rm, rv, training, momentum, eps); },
      x, nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("running_mean").none(),
      nb::arg("running_var").none(), nb::arg("training"), nb::arg("momentum"), nb::arg("eps"),
      "Batch normalization (updates the running statistics in training).");
  nn.def(
      "layer_norm",
      [](const Tensor& t, std::vector<int64_t> shape, const OptT& w, const OptT& b, double eps) {
        return layer_norm(t, shape, w, b, eps);
      },
      x, nb::arg("normalized_shape"), nb::arg("weight").none() = nb::none(),
      nb::arg("bias").none() = nb::none(), nb::arg("eps") = 1e-5, "Layer normalization.");
  nn.def(
      "group_norm",
      [](const Tensor& t, int64_t g, const OptT& w, const OptT& b, double eps) {
        return group_norm(t, g, w, b, eps);
      },
      x, nb::arg("num_groups"), nb::arg("weight").none() = nb::none(),
      nb::arg("bias").none() = nb::none(), nb::arg("eps") = 1e-5, "Group normalization.");
  nn.def(
      "instance_norm",
      [](const Tensor& t, const OptT& w, const OptT& b, const OptT& rm, const OptT& rv,
         bool use_input_stats, double momentum,
         double eps) { return instance_norm(t, w, b, rm, rv, use_input_stats, momentum, eps); },
      x, nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("running_mean").none(),
      nb::arg("running_var").none(), nb::arg("use_input_stats"), nb::arg("momentum"),
      nb::arg("eps"), "Instance normalization.");

  nn.def(
      "linear", [](const Tensor& t, const Tensor& w, const OptT& b) { return linear(t, w, b); }, x,
      nb::arg("weight"), nb::arg("bias").none() = nb::none(), "input @ weight.T + bias.");
  nn.def(
      "rnn_layer",
      [](const Tensor& input, const Tensor& hx, const OptT& cx, const Tensor& w_ih,
         const Tensor& w_hh, const OptT& b_ih, const OptT& b_hh, const std::string& mode,
         bool reverse) {
        auto [out, h_n, c_n] =
            rnn_layer(input, hx, cx, w_ih, w_hh, b_ih, b_hh, rnn_mode(mode), reverse);
        return nb::make_tuple(out, h_n, c_n.defined() ? nb::cast(c_n) : nb::none());
      },
      nb::arg("input"), nb::arg("hx"), nb::arg("cx").none(), nb::arg("w_ih"), nb::arg("w_hh"),
      nb::arg("b_ih").none(), nb::arg("b_hh").none(), nb::arg("mode"), nb::arg("reverse"),
      "One recurrent layer direction over a (T, B, I) sequence: (output, h_n, c_n).");
  nn.def(
      "bilinear",
      [](const Tensor& a, const Tensor& b, const Tensor& w, const OptT& bias) {
        return bilinear(a, b, w, bias);
      },
      nb::arg("input1"), nb::arg("input2"), nb::arg("weight"), nb::arg("bias").none() = nb::none(),
      "input1^T weight_k input2 + bias_k.");

  // (name, out-of-place, in-place) of the dropout family, all (input, p, train).
  using Drop = Tensor (*)(const Tensor&, double, bool);
  using DropInplace = Tensor& (*)(Tensor&, double, bool);
  struct DropoutFn {
    const char* name;
    Drop f;
    DropInplace f_;
  };
  for (auto [name, f, f_] :
       {DropoutFn{"dropout", &dropout, &dropout_},
        DropoutFn{"feature_dropout", &feature_dropout, &feature_dropout_},
        DropoutFn{"alpha_dropout", &alpha_dropout, &alpha_dropout_},
        DropoutFn{"feature_alpha_dropout", &feature_alpha_dropout, &feature_alpha_dropout_}}) {
    nn.def(name, f, x, nb::arg("p"), nb::arg("train"),
           doc(std::string(name) + "(input, p, train) -> Tensor",
               "Zeroes elements (or whole channels, for the feature_ forms) with probability p "
               "while training, rescaling the rest; the alpha_ forms keep SELU statistics."));
    nn.def((std::string(name) + "_").c_str(),
           [f_](nb::handle self, double p, bool train) {
             f_(nb::cast<Tensor&>(self), p, train);
             return nb::borrow(self);
           },
           x, nb::arg("p"), nb::arg("train"),
           doc(std::string(name) + "_(input, p, train) -> Tensor",
               std::string("In-place form of ") + name + ": overwrites input and returns it."));
  }

  nn.def(
      "one_hot", [](const Tensor& t, int64_t n) { return one_hot(t, n); }, nb::arg("tensor"),
      nb::arg("num_classes") = -1, "int64 one-hot encoding with a new last dim.");
  nn.def(
      "normalize",
      [](const Tensor& t, double p, int64_t dim, double eps) { return normalize(t, p, dim, eps); },
      x, nb::arg("p") = 2.0, nb::arg("dim") = 1, nb::arg("eps") = 1e-12,
      "input / max(||input||_p, eps) along dim.");
  nn.def(
      "cosine_similarity",
      [](const Tensor& a, const Tensor& b, int64_t dim, double eps) {
        return cosine_similarity(a, b, dim, eps);
      },
      nb::arg("x1"), nb::arg("x2"), nb::arg("dim") = 1, nb::arg("eps") = 1e-8,
      "Cosine similarity along dim.");
  nn.def(
      "pairwise_distance",
      [](const Tensor& a, const Tensor& b, double p, double eps, bool keepdim) {
        return pairwise_distance(a, b, p, eps, keepdim);
      },
      nb::arg("x1"), nb::arg("x2"), nb::arg("p") = 2.0, nb::arg("eps") = 1e-6,
      nb::arg("keepdim") = false, "p-norm of x1 - x2 + eps along the last dim.");
}

}  // namespace ember::py
