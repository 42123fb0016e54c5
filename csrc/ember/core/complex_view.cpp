#include "ember/core/complex_view.h"

#include "ember/core/tensor_impl.h"

namespace ember {

Tensor real_pairs_view(const Tensor& self) {
  EMBER_CHECK(is_complex(self.dtype()), "view_as_real is only supported for complex tensors");
  DimVector sizes(self.sizes()), strides(self.strides());
  for (auto& s : strides) s *= 2;
  sizes.push_back(2);
  strides.push_back(1);
  return Tensor(make_intrusive<TensorImpl>(self.storage(), to_real_type(self.dtype()), sizes,
                                           strides, self.storage_offset() * 2));
}

Tensor complex_pairs_view(const Tensor& self) {
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble,
              "view_as_complex is only supported for float and double tensors, but got a tensor "
              "of scalar type: ",
              scalar_type_name(self.dtype()));
  EMBER_CHECK(self.dim() > 0 && self.sizes().back() == 2,
              "Tensor must have a last dimension of size 2");
  EMBER_CHECK(self.strides().back() == 1, "Tensor must have a last dimension with stride 1");
  DimVector sizes(self.sizes()), strides(self.strides());
  sizes.resize(sizes.size() - 1);
  strides.resize(strides.size() - 1);
  for (auto& s : strides) {
    EMBER_CHECK(s % 2 == 0, "Tensor must have a stride divisible by 2 for all but last dimension");
    s /= 2;
  }
  EMBER_CHECK(self.storage_offset() % 2 == 0, "Tensor must have a storage_offset divisible by 2");
  return Tensor(make_intrusive<TensorImpl>(self.storage(), to_complex_type(self.dtype()), sizes,
                                           strides, self.storage_offset() / 2));
}

}  // namespace ember
