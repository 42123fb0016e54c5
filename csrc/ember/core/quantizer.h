#pragma once
// Quantized tensors: the quantization parameters a tensor of a quantized dtype carries.
//
// Note [Quantized tensors]
// A quantized tensor is an ordinary strided tensor whose dtype is one of
// EMBER_FORALL_QUANTIZED_DTYPES (qint8, quint8, qint32, quint4x2): its storage holds the integer
// values (`int_repr`), and `TensorImpl::quantizer` holds how they map to reals (per-tensor
// scale/zero_point, or per-channel scales/zero_points along `axis`). Views made by
// `Tensor::as_strided_view` share the quantizer, so view, reshape, select, slicing, transpose and
// permute work unchanged. Copies (`clone`, `contiguous`, advanced indexing) run the integer kernels
// on `int_repr_view` and re-attach the quantizer. Every other op raises torch's NotImplementedError
// for the 'QuantizedCPU' backend (dispatch/dispatcher.h); the quantized kernels themselves
// (`cpu/quantized.cpp`) take the integer tensors and the parameters as arguments.
#include <memory>
#include <string_view>

#include "ember/core/tensor.h"

namespace ember {

/// torch's qscheme values (`torch.per_tensor_affine` ...).
enum class QScheme : int8_t {
  PerTensorAffine,
  PerChannelAffine,
  PerTensorSymmetric,
  PerChannelSymmetric,
  PerChannelAffineFloatQParams,
};
/// torch's name of a scheme, e.g. "per_tensor_affine".
std::string_view qscheme_name(QScheme s);
constexpr bool is_per_channel(QScheme s) {
  return s == QScheme::PerChannelAffine || s == QScheme::PerChannelSymmetric ||
         s == QScheme::PerChannelAffineFloatQParams;
}

/// How the integers of a quantized tensor map to reals: x = (q - zero_point) * scale.
struct Quantizer {
  QScheme scheme = QScheme::PerTensorAffine;
  double scale = 1.0;  // per-tensor
  int64_t zero_point = 0;
  Tensor scales;       // per-channel: float64 [C]
  Tensor zero_points;  // per-channel: int64 [C] (float for PerChannelAffineFloatQParams)
  int64_t axis = 0;
};
using QuantizerPtr = std::shared_ptr<const Quantizer>;

/// The quantizer of `t`, or null for a tensor that is not quantized.
inline const Quantizer* quantizer_of(const Tensor& t) { return t.impl()->quantizer.get(); }
/// The integer values of a quantized tensor as a plain tensor over the same storage.
Tensor int_repr_view(const Tensor& q);
/// A quantized tensor of dtype `qtype` over the integers of `repr` (same storage and geometry).
Tensor make_quantized(const Tensor& repr, ScalarType qtype, QuantizerPtr quantizer);
/// `repr` wrapped with the dtype and quantizer of the quantized tensor `like`.
Tensor make_quantized_like(const Tensor& repr, const Tensor& like);
/// The smallest and largest value a quantized dtype holds (quint4x2: 0..15).
std::pair<int64_t, int64_t> quantized_range(ScalarType qtype);

}  // namespace ember
