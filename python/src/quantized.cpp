// Quantized tensors (core/quantizer.h) and the int8 kernels behind ember.ao.nn.quantized
// (schema/quantized.h, cpu/quantized.cpp): ember._C._quantized and the quantized Tensor methods.
#include <algorithm>
#include <cmath>

#include "common.h"
#include "ember/core/quantizer.h"
#include "ember/schema/quantized.h"
#include "quantized.h"

namespace ember::py {

namespace {

using OptTensor = std::optional<Tensor>;

const Quantizer& quantizer(const Tensor& t, const char* op) {
  const Quantizer* q = is_quantized(t.dtype()) ? quantizer_of(t) : nullptr;
  EMBER_CHECK_KIND(q, ErrorKind::NotImplemented, "Could not run 'aten::", op,
                   "' with arguments from the 'CPU' backend. This could be because the operator "
                   "doesn't exist for this backend, or was omitted during the selective/custom "
                   "build process (if using custom build).");
  return *q;
}

std::pair<int64_t, int64_t> range_of(ScalarType qtype) { return quantized_range(qtype); }

Tensor scalar_params(double v, ScalarType dt) {
  Tensor t = empty({1}, dt);
  if (dt == kDouble) *static_cast<double*>(t.data_ptr()) = v;
  else *static_cast<int64_t*>(t.data_ptr()) = int64_t(v);
  return t;
}

void check_qtype(ScalarType dtype, const char* op) {
  EMBER_CHECK_KIND(is_quantized(dtype), ErrorKind::Runtime, op,
                   ": expected a quantized dtype (qint8, quint8, qint32, quint4x2); got ",
                   dtype_name(dtype));
}

Tensor quantize_per_tensor(const Tensor& x, double scale, int64_t zp, ScalarType dtype) {
  check_qtype(dtype, "quantize_per_tensor");
  EMBER_CHECK(
      x.dtype() == kFloat || x.dtype() == kDouble || x.dtype() == kHalf || x.dtype() == kBFloat16,
      "quantize_per_tensor: expected a floating-point tensor; got ", dtype_name(x.dtype()));
  auto [qmin, qmax] = range_of(dtype);
  EMBER_CHECK(zp >= qmin && zp <= qmax, "quantize_per_tensor: zero_point ", zp,
              " is out of the range of ", dtype_name(dtype));
  Tensor xf = x.dtype() == kFloat ? x : x.to(kFloat);
  Tensor repr = op::_ember_quantize.call(xf, scalar_params(scale, kDouble),
                                         scalar_params(double(zp), kLong), -1, qmin, qmax);
  auto q = std::make_shared<Quantizer>();
  q->scheme = QScheme::PerTensorAffine;
  q->scale = scale;
  q->zero_point = zp;
  return make_quantized(repr, dtype, std::move(q));
}

Tensor quantize_per_channel(const Tensor& x, const Tensor& scales, const Tensor& zps, int64_t axis,
                            ScalarType dtype) {
  check_qtype(dtype, "quantize_per_channel");
  EMBER_CHECK(x.dim() > 0, "quantize_per_channel: expected a tensor with at least one dim");
  if (axis < 0) axis += x.dim();
  EMBER_CHECK_INDEX(axis >= 0 && axis < x.dim(), "quantize_per_channel: axis ", axis,
                    " is out of range for a ", x.dim(), "-d tensor");
  EMBER_CHECK(scales.numel() == x.size(axis) && zps.numel() == x.size(axis),
              "quantize_per_channel: expected ", x.size(axis), " scales and zero points; got ",
              scales.numel(), " and ", zps.numel());
  auto [qmin, qmax] = range_of(dtype);
  Tensor sc = scales.to(kDouble).contiguous();
  bool float_zp = zps.is_floating_point();
  Tensor zp = zps.to(float_zp ? kDouble : kLong).contiguous();
  Tensor xf = x.dtype() == kFloat ? x : x.to(kFloat);
  Tensor repr = op::_ember_quantize.call(xf.contiguous(), sc, zp, axis, qmin, qmax);
  auto q = std::make_shared<Quantizer>();
  q->scheme = float_zp ? QScheme::PerChannelAffineFloatQParams : QScheme::PerChannelAffine;
  q->scales = sc;
  q->zero_points = float_zp ? zps.to(kFloat).contiguous() : zp;
  q->axis = axis;
  return make_quantized(repr, dtype, std::move(q));
}

Tensor dequantize(const Tensor& t) {
  if (!is_quantized(t.dtype())) return t;
  const Quantizer& q = quantizer(t, "dequantize.self");
  Tensor repr = int_repr_view(t);
  if (!is_per_channel(q.scheme))
    return op::_ember_dequantize.call(repr, scalar_params(q.scale, kDouble),
                                      scalar_params(double(q.zero_point), kLong), -1);
  Tensor zp = q.zero_points.is_floating_point() ? q.zero_points.to(kDouble) : q.zero_points;
  return op::_ember_dequantize.call(repr, q.scales, zp, q.axis);
}

ScalarType qtype_of_repr(ScalarType t, const char* op) {
  switch (t) {
    case kChar:
      return kQInt8;
    case kByte:
      return kQUInt8;
    case kInt:
      return kQInt32;
    default:
      EMBER_CHECK(false, op, ": expected an int8, uint8 or int32 tensor; got ", dtype_name(t));
  }
  return kQInt8;
}

// The dispatcher's requantization of a list argument (cat of tensors with different scales or
// zero points): dequantize, then quantize with `like`'s parameters, warning as torch does.
Tensor requantize_like(const Tensor& q, const Tensor& like) {
  {
    PyGILState_STATE g = PyGILState_Ensure();
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "All inputs of this cat operator must share the same quantization "
                     "parameters. Otherwise large numerical inaccuracies may occur.",
                     1) < 0)
      PyErr_Clear();
    PyGILState_Release(g);
  }
  const Quantizer* lq = quantizer_of(like);
  return quantize_per_tensor(dequantize(q), lq->scale, lq->zero_point, like.dtype());
}

}  // namespace

// Note [Quantized unary ops]: relu, sigmoid and tanh have QuantizedCPU kernels in torch, so
// `xq.relu()`, `torch.sigmoid(xq)` ... run on a quantized tensor; ops_unary.cpp's bindings send a
// quantized input here (the dispatcher refuses every op on one that is not an integer move).
// relu keeps the parameters: max(q, zero_point) on the integers. sigmoid and tanh requantize to
// the fixed output ranges of torch's kernels (sigmoid [0, 1) in steps of 1/256, tanh [-1, 1) in
// steps of 2/256; qint32: 2^-32 and 2^-31), whatever the input's range. Per tensor only, as
// torch's (and its text). The in-place sigmoid_/tanh_ have no kernel in torch either.
bool has_quantized_kernel(std::string_view name) {
  return name == "relu" || name == "sigmoid" || name == "tanh";
}

const Quantizer& per_tensor_quantizer(const Tensor& t) {
  const Quantizer* q = quantizer_of(t);
  EMBER_CHECK(q && q->scheme == QScheme::PerTensorAffine,
              "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got false.  "
              "(Could this error message be improved?  If so, please report an enhancement "
              "request to PyTorch.)");
  return *q;
}

Tensor quantized_unary(std::string_view name, const Tensor& t) {
  const Quantizer& q = per_tensor_quantizer(t);
  ScalarType dt = t.dtype();
  if (name == "relu")
    return make_quantized_like(clamp_min(int_repr_view(t), Scalar(q.zero_point)), t);
  double step = dt == kQInt32 ? 0x1p-32 : 0x1p-8;  // 1 / (number of integers)
  if (name == "sigmoid")
    return quantize_per_tensor(sigmoid(dequantize(t)), step, dt == kQInt8 ? -128 : 0, dt);
  return quantize_per_tensor(tanh(dequantize(t)), 2 * step, dt == kQUInt8 ? 128 : 0, dt);
}

[[noreturn]] void no_quantized_kernel(std::string_view aten_name) {
  EMBER_ERROR(ErrorKind::NotImplemented, "Could not run 'aten::", aten_name,
              "' with arguments from the 'QuantizedCPU' backend. This could be because the "
              "operator doesn't exist for this backend, or was omitted during the "
              "selective/custom build process (if using custom build).");
}

void quantized_unary_(std::string_view name, Tensor& t) {
  if (name != "relu") no_quantized_kernel(std::string(name) + ".out");
  const Quantizer& q = per_tensor_quantizer(t);
  Tensor r = int_repr_view(t);
  copy_(r, clamp_min(r, Scalar(q.zero_point)));
}

// clamp of a quantized tensor with number bounds (torch's quantized clamp, and hardtanh's): the
// integers clamped between the bounds quantized as quantize_per_tensor does it, in double
// precision (round(v / scale + zero_point), half to even); the parameters kept.
Tensor quantized_clamp(const Tensor& t, std::optional<double> lo, std::optional<double> hi) {
  const Quantizer& q = per_tensor_quantizer(t);
  auto [qmin, qmax] = quantized_range(t.dtype());
  auto bound = [&](std::optional<double> v) -> std::optional<Scalar> {
    if (!v) return std::nullopt;
    double b = std::nearbyint(*v / q.scale + double(q.zero_point));
    return Scalar(int64_t(std::clamp(b, double(qmin), double(qmax))));
  };
  return make_quantized_like(clamp(int_repr_view(t), bound(lo), bound(hi)), t);
}

// mean of a quantized tensor, in its parameters, as torch's kernels: over the innermost dims of
// a contiguous tensor the integers' sum divided by the count and rounded half to even (the
// zero point is not taken out first); over other dims dequantize, mean, quantize.
Tensor quantized_mean(const Tensor& t, std::vector<int64_t> dims, bool keepdim) {
  const Quantizer& q = per_tensor_quantizer(t);
  int64_t nd = t.dim();
  if (dims.empty())
    for (int64_t d = 0; d < nd; ++d) dims.push_back(d);
  for (int64_t& d : dims) d = maybe_wrap_dim(d, nd);
  std::sort(dims.begin(), dims.end());
  bool inner = t.is_contiguous();
  for (size_t i = 0; i < dims.size(); ++i)
    inner = inner && dims[i] == nd - int64_t(dims.size()) + int64_t(i);
  if (!inner)
    return quantize_per_tensor(mean(dequantize(t), dims, keepdim), q.scale, q.zero_point,
                               t.dtype());
  double count = 1;
  for (int64_t d : dims) count *= double(t.size(d));
  Tensor sums = sum(int_repr_view(t), dims, keepdim, kDouble);  // exact
  auto [qmin, qmax] = quantized_range(t.dtype());
  Tensor avg = clamp(round(sums / Scalar(count), 0), std::optional<Scalar>(Scalar(qmin)),
                     std::optional<Scalar>(Scalar(qmax)));
  return make_quantized_like(to_dtype(avg, underlying_type(t.dtype())), t);
}

// Note [Quantized fills, copies and comparisons]: as torch's QuantizedCPU kernels. A float written
// into a quantized tensor (copy_, fill_, masked_fill) is quantized with the tensor's parameters,
// as quantize_per_tensor/per_channel round it; comparisons (eq ... ge) compare the dequantized
// values and give bool tensors. copy_ takes only a float32 tensor of self's shape, masked_fill only
// a per-tensor self, as torch's checks.
Tensor dequantized(const Tensor& t) { return dequantize(t); }

void quantized_copy_from_float(Tensor& q, const Tensor& src) {
  EMBER_CHECK(src.dtype() == kFloat, "Quantized copy only works with kFloat as source Tensor");
  EMBER_CHECK(src.sizes().vec() == q.sizes().vec(),
              "Quantized copy only works with Tensors with the same shape");
  const Quantizer& qz = *quantizer_of(q);
  Tensor v = is_per_channel(qz.scheme)
                 ? quantize_per_channel(src, qz.scales, qz.zero_points, qz.axis, q.dtype())
                 : quantize_per_tensor(src, qz.scale, qz.zero_point, q.dtype());
  Tensor r = int_repr_view(q);
  copy_(r, int_repr_view(v));
}

void quantized_fill_(Tensor& q, const Tensor& value) {
  EMBER_CHECK(value.dim() == 0, "fill_ only supports 0-dimension value tensor but got tensor with ",
              value.dim(), " dimensions.");
  Tensor full_value = expand(to_dtype(dequantize(value), kFloat), q.sizes()).contiguous();
  quantized_copy_from_float(q, full_value);
}

Tensor quantized_masked_fill(const Tensor& q, const Tensor& mask, const Tensor& value,
                             bool inplace) {
  const Quantizer& qz = *quantizer_of(q);
  EMBER_CHECK(!is_per_channel(qz.scheme),
              "masked_fill__quantized_cpu for quantized tensors is currently only supported for "
              "per tensor quantized tensors");
  Tensor v = int_repr_view(
      quantize_per_tensor(to_dtype(dequantize(value), kFloat), qz.scale, qz.zero_point, q.dtype()));
  Tensor r = int_repr_view(q);
  if (inplace) {
    masked_fill_(r, mask, v);
    return q;
  }
  return make_quantized_like(masked_fill(r, mask, v), q);
}

// max()/min() of quantized tensors: the extreme integer, per tensor only (torch's text).
void check_extreme_per_tensor(const Tensor& t, bool is_max) {
  EMBER_CHECK(!is_per_channel(quantizer_of(t)->scheme), is_max ? "Max" : "Min",
              " operator for quantized tensors only works for per tensor quantized tensors. Please "
              "open an issue on https://github.com/pytorch/pytorch/issues if you need per channel "
              "quantized tensor support.");
}

Tensor quantized_extreme(const Tensor& t, bool is_max) {
  check_extreme_per_tensor(t, is_max);
  Tensor r = int_repr_view(t);
  return make_quantized_like(is_max ? max(r) : min(r), t);
}

// The bounds of clamp on a quantized tensor. torch's quantized clamp takes numbers only: a
// floating tensor bound fails its type promotion first, an integer one the allocation of a
// quantized result. The forms without a QuantizedCPU kernel (clamp_, clamp_min, clamp_max and
// theirs in place) fail the promotion for a float number too, and refuse any other.
void check_quantized_bounds(const Tensor& q, std::string_view op, nb::handle lo, nb::handle hi,
                            bool has_kernel) {
  for (nb::handle b : {lo, hi}) {
    if (b.is_none()) continue;
    bool is_tensor = nb::isinstance<Tensor>(b);
    ScalarType bt = is_tensor ? nb::cast<Tensor>(b).dtype() : kFloat;
    if (!is_tensor && has_kernel) continue;  // quantized clamp takes any number
    EMBER_CHECK(!(is_tensor ? is_floating_point(bt) : PyFloat_Check(b.ptr()) != 0),
                "promoteTypes with quantized numbers is not handled yet; figure out what the "
                "correct rules should be, offending types: ",
                scalar_type_name(q.dtype()), " ", scalar_type_name(bt));
    EMBER_CHECK(!is_tensor,
                "empty_strided not supported on quantized tensors yet see "
                "https://github.com/pytorch/pytorch/issues/74540");
  }
  if (!has_kernel) no_quantized_kernel(std::string(op) + ".out");
}

void bind_quantized(nb::module_& m) {
  detail::set_requantize_fn(&requantize_like);
  nb::module_ q = m.def_submodule("_quantized", "Quantized tensors and the int8 kernels");
  q.def("quantize_per_tensor", &quantize_per_tensor, nb::arg("input"), nb::arg("scale"),
        nb::arg("zero_point"), nb::arg("dtype"),
        doc("quantize_per_tensor(input, scale, zero_point, dtype) -> Tensor",
            "Rounds input / scale half to even, adds zero_point and clamps to dtype's range."));
  q.def("quantize_per_channel", &quantize_per_channel, nb::arg("input"), nb::arg("scales"),
        nb::arg("zero_points"), nb::arg("axis"), nb::arg("dtype"),
        doc("quantize_per_channel(input, scales, zero_points, axis, dtype) -> Tensor",
            "Quantizes each slice along axis with its own scale and zero point."));
  q.def(
      "check_bounds",
      [](const Tensor& q, const std::string& op, nb::handle lo, nb::handle hi) {
        check_quantized_bounds(q, op, lo, hi, false);
      },
      nb::arg("input"), nb::arg("op"), nb::arg("min").none(), nb::arg("max").none(),
      doc("check_bounds(input, op, min, max) -> None",
          "Raises torch's error for clamp_min, clamp_max or clamp_ of a quantized tensor."));
  q.def("dequantize", &dequantize, nb::arg("input"),
        doc("dequantize(input) -> Tensor",
            "The float32 values (q - zero_point) * scale of a quantized tensor."));
  q.def(
      "make_per_tensor",
      [](const Tensor& repr, double scale, int64_t zp) {
        auto qz = std::make_shared<Quantizer>();
        qz->scale = scale;
        qz->zero_point = zp;
        return make_quantized(repr.contiguous().clone(),
                              qtype_of_repr(repr.dtype(), "_make_per_tensor_quantized_tensor"),
                              std::move(qz));
      },
      nb::arg("input"), nb::arg("scale"), nb::arg("zero_point"),
      doc("make_per_tensor(input, scale, zero_point) -> Tensor",
          "A per-tensor quantized tensor whose integers are a copy of input."));
  q.def(
      "make_per_channel",
      [](const Tensor& repr, const Tensor& scales, const Tensor& zps, int64_t axis) {
        auto qz = std::make_shared<Quantizer>();
        if (axis < 0) axis += repr.dim();
        bool float_zp = zps.is_floating_point();
        qz->scheme = float_zp ? QScheme::PerChannelAffineFloatQParams : QScheme::PerChannelAffine;
        qz->scales = scales.to(kDouble).contiguous().clone();
        qz->zero_points = zps.to(float_zp ? kFloat : kLong).contiguous().clone();
        qz->axis = axis;
        return make_quantized(repr.contiguous().clone(),
                              qtype_of_repr(repr.dtype(), "_make_per_channel_quantized_tensor"),
                              std::move(qz));
      },
      nb::arg("input"), nb::arg("scales"), nb::arg("zero_points"), nb::arg("axis"),
      doc("make_per_channel(input, scales, zero_points, axis) -> Tensor",
          "A per-channel quantized tensor whose integers are a copy of input."));
  q.def(
      "from_repr",
      [](const Tensor& repr, const Tensor& like) { return make_quantized_like(repr, like); },
      nb::arg("repr"), nb::arg("like"),
      doc("from_repr(repr, like) -> Tensor",
          "The integers repr as a quantized tensor with like's dtype and parameters."));
  q.def(
      "from_repr_per_tensor",
      [](const Tensor& repr, ScalarType dtype, double scale, int64_t zp) {
        check_qtype(dtype, "from_repr_per_tensor");
        auto qz = std::make_shared<Quantizer>();
        qz->scale = scale;
        qz->zero_point = zp;
        return make_quantized(repr, dtype, std::move(qz));
      },
      nb::arg("repr"), nb::arg("dtype"), nb::arg("scale"), nb::arg("zero_point"),
      doc("from_repr_per_tensor(repr, dtype, scale, zero_point) -> Tensor",
          "The integers repr (not copied) as a per-tensor quantized tensor."));
  q.def(
      "from_repr_per_channel",
      [](const Tensor& repr, ScalarType dtype, const Tensor& scales, const Tensor& zps,
         int64_t axis) {
        check_qtype(dtype, "from_repr_per_channel");
        auto qz = std::make_shared<Quantizer>();
        if (axis < 0) axis += repr.dim();
        bool float_zp = zps.is_floating_point();
        qz->scheme = float_zp ? QScheme::PerChannelAffineFloatQParams : QScheme::PerChannelAffine;
        qz->scales = scales.to(kDouble).contiguous().clone();
        qz->zero_points = zps.to(float_zp ? kFloat : kLong).contiguous().clone();
        qz->axis = axis;
        return make_quantized(repr, dtype, std::move(qz));
      },
      nb::arg("repr"), nb::arg("dtype"), nb::arg("scales"), nb::arg("zero_points"), nb::arg("axis"),
      doc("from_repr_per_channel(repr, dtype, scales, zero_points, axis) -> Tensor",
          "The integers repr (not copied) as a per-channel quantized tensor."));
  q.def(
      "retype",
      [](const Tensor& t, ScalarType dtype) {
        check_qtype(dtype, "retype");
        quantizer(t, "retype");
        return make_quantized(int_repr_view(t), dtype, t.impl()->quantizer);
      },
      nb::arg("input"), nb::arg("dtype"),
      doc("retype(input, dtype) -> Tensor",
          "input's integers and parameters as another quantized dtype of the same width."));
  q.def(
      "set_scheme",
      [](const Tensor& t, int64_t scheme) {
        const Quantizer& old = quantizer(t, "qscheme");
        auto qz = std::make_shared<Quantizer>(old);
        qz->scheme = QScheme(scheme);
        return make_quantized(int_repr_view(t), t.dtype(), std::move(qz));
      },
      nb::arg("input"), nb::arg("scheme"),
      doc("set_scheme(input, scheme) -> Tensor",
          "input viewed with another scheme code (its parameters kept): 0 per_tensor_affine, "
          "1 per_channel_affine, 2 per_tensor_symmetric, 3 per_channel_symmetric."));
  q.def(
      "repr_view", [](const Tensor& t) { return int_repr_view(t); }, nb::arg("input"),
      doc("repr_view(input) -> Tensor",
          "The integers of a quantized tensor as a plain tensor sharing its storage."));
  q.def(
      "qscheme",
      [](const Tensor& t) { return std::string(qscheme_name(quantizer(t, "qscheme").scheme)); },
      nb::arg("input"), doc("qscheme(input) -> str", "The name of input's quantization scheme."));
  q.def(
      "qpack",
      [](const Tensor& w, int64_t groups) {
        auto [packed, colsum] = op::_ember_qpack.call(w, groups);
        return nb::make_tuple(packed, colsum);
      },
      nb::arg("weight"), nb::arg("groups") = 1,
      doc("qpack(weight, groups=1) -> (Tensor, Tensor)",
          "Packs an int8 [N, K] weight for the int8 GEMM; returns (packed, column sums)."));
  q.def(
      "linear",
      [](const Tensor& x, double xs, int64_t xz, const Tensor& packed, const Tensor& colsum,
         int64_t n, const Tensor& ws, const Tensor& wz, const OptTensor& bias, double os,
         int64_t oz, bool relu) {
        return op::_ember_qlinear.call(x, xs, xz, packed, colsum, n, ws, wz, bias, os, oz, relu);
      },
      nb::arg("input"), nb::arg("input_scale"), nb::arg("input_zero_point"), nb::arg("packed"),
      nb::arg("col_sums"), nb::arg("out_features"), nb::arg("w_scales"), nb::arg("w_zero_points"),
      nb::arg("bias").none(), nb::arg("output_scale"), nb::arg("output_zero_point"),
      nb::arg("relu") = false,
      doc("linear(input, input_scale, input_zero_point, packed, col_sums, out_features, "
          "w_scales, w_zero_points, bias, output_scale, output_zero_point, relu=False) -> Tensor",
          "uint8 [.., K] x packed int8 weight -> requantized uint8 [.., N] (int32 sums)."));
  q.def(
      "linear_dynamic",
      [](const Tensor& x, const Tensor& packed, const Tensor& colsum, int64_t n, const Tensor& ws,
         const Tensor& wz, const OptTensor& bias, bool reduce_range, bool relu) {
        return op::_ember_qlinear_dynamic.call(x, packed, colsum, n, ws, wz, bias, reduce_range,
                                               relu);
      },
      nb::arg("input"), nb::arg("packed"), nb::arg("col_sums"), nb::arg("out_features"),
      nb::arg("w_scales"), nb::arg("w_zero_points"), nb::arg("bias").none(),
      nb::arg("reduce_range") = true, nb::arg("relu") = false,
      doc("linear_dynamic(input, packed, col_sums, out_features, w_scales, w_zero_points, bias, "
          "reduce_range=True, relu=False) -> Tensor",
          "float input quantized to uint8 over its range, int8 GEMM, float output."));
  q.def(
      "conv2d",
      [](const Tensor& x, double xs, int64_t xz, const Tensor& packed, const Tensor& colsum,
         std::vector<int64_t> wshape, std::vector<int64_t> stride, std::vector<int64_t> padding,
         std::vector<int64_t> dilation, int64_t groups, const Tensor& ws, const Tensor& wz,
         const OptTensor& bias, double os, int64_t oz, bool relu) {
        return op::_ember_qconv2d.call(x, xs, xz, packed, colsum, wshape, stride, padding, dilation,
                                       groups, ws, wz, bias, os, oz, relu);
      },
      nb::arg("input"), nb::arg("input_scale"), nb::arg("input_zero_point"), nb::arg("packed"),
      nb::arg("col_sums"), nb::arg("weight_shape"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("groups"), nb::arg("w_scales"), nb::arg("w_zero_points"),
      nb::arg("bias").none(), nb::arg("output_scale"), nb::arg("output_zero_point"),
      nb::arg("relu") = false,
      doc("conv2d(input, input_scale, input_zero_point, packed, col_sums, weight_shape, stride, "
          "padding, dilation, groups, w_scales, w_zero_points, bias, output_scale, "
          "output_zero_point, relu=False) -> Tensor",
          "uint8 NCHW convolution with a packed int8 weight, requantized to uint8."));
  q.def(
      "conv2d_onednn_pack",
      [](const Tensor& w, std::vector<int64_t> in_sizes, std::vector<int64_t> stride,
         std::vector<int64_t> padding, std::vector<int64_t> dilation, int64_t groups,
         const Tensor& ws, double xs, int64_t xz, double os, int64_t oz, bool relu) {
        return op::_ember_qconv2d_onednn_pack.call(w, in_sizes, stride, padding, dilation, groups,
                                                   ws, xs, xz, os, oz, relu);
      },
      nb::arg("weight"), nb::arg("input_sizes"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("groups"), nb::arg("w_scales"), nb::arg("input_scale"),
      nb::arg("input_zero_point"), nb::arg("output_scale"), nb::arg("output_zero_point"),
      nb::arg("relu"),
      doc("conv2d_onednn_pack(weight, input_sizes, stride, padding, dilation, groups, w_scales, "
          "input_scale, input_zero_point, output_scale, output_zero_point, relu) -> Tensor",
          "An int8 [O, C/g, kh, kw] weight in oneDNN's layout for that input shape and those "
          "parameters; empty when oneDNN does not run the convolution."));
  q.def(
      "conv2d_onednn",
      [](const Tensor& x, double xs, int64_t xz, const Tensor& packed, const Tensor& weight,
         std::vector<int64_t> stride, std::vector<int64_t> padding, std::vector<int64_t> dilation,
         int64_t groups, const Tensor& ws, const OptTensor& bias, double os, int64_t oz,
         bool relu) {
        return op::_ember_qconv2d_onednn.call(x, xs, xz, packed, weight, stride, padding, dilation,
                                              groups, ws, bias, os, oz, relu);
      },
      nb::arg("input"), nb::arg("input_scale"), nb::arg("input_zero_point"), nb::arg("packed"),
      nb::arg("weight"), nb::arg("stride"), nb::arg("padding"), nb::arg("dilation"),
      nb::arg("groups"), nb::arg("w_scales"), nb::arg("bias").none(), nb::arg("output_scale"),
      nb::arg("output_zero_point"), nb::arg("relu") = false,
      doc("conv2d_onednn(input, input_scale, input_zero_point, packed, weight, stride, "
          "padding, dilation, groups, w_scales, bias, output_scale, output_zero_point, "
          "relu=False) -> Tensor",
          "uint8 convolution on oneDNN with a weight from conv2d_onednn_pack; uint8 NHWC out."));
  q.def(
      "max_pool2d",
      [](const Tensor& x, std::vector<int64_t> k, std::vector<int64_t> stride,
         std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode) {
        return op::_ember_qmax_pool2d.call(x, k, stride, padding, dilation, ceil_mode);
      },
      nb::arg("input"), nb::arg("kernel_size"), nb::arg("stride"), nb::arg("padding"),
      nb::arg("dilation"), nb::arg("ceil_mode"),
      doc("max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode) -> Tensor",
          "Max pooling of 4-d 8-bit integers; channels-last output."));
  q.def(
      "binary",
      [](const Tensor& a, double sa, int64_t za, const Tensor& b, double sb, int64_t zb, int64_t op,
         double so, int64_t zo, int64_t qmin, int64_t qmax) {
        return op::_ember_qbinary.call(a, sa, za, b, sb, zb, op, so, zo, qmin, qmax);
      },
      nb::arg("input"), nb::arg("input_scale"), nb::arg("input_zero_point"), nb::arg("other"),
      nb::arg("other_scale"), nb::arg("other_zero_point"), nb::arg("op"), nb::arg("output_scale"),
      nb::arg("output_zero_point"), nb::arg("qmin"), nb::arg("qmax"),
      doc("binary(input, input_scale, input_zero_point, other, other_scale, other_zero_point, op, "
          "output_scale, output_zero_point, qmin, qmax) -> Tensor",
          "Elementwise add (op 0), mul (1), add+relu (2) or mul+relu (3) of integer tensors."));
  q.def(
      "channel_affine",
      [](const Tensor& x, int64_t zp, const Tensor& mul, const Tensor& add, int64_t zo,
         int64_t qmin,
         int64_t qmax) { return op::_ember_qchannel_affine.call(x, zp, mul, add, zo, qmin, qmax); },
      nb::arg("input"), nb::arg("zero_point"), nb::arg("mul"), nb::arg("add"),
      nb::arg("output_zero_point"), nb::arg("qmin"), nb::arg("qmax"),
      doc("channel_affine(input, zero_point, mul, add, output_zero_point, qmin, qmax) -> Tensor",
          "round((q - zero_point) * mul[c] + add[c]) + output_zero_point along dim 1."));
  q.def(
      "embedding_bag",
      [](const Tensor& w, const Tensor& sc, const Tensor& zp, int64_t bits, int64_t dim,
         const Tensor& idx, const Tensor& off, int64_t mode, const OptTensor& psw, bool last) {
        return op::_ember_qembedding_bag.call(w, sc, zp, bits, dim, idx, off, mode, psw, last);
      },
      nb::arg("weight"), nb::arg("scales"), nb::arg("zero_points"), nb::arg("bits"), nb::arg("dim"),
      nb::arg("indices"), nb::arg("offsets"), nb::arg("mode"), nb::arg("per_sample_weights").none(),
      nb::arg("include_last_offset"),
      doc("embedding_bag(weight, scales, zero_points, bits, dim, indices, offsets, mode, "
          "per_sample_weights, include_last_offset) -> Tensor",
          "Sums (mode 0), means (1) or maxima (2) of dequantized 8- or 4-bit rows per bag."));

  auto cls = tensor_class();
  cls.def("dequantize", &dequantize,
          doc("dequantize() -> Tensor", "The float32 values of a quantized tensor."));
  cls.def(
      "int_repr",
      [](const Tensor& t) {
        quantizer(t, "int_repr");
        return int_repr_view(t).clone();
      },
      doc("int_repr() -> Tensor", "A copy of the integers of a quantized tensor."));
  cls.def(
      "q_scale",
      [](const Tensor& t) {
        const Quantizer& q = quantizer(t, "q_scale");
        EMBER_CHECK(!is_per_channel(q.scheme),
                    "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got "
                    "false.  (Could this error message be improved?  If so, please report an "
                    "enhancement request to PyTorch.)");
        return q.scale;
      },
      doc("q_scale() -> float", "The scale of a per-tensor quantized tensor."));
  cls.def(
      "q_zero_point",
      [](const Tensor& t) {
        const Quantizer& q = quantizer(t, "q_zero_point");
        EMBER_CHECK(!is_per_channel(q.scheme),
                    "Expected quantizer->qscheme() == kPerTensorAffine to be true, but got "
                    "false.  (Could this error message be improved?  If so, please report an "
                    "enhancement request to PyTorch.)");
        return q.zero_point;
      },
      doc("q_zero_point() -> int", "The zero point of a per-tensor quantized tensor."));
  auto per_channel = [](const Tensor& t, const char* op) -> const Quantizer& {
    const Quantizer& q = quantizer(t, op);
    EMBER_CHECK(is_per_channel(q.scheme),
                "Expected quantizer->qscheme() == kPerChannelAffine || quantizer->qscheme() == "
                "kPerChannelAffineFloatQParams to be true, but got false.  (Could this error "
                "message be improved?  If so, please report an enhancement request to PyTorch.)");
    return q;
  };
  cls.def(
      "q_per_channel_scales",
      [per_channel](const Tensor& t) {
        return per_channel(t, "q_per_channel_scales").scales.clone();
      },
      doc("q_per_channel_scales() -> Tensor", "The float64 scales of a per-channel tensor."));
  cls.def(
      "q_per_channel_zero_points",
      [per_channel](const Tensor& t) {
        return per_channel(t, "q_per_channel_zero_points").zero_points.clone();
      },
      doc("q_per_channel_zero_points() -> Tensor",
          "The zero points of a per-channel tensor (int64, or float for float qparams)."));
  cls.def(
      "q_per_channel_axis",
      [per_channel](const Tensor& t) { return per_channel(t, "q_per_channel_axis").axis; },
      doc("q_per_channel_axis() -> int", "The dim a per-channel tensor is quantized along."));
}

}  // namespace ember::py
