// Copy with broadcasting and dtype conversion, and fill: the kernels behind to(), clone(), copy_.
// Compiled for the vectorizer: see Note [Vectorized elementwise] in cpu/loops.h.
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno", "fp-contract=off")
#include "ember/cpu/copy.h"

#include <complex>

#ifdef __SSE2__
#include <emmintrin.h>
#endif
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/loops.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/copy.h"

namespace ember::cpu {

namespace {

// Whether the copy would read the source across its rows: the destination is dense along the
// fastest dim and the source along the second, as in x.t().contiguous() or a permute's copy.
bool is_transpose(const TensorIter& it, int64_t elem) {
  return it.shape().size() >= 2 && it.numel() >= 1024 && it.strides(0)[0] == elem &&
         it.strides(1)[1] == elem && it.strides(1)[0] != elem;
}

#ifdef __SSE2__
// d[j * ds + i] = s[i * ss + j] for a 16 x 16 block of bytes, in registers: four rounds of
// interleaving rows k and k + 8 (each round rotates the row index's bits into the column index).
// Byte by byte, the transpose of a channels-last uint8 activation ran 4x slower than torch's.
inline void transpose16x16_bytes(const void* s_, int64_t ss, void* d_, int64_t ds) {
  const char* s = static_cast<const char*>(s_);
  char* d = static_cast<char*>(d_);
  __m128i a[16], b[16];
#pragma GCC unroll 16
  for (int i = 0; i < 16; ++i) a[i] = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i * ss));
#pragma GCC unroll 4
  for (int round = 0; round < 4; ++round) {
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      b[2 * k] = _mm_unpacklo_epi8(a[k], a[k + 8]);
      b[2 * k + 1] = _mm_unpackhi_epi8(a[k], a[k + 8]);
    }
#pragma GCC unroll 16
    for (int k = 0; k < 16; ++k) a[k] = b[k];
  }
#pragma GCC unroll 16
  for (int j = 0; j < 16; ++j) _mm_storeu_si128(reinterpret_cast<__m128i*>(d + j * ds), a[j]);
}
#endif

// The copy of is_transpose in square tiles, so both sides stay in cache: element by element, the
// source's reads would each touch a new cache line. Tasks are tiles in the source's row-major
// order, so consecutive tiles share the source's pages: a task of a whole column of tiles
// touched a new page per source row and measured 1.4x slower on 4096 x 4096 floats.
template <class T>
void transpose_copy(const TensorIter& it) {
  constexpr int64_t kTile = 32;
  const DimVector& shape = it.shape();
  const int64_t n0 = shape[0], n1 = shape[1];
  const int64_t tiles0 = (n0 + kTile - 1) / kTile, tiles1 = (n1 + kTile - 1) / kTile;
  const int64_t outer = it.numel() / (n0 * n1);
  const int64_t d1 = it.strides(0)[1] / int64_t(sizeof(T)),
                s0 = it.strides(1)[0] / int64_t(sizeof(T));
  parallel_for(0, outer * tiles0 * tiles1, std::max<int64_t>(1, kGrainSize / (kTile * kTile)),
               [&](int64_t b, int64_t e) {
                 for (int64_t t = b; t < e; ++t) {
                   char* dp = it.base(0);
                   const char* sp = it.base(1);
                   for (int64_t o = t / (tiles0 * tiles1), d = 2; d < int64_t(shape.size());
                        o /= shape[size_t(d)], ++d) {
                     dp += (o % shape[size_t(d)]) * it.strides(0)[size_t(d)];
                     sp += (o % shape[size_t(d)]) * it.strides(1)[size_t(d)];
                   }
                   T* dst = reinterpret_cast<T*>(dp);
                   const T* src = reinterpret_cast<const T*>(sp);
                   const int64_t i0 = (t / tiles1 % tiles0) * kTile, i1 = std::min(n0, i0 + kTile);
                   const int64_t j0 = (t % tiles1) * kTile, j1 = std::min(n1, j0 + kTile);
                   int64_t ib = i0, jb = j0;  // [i0, ib) x [j0, jb): done in 16 x 16 blocks
#ifdef __SSE2__
                   if constexpr (sizeof(T) == 1) {
                     ib = i0 + (i1 - i0) / 16 * 16;
                     jb = j0 + (j1 - j0) / 16 * 16;
                     for (int64_t i = i0; i < ib; i += 16)
                       for (int64_t j = j0; j < jb; j += 16)
                         transpose16x16_bytes(src + i * s0 + j, s0, dst + i + j * d1, d1);
                   }
#endif
                   for (int64_t j = j0; j < j1; ++j)
                     for (int64_t i = j < jb ? ib : i0; i < i1; ++i)
                       dst[i + j * d1] = src[i * s0 + j];
                 }
               });
}

template <class T>
constexpr bool is_complex_v = false;
template <class T>
constexpr bool is_complex_v<std::complex<T>> = true;

// One element converted as torch converts it: complex -> real keeps the real part (torch warns),
// real -> complex has a zero imaginary part, complex -> bool tests both parts.
template <class D, class S>
D convert(const S& v) {
  if constexpr (is_complex_v<D> && is_complex_v<S>) {
    return D(typename D::value_type(v.real()), typename D::value_type(v.imag()));
  } else if constexpr (is_complex_v<D>) {
    return D(typename D::value_type(static_cast<acc_t<S>>(v)), 0);
  } else if constexpr (std::is_same_v<D, bool>) {
    return v != S(0);
  } else if constexpr (!is_complex_v<S>) {
    return D(static_cast<acc_t<S>>(v));  // not reached: real pairs take the vector path
  } else {
    return D(static_cast<acc_t<typename S::value_type>>(v.real()));
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
// float32 -> int8 / uint8 as torch converts (through int32, truncating toward zero, keeping the
// low byte: 300.f -> 44, NaN and values past int32 -> 0), 32 at a time. The generic loop
// converted element by element (7.5x torch's time on 1M floats): float -> byte has no direct
// vector form, so GCC left it scalar. cvttps gives INT_MIN for NaN / out of range, as cvttss
// does for the scalar tail, so both parts agree with the scalar conversion torch compiles to.
__attribute__((target("avx2"))) void float_to_bytes_avx2(const float* s, uint8_t* d, int64_t n) {
  const __m256i low = _mm256_set1_epi32(0xFF);
  const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    __m256i v[4];
    for (int k = 0; k < 4; ++k)
      v[k] = _mm256_and_si256(_mm256_cvttps_epi32(_mm256_loadu_ps(s + i + 8 * k)), low);
    // the values are 0..255, so the saturating packs keep them; the packs interleave the two
    // 128-bit halves, which the permute puts back in order
    __m256i bytes =
        _mm256_packus_epi16(_mm256_packus_epi32(v[0], v[1]), _mm256_packus_epi32(v[2], v[3]));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm256_permutevar8x32_epi32(bytes, order));
  }
  for (; i < n; ++i) d[i] = uint8_t(_mm_cvttss_si32(_mm_set_ss(s[i])));
}

bool float_to_bytes(const Tensor& dst, const Tensor& src) {
  if (src.dtype() != kFloat || (dst.dtype() != kChar && dst.dtype() != kByte) ||
      kBestIsa == Isa::baseline || !dst.is_contiguous() || !src.is_contiguous() ||
      !dst.sizes().equals(src.sizes()))
    return false;
  const float* s = src.data_ptr<float>();
  uint8_t* d = static_cast<uint8_t*>(dst.data_ptr());
  parallel_for(0, dst.numel(), kGrainSize * 4,
               [&](int64_t b, int64_t e) { float_to_bytes_avx2(s + b, d + b, e - b); });
  return true;
}
#else
bool float_to_bytes(const Tensor&, const Tensor&) { return false; }
#endif

// Copies where either side is complex: plain strided loops (no vector ISA clones for these).
void complex_copy(const TensorIter& it, ScalarType dt, ScalarType st) {
  dispatch<kAllTypes | kComplexTypes>(dt, "copy_", [&](auto d) {
    using D = decltype(d);
    dispatch<kAllTypes | kComplexTypes>(st, "copy_", [&](auto s) {
      using S = decltype(s);
      it.for_each([&](char** p, const int64_t* st_, int64_t n) {
        for (int64_t i = 0; i < n; ++i)
          *reinterpret_cast<D*>(p[0] + i * st_[0]) =
              convert<D, S>(*reinterpret_cast<const S*>(p[1] + i * st_[1]));
      });
    });
  });
}

Tensor& copy_kernel(Tensor& dst, const Tensor& src) {
  if (dst.numel() == 0) return dst;
  if (dst.dtype() == src.dtype() && dst.is_contiguous() && src.is_contiguous() &&
      dst.sizes().equals(src.sizes())) {
    if (dst.data_ptr() != src.data_ptr()) {
      char* d = static_cast<char*>(dst.data_ptr());
      const char* s = static_cast<const char*>(src.data_ptr());
      parallel_for(0, int64_t(dst.nbytes()), kGrainSize * 8,
                   [&](int64_t b, int64_t e) { std::memcpy(d + b, s + b, size_t(e - b)); });
    }
    return dst;
  }
  if (float_to_bytes(dst, src)) return dst;
  TensorIter it({&dst, &src});
  if (dst.dtype() == src.dtype() && is_transpose(it, int64_t(dst.element_size()))) {
    dispatch<kAllTypes | kComplexTypes>(dst.dtype(), "copy_",
                                        [&](auto tag) { transpose_copy<decltype(tag)>(it); });
    return dst;
  }
  if (is_complex(dst.dtype()) || is_complex(src.dtype())) {
    complex_copy(it, dst.dtype(), src.dtype());
    return dst;
  }
  dispatch<kAllTypes>(dst.dtype(), "copy_", [&](auto d) {
    using D = decltype(d);
    dispatch<kAllTypes>(src.dtype(), "copy_", [&](auto s) {
      using S = decltype(s);
      if constexpr (std::is_same_v<D, bool>)
        unary_loop<D, S, Isa::avx2>(it, [](auto v) { return v != decltype(v)(0); });
      else unary_loop<D, S, Isa::avx2>(it, [](auto v) { return v; });
    });
  });
  return dst;
}

Tensor& fill_kernel(Tensor& self, const Scalar& value) {
  dispatch<kAllTypes | kComplexTypes>(self.dtype(), "fill_", [&](auto tag) {
    using T = decltype(tag);
    const T v = value.to<T>();
    TensorIter it({&self}, 1, WriteOverlap::kAllow);  // torch fills expanded tensors too
    it.for_each([&](char** p, const int64_t* s, int64_t n) {
      if (s[0] == sizeof(T)) {
        T* o = reinterpret_cast<T*>(p[0]);
        for (int64_t i = 0; i < n; ++i) o[i] = v;
      } else {
        for (int64_t i = 0; i < n; ++i) *reinterpret_cast<T*>(p[0] + i * s[0]) = v;
      }
    });
  });
  return self;
}

}  // namespace

Tensor& copy_(Tensor& dst, const Tensor& src) { return copy_kernel(dst, src); }

Tensor to_dtype(const Tensor& self, ScalarType dtype) {
  if (self.dtype() == dtype) return self;
  // torch converts a Python number's tensor through aten::to (Note [Profiler rows]).
  if (profiler::enabled() && self.impl()->is_wrapped_number) [[unlikely]] {
    profiler::OpRange to("to", self, dtype, false, false, std::nullopt);
    return profiler::to_copy_rows(
        self, dtype, [&] { return empty(self.sizes(), dtype, self.device()); },
        [&](Tensor& out) { copy_kernel(out, self); }, true);
  }
  Tensor out = empty(self.sizes(), dtype, self.device());
  copy_kernel(out, self);
  return out;
}

Tensor contiguous(const Tensor& self) {
  if (self.is_contiguous()) return self;
  Tensor out = empty(self.sizes(), self.dtype(), self.device());
  copy_kernel(out, self);
  return out;
}

Tensor& fill_(Tensor& self, const Scalar& value) { return fill_kernel(self, value); }

Tensor full(IntArrayRef sizes, const Scalar& value, ScalarType dtype) {
  Tensor out = empty(sizes, dtype);
  fill_kernel(out, value);
  return out;
}

EMBER_REGISTER_KERNEL(op::copy_, CPU, copy_kernel);
EMBER_REGISTER_KERNEL(op::fill_, CPU, fill_kernel);

}  // namespace ember::cpu
