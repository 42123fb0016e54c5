// Convolution, pooling, padding, interpolation, fold/unfold and embedding bindings (ember._C._nn).
// Python wrappers (ember/nn/functional/_spatial.py) turn int-or-tuple arguments into lists.
#include <nanobind/stl/array.h>
#include <array>
#include "common.h"
#include "ember/cpu/batch_norm_relu_pool.h"
#include "ember/ops/conv3d.h"
#include "ember/schema/normalization.h"
#include "ember/schema/pool.h"

namespace ember::py {

namespace {

using Ints = std::vector<int64_t>;
using OptTensor = std::optional<Tensor>;

}  // namespace

void bind_nn_spatial(nb::module_& nn) {
  // Backward kernels for AOT autograd's backward graphs (ember/_functorch/derivatives.py).
  nn.def(
      "convolution_backward",
      [](const Tensor& g, const Tensor& x, const Tensor& w, Ints s, Ints p, Ints d, int64_t groups,
         std::array<bool, 3> mask) {
        auto [gx, gw, gb] = x.dim() == 5 ? conv3d_backward(g, x, w, s, p, d, groups, mask)
                                         : convolution_backward(g, x, w, s, p, d, groups, mask);
        auto opt = [](const Tensor& t) { return t.defined() ? OptTensor(t) : std::nullopt; };
        return std::make_tuple(opt(gx), opt(gw), opt(gb));
      },
      nb::arg("grad_output"), nb::arg("input"), nb::arg("weight"), nb::arg("stride"),
      nb::arg("padding"), nb::arg("dilation"), nb::arg("groups"), nb::arg("output_mask"),
      "Gradients (input, weight, bias) of a batched conv2d or conv3d; None where output_mask is "
      "false.");
  nn.def(
      "max_pool2d_backward",
      [](const Tensor& g, const Tensor& idx, Ints size) {
        return op::max_pool2d_backward.call(g, idx, size);
      },
      nb::arg("grad_output"), nb::arg("indices"), nb::arg("input_size"),
      "The input gradient of max_pool2d from its argmax indices.");
  nn.def(
      "native_batch_norm",
      [](const Tensor& x, OptTensor w, OptTensor b, OptTensor rm, OptTensor rv, bool training,
         double momentum,
         double eps) { return native_batch_norm(x, w, b, rm, rv, training, momentum, eps); },
      nb::arg("input"), nb::arg("weight").none(), nb::arg("bias").none(),
      nb::arg("running_mean").none(), nb::arg("running_var").none(), nb::arg("training"),
      nb::arg("momentum"), nb::arg("eps"),
      "(output, mean, inverse std) of batch_norm (updates the running statistics in training).");
  nn.def(
      "native_batch_norm_backward",
      [](const Tensor& g, const Tensor& x, OptTensor w, const Tensor& mean, const Tensor& invstd,
         bool train) {
        auto [gx, gw, gb] = op::native_batch_norm_backward.call(g, x, w, mean, invstd, train);
        auto opt = [](const Tensor& t) { return t.defined() ? OptTensor(t) : std::nullopt; };
        return std::make_tuple(opt(gx), opt(gw), opt(gb));
      },
      nb::arg("grad_out"), nb::arg("input"), nb::arg("weight").none(), nb::arg("save_mean"),
      nb::arg("save_invstd"), nb::arg("train"),
      "Gradients (input, weight, bias) of batch_norm from its saved statistics.");
  // Note [Fused BatchNorm, ReLU and max-pool] (cpu/batch_norm_relu_pool.cpp); called by
  // nn.Sequential's fused block (ember/nn/modules/_fused_block.py) only.
  nn.def("_batch_norm_relu_max_pool2x2", &cpu::batch_norm_relu_max_pool2x2, nb::arg("input"),
         nb::arg("weight").none(), nb::arg("bias").none(), nb::arg("running_mean").none(),
         nb::arg("running_var").none(), nb::arg("momentum"), nb::arg("eps"),
         "(pooled output, window slots, mean, inverse std) of max_pool2d(relu(batch_norm(input, "
         "training=True)), 2).");
  nn.def("_batch_norm_relu_max_pool2x2_backward", &cpu::batch_norm_relu_max_pool2x2_backward,
         nb::arg("grad_out"), nb::arg("input"), nb::arg("slots"), nb::arg("weight").none(),
         nb::arg("save_mean"), nb::arg("save_invstd"),
         "Gradients (input, weight, bias) of _batch_norm_relu_max_pool2x2.");
  nn.def(
      "conv1d",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, Ints p, Ints d, int64_t g) {
        return conv1d(x, w, b, s, p, d, g);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("dilation"), nb::arg("groups"), "1-d convolution.");
  nn.def(
      "conv1d_mode",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, const std::string& p, Ints d,
         int64_t g) { return conv1d(x, w, b, s, p, d, g); },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("dilation"), nb::arg("groups"),
      "1-d convolution with padding 'same' or 'valid'.");
  nn.def(
      "conv2d",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, Ints p, Ints d, int64_t g) {
        return conv2d(x, w, b, s, p, d, g);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("dilation"), nb::arg("groups"), "2-d convolution.");
  nn.def(
      "conv2d_mode",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, const std::string& p, Ints d,
         int64_t g) { return conv2d(x, w, b, s, p, d, g); },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("dilation"), nb::arg("groups"),
      "2-d convolution with padding 'same' or 'valid'.");
  nn.def(
      "conv3d",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, Ints p, Ints d, int64_t g) {
        return conv3d(x, w, b, s, p, d, g);
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("dilation"), nb::arg("groups"),
      "3-d convolution of float32 or float64 tensors.");
  nn.def(
      "conv_transpose1d",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, Ints p, Ints op, int64_t g,
         Ints d) { return conv_transpose1d(x, w, b, s, p, op, g, d); },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("output_padding"), nb::arg("groups"), nb::arg("dilation"),
      "Transposed 1-d convolution.");
  nn.def(
      "conv_transpose2d",
      [](const Tensor& x, const Tensor& w, OptTensor b, Ints s, Ints p, Ints op, int64_t g,
         Ints d) { return conv_transpose2d(x, w, b, s, p, op, g, d); },
      nb::arg("input"), nb::arg("weight"), nb::arg("bias").none(), nb::arg("stride"),
      nb::arg("padding"), nb::arg("output_padding"), nb::arg("groups"), nb::arg("dilation"),
      "Transposed 2-d convolution.");

  nn.def(
      "max_pool1d_with_indices",
      [](const Tensor& x, Ints k, Ints s, Ints p, Ints d, bool c) {
        return max_pool1d_with_indices(x, k, s, p, d, c);
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("ceil_mode"), "max_pool1d and the argmax positions.");
  nn.def(
      "max_pool2d_with_indices",
      [](const Tensor& x, Ints k, Ints s, Ints p, Ints d, bool c) {
        return max_pool2d_with_indices(x, k, s, p, d, c);
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("ceil_mode"), "max_pool2d and the flat argmax positions.");
  nn.def(
      "avg_pool1d",
      [](const Tensor& x, Ints k, Ints s, Ints p, bool c, bool cip) {
        return avg_pool1d(x, k, s, p, c, cip);
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("ceil_mode"), nb::arg("count_include_pad"), "1-d average pooling.");
  nn.def(
      "avg_pool2d",
      [](const Tensor& x, Ints k, Ints s, Ints p, bool c, bool cip, std::optional<int64_t> div) {
        return avg_pool2d(x, k, s, p, c, cip, div);
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("ceil_mode"), nb::arg("count_include_pad"), nb::arg("divisor_override").none(),
      "2-d average pooling.");
  nn.def(
      "adaptive_avg_pool1d", [](const Tensor& x, Ints s) { return adaptive_avg_pool1d(x, s); },
      nb::arg("input"), nb::arg("output_size"), "1-d adaptive average pooling.");
  nn.def(
      "adaptive_avg_pool2d", [](const Tensor& x, Ints s) { return adaptive_avg_pool2d(x, s); },
      nb::arg("input"), nb::arg("output_size"), "2-d adaptive average pooling.");
  nn.def(
      "adaptive_max_pool1d", [](const Tensor& x, Ints s) { return adaptive_max_pool1d(x, s); },
      nb::arg("input"), nb::arg("output_size"),
      "1-d adaptive max pooling and the argmax positions.");
  nn.def(
      "adaptive_max_pool2d", [](const Tensor& x, Ints s) { return adaptive_max_pool2d(x, s); },
      nb::arg("input"), nb::arg("output_size"),
      "2-d adaptive max pooling and the flat argmax positions.");

  nn.def(
      "pad",
      [](const Tensor& x, Ints p, const std::string& mode, std::optional<double> v) {
        return pad(x, p, mode, v);
      },
      nb::arg("input"), nb::arg("pad"), nb::arg("mode"), nb::arg("value").none(),
      "Constant, reflect, replicate or circular padding.");
  nn.def(
      "im2col",
      [](const Tensor& x, Ints k, Ints d, Ints p, Ints s) { return im2col(x, k, d, p, s); },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("dilation"), nb::arg("padding"),
      nb::arg("stride"), "Sliding blocks as columns (F.unfold).");
  nn.def(
      "col2im",
      [](const Tensor& x, Ints size, Ints k, Ints d, Ints p, Ints s) {
        return col2im(x, size, k, d, p, s);
      },
      nb::arg("input"), nb::arg("output_size"), nb::arg("kernel_size"), nb::arg("dilation"),
      nb::arg("padding"), nb::arg("stride"), "Columns summed back into an image (F.fold).");
  nn.def(
      "upsample_nearest",
      [](const Tensor& x, Ints size, std::vector<std::optional<double>> sc, bool exact) {
        return upsample_nearest(x, size, sc, exact);
      },
      nb::arg("input"), nb::arg("output_size"), nb::arg("scale_factors"), nb::arg("exact"),
      "Nearest or nearest-exact resize of the trailing 1 to 3 dims.");
  nn.def(
      "upsample_linear",
      [](const Tensor& x, Ints size, bool align, std::vector<std::optional<double>> sc) {
        return upsample_linear(x, size, align, sc);
      },
      nb::arg("input"), nb::arg("output_size"), nb::arg("align_corners"), nb::arg("scale_factors"),
      "Linear, bilinear or trilinear resize of the trailing 1 to 3 dims.");
  nn.def(
      "upsample_bicubic2d",
      [](const Tensor& x, Ints size, bool align, std::vector<std::optional<double>> sc) {
        return upsample_bicubic2d(x, size, align, sc);
      },
      nb::arg("input"), nb::arg("output_size"), nb::arg("align_corners"), nb::arg("scale_factors"),
      "Bicubic resize of the last two dims.");
  nn.def(
      "embedding",
      [](const Tensor& w, const Tensor& idx, int64_t pad, bool freq, bool sparse) {
        return embedding(w, idx, pad, freq, sparse);
      },
      nb::arg("weight"), nb::arg("indices"), nb::arg("padding_idx"), nb::arg("scale_grad_by_freq"),
      nb::arg("sparse"), "Rows of weight picked by indices.");
  nn.def(
      "embedding_bag",
      [](const Tensor& w, const Tensor& idx, OptTensor off, bool freq, const std::string& mode,
         bool sparse, OptTensor psw, bool last,
         int64_t pad) { return embedding_bag(w, idx, off, freq, mode, sparse, psw, last, pad); },
      nb::arg("weight"), nb::arg("indices"), nb::arg("offsets").none(),
      nb::arg("scale_grad_by_freq"), nb::arg("mode"), nb::arg("sparse"),
      nb::arg("per_sample_weights").none(), nb::arg("include_last_offset"), nb::arg("padding_idx"),
      "Sums, means or maxima of bags of embedding rows.");
}

}  // namespace ember::py
