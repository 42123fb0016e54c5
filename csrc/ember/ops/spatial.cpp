// pad, im2col/col2im, interpolation and embeddings. im2col and col2im are kernels (cpu/spatial.cpp)
// and each other's derivative; the rest are composites of differentiable public ops.
#include "ember/ops/spatial.h"

#include <algorithm>
#include <cmath>

#include "ember/core/profiler.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/spatial.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

// im2col and col2im share one signature: (input, image size, kernel, dilation, padding, stride);
// im2col reads the image size from its input and ignores the argument.

DimVector pair(IntArrayRef v, const char* name, const char* op) {
  EMBER_CHECK(v.size() == 1 || v.size() == 2, op, ": expected ", name,
              " to have 1 or 2 values; got ", v);
  return v.size() == 1 ? DimVector{v[0], v[0]} : DimVector(v);
}

struct Window {
  DimVector k, d, p, s;
};

Window window(IntArrayRef k, IntArrayRef d, IntArrayRef p, IntArrayRef s, const char* op) {
  Window w{pair(k, "kernel_size", op), pair(d, "dilation", op), pair(p, "padding", op),
           pair(s, "stride", op)};
  for (size_t i = 0; i < 2; ++i) {
    EMBER_CHECK(w.k[i] > 0, op, ": expected kernel_size to be greater than zero; got ", w.k);
    EMBER_CHECK(w.d[i] > 0, op, ": expected dilation to be greater than zero; got ", w.d);
    EMBER_CHECK(w.p[i] >= 0, op, ": expected padding to be non-negative; got ", w.p);
    EMBER_CHECK(w.s[i] > 0, op, ": expected stride to be greater than zero; got ", w.s);
  }
  return w;
}

// In 128 bits: a padding, dilation or kernel near INT64_MAX must not wrap into a small,
// valid-looking count.
int64_t blocks(int64_t size, const Window& w, size_t i, const char* op) {
  using I = __int128;
  // floor division, as torch's shape checks (a negative span gives no block at any stride)
  const I span = I(size) + 2 * I(w.p[i]) - I(w.d[i]) * (w.k[i] - 1) - 1;
  I q = span / w.s[i];
  if (span % w.s[i] != 0 && span < 0) --q;
  const I n = q + 1;
  EMBER_CHECK(n <= std::numeric_limits<int64_t>::max(), op, ": expected a number of sliding ",
              "blocks that fits in int64; got size ", size, " and padding ", w.p[i]);
  return int64_t(std::max<I>(n, 0));
}

// bh * bw blocks per plane, rejecting a product that overflows.
int64_t block_count(int64_t bh, int64_t bw, const char* op) {
  int64_t n = 0;
  EMBER_CHECK(!__builtin_mul_overflow(bh, bw, &n), op, ": expected a number of sliding ",
              "blocks that fits in int64; got ", bh, " * ", bw);
  return n;
}

// Gradient of embedding rows: sums of output gradients per index, minus the padding row.
Tensor embedding_grad(const Tensor& grad, const Tensor& indices, int64_t rows, int64_t padding_idx,
                      bool scale_grad_by_freq) {
  Tensor idx = reshape(indices, {-1});
  Tensor g2 = reshape(grad, {idx.numel(), grad.size(-1)});
  if (padding_idx >= 0)
    g2 = g2 * unsqueeze(to_dtype(ne(idx, wrap_scalar(padding_idx)), g2.dtype()), 1);
  if (scale_grad_by_freq) {
    Tensor counts = index_select(bincount(idx, std::nullopt, rows), 0, idx);
    g2 = g2 / unsqueeze(to_dtype(counts, g2.dtype()), 1);
  }
  Tensor gw = zeros({rows, g2.size(1)}, TensorOptions().dtype(g2.dtype()).device(g2.device()));
  return index_add(gw, 0, idx, g2);
}
}  // namespace

EMBER_DERIVATIVE(op::im2col, "Im2ColBackward0",
                 (self, output_size, kernel_size, dilation, padding, stride),
                 col2im(grad, self_sizes.slice(2, 2), kernel_size, dilation, padding, stride));
EMBER_DERIVATIVE(op::col2im, "Col2ImBackward0",
                 (self, output_size, kernel_size, dilation, padding, stride),
                 im2col(grad, kernel_size, dilation, padding, stride));
EMBER_DERIVATIVE(op::embedding, "EmbeddingBackward0",
                 (weight, indices, padding_idx, scale_grad_by_freq),
                 embedding_grad(grad, indices, weight_sizes[0], padding_idx, scale_grad_by_freq),
                 not_differentiable());

namespace {
Tensor embedding_kernel(const Tensor& weight, const Tensor& indices, int64_t, bool) {
  DimVector shape(indices.sizes());
  shape.push_back(weight.size(1));
  return reshape(index_select(weight, 0, reshape(indices, {-1})), shape);
}
EMBER_REGISTER_KERNEL(op::embedding, CPU, embedding_kernel);

// `x` without `left` elements at the start of dim and `right` at its end.
Tensor crop(const Tensor& x, int64_t dim, int64_t left, int64_t right, int64_t n) {
  EMBER_CHECK(x.size(dim) - left - right >= 0, "pad: resulting padded dimension ", dim,
              " would be negative: size ", n, ", padding (", -left, ", ", -right, ")");
  return left || right ? narrow(x, dim, left, x.size(dim) - left - right) : x;
}

// One padded dim: positive pads are filled from the original data, then negative ones crop.
// Circular padding crops first and wraps the cropped data, as PyTorch's does.
Tensor pad_dim(const Tensor& input, int64_t dim, int64_t left, int64_t right, std::string_view mode,
               double value) {
  const int64_t crop_l = std::max<int64_t>(-left, 0), crop_r = std::max<int64_t>(-right, 0);
  const bool crop_first = mode == "circular";
  const Tensor x = crop_first ? crop(input, dim, crop_l, crop_r, input.size(dim)) : input;
  const int64_t n = x.size(dim);
  auto block = [&](int64_t len, bool at_left) -> Tensor {
    if (mode == "constant") {
      DimVector shape(x.sizes());
      shape[size_t(dim)] = len;
      return full(shape, value, TensorOptions().dtype(x.dtype()).device(x.device()));
    }
    if (mode == "reflect") return flip(narrow(x, dim, at_left ? 1 : n - 1 - len, len), {dim});
    if (mode == "replicate") {
      DimVector shape(x.sizes());
      shape[size_t(dim)] = len;
      return expand(narrow(x, dim, at_left ? 0 : n - 1, 1), shape);
    }
    return narrow(x, dim, at_left ? n - len : 0, len);  // circular
  };
  std::vector<Tensor> parts;
  if (left > 0) parts.push_back(block(left, true));
  parts.push_back(x);
  if (right > 0) parts.push_back(block(right, false));
  Tensor out = parts.size() == 1 ? x : cat(parts, dim);
  return crop_first ? out : crop(out, dim, crop_l, crop_r, input.size(dim));
}

// Source indices and weights of linear interpolation along one dim (PyTorch's
// area_pixel_compute_source_index).
void linear_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
                 Tensor& i0, Tensor& i1, Tensor& lambda) {
  i0 = empty({out}, kLong);
  i1 = empty({out}, kLong);
  lambda = empty({out}, kDouble);
  int64_t* p0 = i0.data_ptr<int64_t>();
  int64_t* p1 = i1.data_ptr<int64_t>();
  double* pl = lambda.data_ptr<double>();
  double step = align_corners ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                              : (scale && *scale > 0 ? 1.0 / *scale : double(in) / double(out));
  for (int64_t j = 0; j < out; ++j) {
    double src = align_corners ? j * step : std::max(0.0, (j + 0.5) * step - 0.5);
    int64_t lo = std::min<int64_t>(int64_t(src), in - 1);
    p0[j] = lo;
    p1[j] = std::min(lo + 1, in - 1);
    pl[j] = src - double(lo);
  }
}

// The four source indices (clamped to the edge) and weights of cubic convolution with a = -0.75
// along one dim, as PyTorch's bicubic: the source position is not clamped at 0 as linear's is.
void cubic_taps(int64_t in, int64_t out, bool align_corners, std::optional<double> scale,
                Tensor (&index)[4], Tensor (&weight)[4]) {
  constexpr double A = -0.75;
  auto near = [](double x) { return ((A + 2) * x - (A + 3)) * x * x + 1; };       // |x| <= 1
  auto far = [](double x) { return ((A * x - 5 * A) * x + 8 * A) * x - 4 * A; };  // 1 < |x| < 2
  double step = align_corners ? (out > 1 ? double(in - 1) / double(out - 1) : 0.0)
                              : (scale && *scale > 0 ? 1.0 / *scale : double(in) / double(out));
  int64_t* pi[4];
  double* pw[4];
  for (int k = 0; k < 4; ++k) {
    index[k] = empty({out}, kLong);
    weight[k] = empty({out}, kDouble);
    pi[k] = index[k].data_ptr<int64_t>();
    pw[k] = weight[k].data_ptr<double>();
  }
  for (int64_t j = 0; j < out; ++j) {
    double src = align_corners ? j * step : (j + 0.5) * step - 0.5;
    double base = std::floor(src), t = src - base;
    const double w[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
    for (int k = 0; k < 4; ++k) {
      pi[k][j] = std::clamp<int64_t>(int64_t(base) - 1 + k, 0, in - 1);
      pw[k][j] = w[k];
    }
  }
}

std::optional<double> scale_at(ArrayRef<std::optional<double>> scales, size_t i) {
  return i < scales.size() ? scales[i] : std::nullopt;
}

void check_resize(const Tensor& input, IntArrayRef output_size, const char* op) {
  const int64_t nd = int64_t(output_size.size());
  EMBER_CHECK(nd >= 1 && nd <= 3, op, ": expected 1 to 3 output sizes; got ", output_size);
  EMBER_CHECK(input.dim() == nd + 2, op, ": expected a ", nd + 2, "-D input for ", nd,
              " output sizes; got input of size ", input.sizes());
  for (size_t i = 0; i < output_size.size(); ++i) {
    EMBER_CHECK(output_size[i] > 0 && input.size(int64_t(i) + 2) > 0,
                "Input and output sizes should be greater than 0, but got input (", input.sizes(),
                ") and output (", output_size, ")");
  }
}

}  // namespace

Tensor pad(const Tensor& input, IntArrayRef pads, std::string_view mode,
           std::optional<double> value) {
  EMBER_CHECK(pads.size() % 2 == 0, "Padding length must be divisible by 2");
  const int64_t n = int64_t(pads.size()) / 2;
  EMBER_CHECK(n <= input.dim(), "Padding length should be less than or equal to two times the ",
              "input dimension but got padding length ", pads.size(), " and input of dimension ",
              input.dim());
  if (mode != "constant") {
    EMBER_CHECK_KIND(mode == "reflect" || mode == "replicate" || mode == "circular",
                     ErrorKind::NotImplemented, "Unrecognised padding mode ", mode);
    EMBER_CHECK(!value || *value == 0, "Padding mode \"", mode,
                "\" doesn't take in value argument");
    EMBER_CHECK_KIND(n >= 1 && n <= 3 && (input.dim() == n + 1 || input.dim() == n + 2),
                     ErrorKind::NotImplemented, "Padding size ", pads.size(),
                     " is not supported for ", input.dim(), "D input tensor.\n",
                     "Supported combinations for non-constant padding:\n",
                     "  - 2D or 3D input: padding size = 2 (pads last dimension)\n",
                     "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n",
                     "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)");
  }
  Tensor out = input;
  for (int64_t i = 0; i < n; ++i) {
    const int64_t dim = input.dim() - 1 - i, l = pads[size_t(2 * i)], r = pads[size_t(2 * i + 1)];
    if (mode == "reflect")
      EMBER_CHECK(l < input.size(dim) && r < input.size(dim),
                  "Argument #4: Padding size should be less than the corresponding input ",
                  "dimension, but got: padding (", l, ", ", r, ") at dimension ", dim, " of input ",
                  input.sizes());
    if (mode == "circular")
      EMBER_CHECK(l <= input.size(dim) && r <= input.size(dim),
                  "Padding value causes wrapping around more than once.");
    if (mode == "replicate")
      EMBER_CHECK(input.size(dim) > 0 || (l <= 0 && r <= 0),
                  "pad: replicate padding needs a non-empty dimension ", dim, "; got input ",
                  input.sizes());
    out = pad_dim(out, dim, l, r, mode, value.value_or(0));
  }
  return out.is_same(input) ? clone(input) : out;
}

Tensor im2col(const Tensor& input, IntArrayRef kernel_size, IntArrayRef dilation,
              IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK_KIND(input.dim() == 3 || input.dim() == 4, ErrorKind::NotImplemented,
                   "Input Error: Only 3D or 4D input Tensors are supported (got ", input.dim(),
                   "D)");
  Window w = window(kernel_size, dilation, padding, stride, "im2col");
  Tensor x = input.dim() == 3 ? unsqueeze(input, 0) : input;
  const int64_t bh = blocks(x.size(2), w, 0, "im2col"), bw = blocks(x.size(3), w, 1, "im2col");
  block_count(bh, bw, "im2col");
  EMBER_CHECK(bh >= 1 && bw >= 1, "Given input with spatial size (", x.size(2), ", ", x.size(3),
              "), kernel_size=(", w.k[0], ", ", w.k[1], "), dilation=(", w.d[0], ", ", w.d[1],
              "), padding=(", w.p[0], ", ", w.p[1], "), calculated shape of the array of ",
              "sliding blocks as (", bh, ", ", bw, "), but its components must be at least one.");
  EMBER_CHECK_KIND(is_floating_point(x.dtype()), ErrorKind::NotImplemented,
                   "\"im2col\" not implemented for '", scalar_type_name(x.dtype()), "'");
  Tensor out = op::im2col.call(x, {x.size(2), x.size(3)}, w.k, w.d, w.p, w.s);
  return input.dim() == 3 ? squeeze(out, {0}) : out;
}

Tensor col2im(const Tensor& input, IntArrayRef output_size, IntArrayRef kernel_size,
              IntArrayRef dilation, IntArrayRef padding, IntArrayRef stride) {
  EMBER_CHECK_KIND(input.dim() == 2 || input.dim() == 3, ErrorKind::NotImplemented,
                   "Input Error: Only unbatched (2D) or batched (3D) input Tensors are supported ",
                   "(got ", input.dim(), "D)");
  Window w = window(kernel_size, dilation, padding, stride, "col2im");
  DimVector size = pair(output_size, "output_size", "col2im");
  Tensor x = input.dim() == 2 ? unsqueeze(input, 0) : input;
  const int64_t kk = w.k[0] * w.k[1];
  EMBER_CHECK(x.size(1) % kk == 0, "Expected size of input's dimension 1 to be divisible by the ",
              "product of kernel_size, but got input.size(1)=", x.size(1), " and kernel_size=(",
              w.k[0], ", ", w.k[1], ")");
  const int64_t bh = blocks(size[0], w, 0, "col2im"), bw = blocks(size[1], w, 1, "col2im");
  EMBER_CHECK(bh >= 1 && bw >= 1 && x.size(2) == block_count(bh, bw, "col2im"),
              "Given output_size=(", size[0], ", ", size[1], "), kernel_size=(", w.k[0], ", ",
              w.k[1], "), dilation=(", w.d[0], ", ", w.d[1], "), padding=(", w.p[0], ", ", w.p[1],
              "), stride=(", w.s[0], ", ", w.s[1], "), expected size of input's dimension 2 to ",
              "match the calculated number of sliding blocks ", bh, " * ", bw, " = ", bh * bw,
              ", but got input.size(2)=", x.size(2), ".");
  EMBER_CHECK_KIND(is_floating_point(x.dtype()), ErrorKind::NotImplemented,
                   "\"col2im\" not implemented for '", scalar_type_name(x.dtype()), "'");
  Tensor out = op::col2im.call(x, size, w.k, w.d, w.p, w.s);
  return input.dim() == 2 ? squeeze(out, {0}) : out;
}

Tensor upsample_nearest(const Tensor& input, IntArrayRef output_size,
                        ArrayRef<std::optional<double>> scales, bool exact) {
  check_resize(input, output_size, exact ? "upsample_nearest_exact" : "upsample_nearest");
  Tensor out = input;
  for (size_t i = 0; i < output_size.size(); ++i) {
    const int64_t dim = int64_t(i) + 2, in = input.size(dim), n = output_size[i];
    std::optional<double> sc = scale_at(scales, i);
    const double step = sc && *sc > 0 ? 1.0 / *sc : double(in) / double(n);
    Tensor idx = empty({n}, kLong);
    int64_t* p = idx.data_ptr<int64_t>();
    for (int64_t j = 0; j < n; ++j) {
      // float, as PyTorch computes the source index in float for nearest modes
      float src =
          exact ? std::floor((float(j) + 0.5f) * float(step)) : std::floor(float(j) * float(step));
      p[j] = std::min<int64_t>(int64_t(src), in - 1);
    }
    out = index_select(out, dim, idx);
  }
  return out;
}

Tensor upsample_linear(const Tensor& input, IntArrayRef output_size, bool align_corners,
                       ArrayRef<std::optional<double>> scales) {
  check_resize(input, output_size, "upsample_linear");
  EMBER_CHECK_KIND(is_floating_point(input.dtype()), ErrorKind::NotImplemented,
                   "\"upsample_linear\" not implemented for '", scalar_type_name(input.dtype()),
                   "'");
  Tensor out = input;
  for (size_t i = 0; i < output_size.size(); ++i) {
    const int64_t dim = int64_t(i) + 2;
    Tensor i0, i1, lambda;
    linear_taps(input.size(dim), output_size[i], align_corners, scale_at(scales, i), i0, i1,
                lambda);
    DimVector shape(out.dim(), 1);
    shape[size_t(dim)] = output_size[i];
    Tensor l = reshape(to_dtype(lambda, input.dtype()), shape);
    Tensor a = index_select(out, dim, i0), b = index_select(out, dim, i1);
    out = a + (b - a) * l;
  }
  return out;
}

Tensor upsample_bicubic2d(const Tensor& input, IntArrayRef output_size, bool align_corners,
                          ArrayRef<std::optional<double>> scales) {
  check_resize(input, output_size, "upsample_bicubic2d");
  EMBER_CHECK(output_size.size() == 2, "upsample_bicubic2d: expected 2 output sizes; got ",
              output_size);
  EMBER_CHECK_KIND(is_floating_point(input.dtype()), ErrorKind::NotImplemented,
                   "\"upsample_bicubic2d\" not implemented for '", scalar_type_name(input.dtype()),
                   "'");
  // Separable: the 4x4 weighted window is four taps along H, then four along W.
  Tensor out = input;
  for (size_t i = 0; i < 2; ++i) {
    const int64_t dim = int64_t(i) + 2;
    Tensor index[4], weight[4];
    cubic_taps(input.size(dim), output_size[i], align_corners, scale_at(scales, i), index, weight);
    DimVector shape(out.dim(), 1);
    shape[size_t(dim)] = output_size[i];
    Tensor sum;
    for (int k = 0; k < 4; ++k) {
      Tensor term =
          index_select(out, dim, index[k]) * reshape(to_dtype(weight[k], input.dtype()), shape);
      sum = k == 0 ? term : sum + term;
    }
    out = sum;
  }
  return out;
}

Tensor embedding(const Tensor& weight, const Tensor& indices, int64_t padding_idx,
                 bool scale_grad_by_freq, bool sparse) {
  profiler::Range prof_range(profiler::RangeKind::Op, "embedding");
  (void)sparse;  // the sparse gradient is made in Python (nn.functional.embedding)
  EMBER_CHECK(weight.dim() == 2, "'weight' must be 2-D");
  EMBER_CHECK(indices.dtype() == kLong || indices.dtype() == kInt,
              "Expected tensor for argument #1 'indices' to have one of the following scalar ",
              "types: Long, Int; but got torch.", scalar_type_name(indices.dtype()),
              "Tensor instead (while checking arguments for embedding)");
  return op::embedding.call(weight, to_dtype(indices, kLong), padding_idx, scale_grad_by_freq);
}

Tensor embedding_bag(const Tensor& weight, const Tensor& indices,
                     const std::optional<Tensor>& offsets, bool scale_grad_by_freq,
                     std::string_view mode, bool sparse,
                     const std::optional<Tensor>& per_sample_weights, bool include_last_offset,
                     int64_t padding_idx) {
  EMBER_CHECK_VALUE(mode == "sum" || mode == "mean" || mode == "max", "mode has to be one of ",
                    "sum, mean or max; got ", mode);
  EMBER_CHECK_KIND(!per_sample_weights || mode == "sum", ErrorKind::NotImplemented,
                   "embedding_bag: per_sample_weights was not None. per_sample_weights is only ",
                   "supported for mode='sum' (got mode='", mode, "'). Please open a feature ",
                   "request on GitHub.");
  EMBER_CHECK_VALUE(indices.dim() == 1 || indices.dim() == 2,
                    "input has to be 1D or 2D Tensor, but got Tensor of dimension ", indices.dim());
  Tensor idx, bag;
  int64_t bags;
  if (indices.dim() == 2) {
    EMBER_CHECK_VALUE(!offsets, "if input is 2D, then offsets has to be None, as input is ",
                      "treated is a mini-batch of fixed length sequences.");
    bags = indices.size(0);
    idx = reshape(indices, {-1});
    bag = repeat_interleave(arange(bags, TensorOptions().dtype(kLong)), indices.size(1));
  } else {
    EMBER_CHECK_VALUE(offsets && offsets->dim() == 1, "offsets has to be a 1D Tensor");
    Tensor off = to_dtype(*offsets, kLong);
    bags = off.size(0) - (include_last_offset ? 1 : 0);
    EMBER_CHECK(bags >= 0, "embedding_bag: include_last_offset needs at least one offset");
    idx = indices;
    // Each position's bag: the number of offsets at or before it, minus one.
    Tensor starts = narrow(off, 0, 0, bags);
    Tensor marks = zeros({idx.size(0) + 1}, TensorOptions().dtype(kLong));
    marks = index_add(marks, 0, clamp(starts, wrap_scalar(0), wrap_scalar(idx.size(0))),
                      ones({bags}, TensorOptions().dtype(kLong)));
    bag = narrow(cumsum(marks, 0), 0, 0, idx.size(0)) - 1;
  }
  Tensor rows = embedding(weight, idx, -1, scale_grad_by_freq, sparse);
  if (per_sample_weights) rows = rows * unsqueeze(reshape(*per_sample_weights, {-1}), 1);
  // Rows outside every bag (before the first offset) and padding rows take no part.
  Tensor keep = ge(bag, wrap_scalar(0));
  if (padding_idx >= 0) keep = logical_and(keep, ne(idx, wrap_scalar(padding_idx)));
  Tensor pos = reshape(nonzero(keep), {-1});
  rows = index_select(rows, 0, pos);
  bag = index_select(bag, 0, pos);
  Tensor out = zeros({bags, weight.size(1)}, TensorOptions().dtype(weight.dtype()));
  if (mode == "max") {
    Tensor where_ = expand(unsqueeze(bag, 1), rows.sizes());
    return scatter_reduce(out, 0, where_, rows, "amax", false);
  }
  out = index_add(out, 0, bag, rows);
  if (mode == "sum") return out;
  Tensor counts = index_add(zeros({bags}, TensorOptions().dtype(weight.dtype())), 0, bag,
                            ones({bag.size(0)}, TensorOptions().dtype(weight.dtype())));
  return out / unsqueeze(clamp(counts, wrap_scalar(1), std::nullopt), 1);
}

}  // namespace ember
