#include "ember/core/quantizer.h"

#include "ember/core/error.h"

namespace ember {

std::string_view qscheme_name(QScheme s) {
  switch (s) {
    case QScheme::PerTensorAffine:
      return "per_tensor_affine";
    case QScheme::PerChannelAffine:
      return "per_channel_affine";
    case QScheme::PerTensorSymmetric:
      return "per_tensor_symmetric";
    case QScheme::PerChannelSymmetric:
      return "per_channel_symmetric";
    case QScheme::PerChannelAffineFloatQParams:
      return "per_channel_affine_float_qparams";
  }
  return "undefined";
}

Tensor int_repr_view(const Tensor& q) {
  if (!is_quantized(q.dtype())) return q;
  return Tensor(make_intrusive<TensorImpl>(q.storage(), underlying_type(q.dtype()), q.sizes(),
                                           q.strides(), q.storage_offset()));
}

Tensor make_quantized(const Tensor& repr, ScalarType qtype, QuantizerPtr quantizer) {
  EMBER_CHECK(is_quantized(qtype) && element_size(qtype) == element_size(repr.dtype()),
              "make_quantized: expected an integer tensor of the quantized type's width; got ",
              dtype_name(repr.dtype()), " for ", dtype_name(qtype));
  auto impl = make_intrusive<TensorImpl>(repr.storage(), qtype, repr.sizes(), repr.strides(),
                                         repr.storage_offset());
  impl->quantizer = std::move(quantizer);
  return Tensor(std::move(impl));
}

Tensor make_quantized_like(const Tensor& repr, const Tensor& like) {
  return make_quantized(repr, like.dtype(), like.impl()->quantizer);
}

std::pair<int64_t, int64_t> quantized_range(ScalarType qtype) {
  switch (qtype) {
    case kQInt8:
      return {-128, 127};
    case kQUInt8:
      return {0, 255};
    case kQInt32:
      return {-2147483648LL, 2147483647LL};
    case kQUInt4x2:
      return {0, 15};
    default:
      EMBER_CHECK(false, "quantized_range: expected a quantized dtype; got ", dtype_name(qtype));
  }
  return {0, 0};
}

}  // namespace ember
