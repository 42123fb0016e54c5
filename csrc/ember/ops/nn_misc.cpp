// Composites of torch.nn.functional: linear maps, the dropout family, one_hot, distances.
// All are built from public ops, so autograd needs nothing more.
#include "ember/ops/nn_misc.h"

#include <cmath>

#include "ember/core/profiler.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/autocast.h"
#include "ember/ops/ops.h"

namespace ember {

namespace {
// Records the input shapes of a composite op's own range, as the dispatcher records its ops'.
template <class... Args>
void profile_inputs(const profiler::Range& range, const Args&... args) {
  if (range.handle() >= 0 && profiler::records_shapes()) [[unlikely]]
    detail::profile_inputs(range.handle(), args...);
}
}  // namespace

Tensor linear(const Tensor& input, const Tensor& weight, const std::optional<Tensor>& bias) {
  if (autocast::is_active()) [[unlikely]]  // Note [Autocast]: the weight's cast is cached
    return autocast::run(
        autocast::CastPolicy::lower_precision_fp,
        [](const Tensor& x, const Tensor& w, const std::optional<Tensor>& b) {
          return linear(x, w, b);
        },
        input, weight, bias);
  profiler::Range prof_range(profiler::RangeKind::Op, "linear");
  profile_inputs(prof_range, input, weight, bias);
  if (input.dim() == 2 && bias && bias->defined()) return addmm(*bias, input, t(weight));
  // Leading dims of a contiguous input fold into one GEMM whose bias is added inside it; a
  // vector is one row (torch's view, addmm, view: its result prints as ViewBackward0).
  if ((input.dim() > 2 || input.dim() == 1) && bias && bias->defined() && input.is_contiguous() &&
      weight.dim() == 2 && input.numel() > 0) {
    DimVector shape(input.sizes());
    shape.back() = weight.size(0);
    Tensor flat = view(input, {-1, input.size(-1)});  // torch's order: view, t, addmm, view
    return view(addmm(*bias, flat, t(weight)), shape);
  }
  Tensor out = matmul(input, t(weight));
  return bias && bias->defined() ? out + *bias : out;
}

Tensor bilinear(const Tensor& input1, const Tensor& input2, const Tensor& weight,
                const std::optional<Tensor>& bias) {
  EMBER_CHECK(input1.dim() == input2.dim(), "bilinear(): input dimensions do not match: got ",
              input1.dim(), " and ", input2.dim());
  EMBER_CHECK(input1.dim() >= 1, "bilinear(): expected inputs with at least 1 dim");
  for (int64_t d = 0; d + 1 < input1.dim(); ++d)
    EMBER_CHECK(input1.size(d) == input2.size(d),
                "bilinear(): input batch dimensions do not match: got ", input1.size(d), " and ",
                input2.size(d));
  EMBER_CHECK(weight.dim() == 3, "bilinear(): weight must be 3-dimensional; got ", weight.dim());
  int64_t in1 = input1.size(-1), in2 = input2.size(-1), nout = weight.size(0);
  EMBER_CHECK(in1 == weight.size(1), "bilinear(): input1 size does not match weight size: got ",
              in1, " but expected ", weight.size(1));
  EMBER_CHECK(in2 == weight.size(2), "bilinear(): input2 size does not match weight size: got ",
              in2, " but expected ", weight.size(2));
  if (bias && bias->defined())
    EMBER_CHECK(bias->dim() == 1 && bias->size(0) == nout,
                "bilinear(): bias size does not match weight size: got ",
                bias->dim() == 0 ? 1 : bias->size(-1), " but expected ", nout);
  DimVector lead(input1.sizes().slice(0, size_t(input1.dim() - 1)));
  int64_t rows = 1;
  for (int64_t s : lead) rows *= s;
  // (B, in1) @ (in1, out * in2) -> (B, out, in2), then contract in2 with input2.
  Tensor w = reshape(permute(weight, {1, 0, 2}), {in1, nout * in2});
  Tensor tmp = reshape(mm(reshape(input1, {rows, in1}), w), {rows, nout, in2});
  Tensor out = sum(tmp * unsqueeze(reshape(input2, {rows, in2}), 1), {2});
  if (bias && bias->defined()) out = out + *bias;
  lead.push_back(nout);
  return reshape(out, lead);
}

namespace {

void check_p(double p) {
  EMBER_CHECK(p >= 0 && p <= 1, "dropout probability has to be between 0 and 1, but got ", p);
}

// Note [Dropout noise]: the mask is drawn with bernoulli_ from the default generator, so
// ember.manual_seed fixes it; feature variants draw one value per (sample, channel).
Tensor noise_like(const Tensor& input, bool feature) {
  if (!feature) return empty(input.sizes(), TensorOptions(input.dtype()).device(input.device()));
  EMBER_CHECK(input.dim() >= 2, "Feature dropout requires at least 2 dimensions in the input");
  DimVector shape(size_t(input.dim()), 1);
  shape[0] = input.size(0);
  shape[1] = input.size(1);
  return empty(shape, TensorOptions(input.dtype()).device(input.device()));
}

template <bool Inplace>
Tensor mul_maybe_inplace(Tensor& input, const Tensor& noise) {
  if constexpr (Inplace) return mul_(input, noise);
  else return input * noise;
}

template <bool Inplace>
Tensor dropout_impl(Tensor& input, double p, bool train, bool feature, bool alpha) {
  check_p(p);
  if (p == 0 || !train || input.numel() == 0) return input;
  if (p == 1) return mul_maybe_inplace<Inplace>(input, zeros({}, TensorOptions(input.dtype())));
  Tensor noise = noise_like(input, feature);
  {
    NoGradGuard no_grad;
    bernoulli_(noise, 1 - p);
  }
  if (!alpha) return mul_maybe_inplace<Inplace>(input, noise / (1 - p));
  // Keeps mean 0 and variance 1 of selu activations: dropped units go to selu's negative
  // saturation value, then an affine map restores the moments.
  constexpr double kAlpha = 1.7580993408473766;
  const double a = 1 / std::sqrt((kAlpha * kAlpha * p + 1) * (1 - p));
  Tensor b = (noise - 1) * (kAlpha * a) + kAlpha * a * p;
  Tensor out = mul_maybe_inplace<Inplace>(input, noise * a);
  if constexpr (Inplace) return add_(input, b);
  else return out + b;
}

}  // namespace

Tensor dropout(const Tensor& input, double p, bool train) {
  profiler::Range prof_range(profiler::RangeKind::Op, "dropout");
  Tensor in = input;
  return dropout_impl<false>(in, p, train, false, false);
}
Tensor& dropout_(Tensor& input, double p, bool train) {
  dropout_impl<true>(input, p, train, false, false);
  return input;
}
Tensor feature_dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return dropout_impl<false>(in, p, train, true, false);
}
Tensor& feature_dropout_(Tensor& input, double p, bool train) {
  dropout_impl<true>(input, p, train, true, false);
  return input;
}
Tensor alpha_dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return dropout_impl<false>(in, p, train, false, true);
}
Tensor& alpha_dropout_(Tensor& input, double p, bool train) {
  dropout_impl<true>(input, p, train, false, true);
  return input;
}
Tensor feature_alpha_dropout(const Tensor& input, double p, bool train) {
  Tensor in = input;
  return dropout_impl<false>(in, p, train, true, true);
}
Tensor& feature_alpha_dropout_(Tensor& input, double p, bool train) {
  dropout_impl<true>(input, p, train, true, true);
  return input;
}

Tensor one_hot(const Tensor& self, int64_t num_classes) {
  EMBER_CHECK(self.dtype() == kLong,
              "one_hot is only applicable to index tensor of type LongTensor.");
  if (num_classes == -1) {
    EMBER_CHECK(self.numel() > 0, "Can not infer total number of classes from empty tensor.");
    num_classes = max(self).item<int64_t>() + 1;
  } else {
    EMBER_CHECK(num_classes >= 0, "num_classes should be positive");
  }
  if (self.numel() > 0) {
    EMBER_CHECK(min(self).item<int64_t>() >= 0, "Class values must be non-negative.");
    EMBER_CHECK(max(self).item<int64_t>() < num_classes,
                "Class values must be smaller than num_classes.");
  }
  DimVector shape(self.sizes());
  shape.push_back(num_classes);
  Tensor out = zeros(shape, TensorOptions(kLong));
  if (self.numel() > 0) scatter_(out, -1, unsqueeze(self, -1), Scalar(1));
  return out;
}

Tensor normalize(const Tensor& input, double p, int64_t dim, double eps) {
  Tensor denom = clamp(norm(input, Scalar(p), {dim}, true), wrap_scalar(eps), std::nullopt);
  return input / denom;
}

Tensor cosine_similarity(const Tensor& x1, const Tensor& x2, int64_t dim, double eps) {
  auto both = broadcast_tensors({x1, x2});
  auto unit = [&](const Tensor& x) {
    // The norm is clamped without a derivative, as torch does (the clamp runs under no_grad).
    Tensor n = norm(x, Scalar(2.0), {dim}, true);
    Tensor nd = n.detach();
    return x / (n + (clamp(nd, wrap_scalar(eps), std::nullopt) - nd));
  };
  return sum(unit(both[0]) * unit(both[1]), {dim});
}

Tensor pairwise_distance(const Tensor& x1, const Tensor& x2, double p, double eps, bool keepdim) {
  int64_t d = std::max(x1.dim(), x2.dim()) - 1;
  Tensor diff = x1 - x2 + eps;
  if (d < 0) return norm(diff, Scalar(p), {}, keepdim);
  return norm(diff, Scalar(p), {d}, keepdim);
}

}  // namespace ember
