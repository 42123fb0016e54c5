#include "ember/ops/complex.h"

#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/complex.h"

namespace ember {

EMBER_DERIVATIVE(op::conj_physical, "ConjPhysicalBackward0", (self), conj_physical(grad));
// The adjoint of an unnormalized DFT is the unnormalized DFT of the opposite sign, so the
// gradient (torch's conjugate Wirtinger convention) is the transform the other way.
EMBER_DERIVATIVE(op::_fft_c2c, "FftC2CBackward0", (self, dim, normalization, forward),
                 _fft_c2c(grad, dim, normalization, !forward));

Tensor conj_physical(const Tensor& self) {
  if (!is_complex(self.dtype())) return self;
  return op::conj_physical.call(self);
}

Tensor _fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward) {
  EMBER_CHECK(is_complex(self.dtype()), "_fft_c2c: expected a complex tensor; got ",
              scalar_type_name(self.dtype()));
  return op::_fft_c2c.call(self, dim, normalization, forward);
}

Tensor _fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided) {
  EMBER_CHECK(self.dtype() == kFloat || self.dtype() == kDouble,
              "_fft_r2c: expected a float or double tensor; got ", scalar_type_name(self.dtype()));
  EMBER_CHECK(!dim.empty(), "_fft_r2c: expected at least one dim");
  return op::_fft_r2c.call(self, dim, normalization, onesided);
}

Tensor _fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size) {
  EMBER_CHECK(is_complex(self.dtype()), "_fft_c2r: expected a complex tensor; got ",
              scalar_type_name(self.dtype()));
  EMBER_CHECK(!dim.empty() && last_dim_size >= 1 &&
                  self.sizes()[size_t(dim.back())] == last_dim_size / 2 + 1,
              "_fft_c2r: expected last_dim_size // 2 + 1 inputs along the last dim");
  return op::_fft_c2r.call(self, dim, normalization, last_dim_size);
}

}  // namespace ember
