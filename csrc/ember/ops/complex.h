#pragma once
// Complex numbers and the FFT kernel (ops/complex.cpp); the Python layer (ember.fft) builds the
// real-input and Hermitian transforms from _fft_c2c.
#include "ember/core/tensor.h"

namespace ember {

/// The complex conjugate as a new tensor; real tensors come back unchanged.
Tensor conj_physical(const Tensor& self);
/// The discrete Fourier transform over `dim` of a complex tensor (torch's _fft_c2c):
/// forward uses exp(-2*pi*i*jk/n), backward exp(+...); normalization 0 none, 1 1/sqrt(n), 2 1/n.
Tensor _fft_c2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool forward);

/// Real-to-complex transform (onesided) of a float/double tensor; no autograd (see schema).
Tensor _fft_r2c(const Tensor& self, IntArrayRef dim, int64_t normalization, bool onesided);
/// Complex-to-real inverse transform to last_dim_size values along dim.back(); no autograd.
Tensor _fft_c2r(const Tensor& self, IntArrayRef dim, int64_t normalization, int64_t last_dim_size);

}  // namespace ember
