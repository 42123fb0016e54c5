#pragma once
// The per-ISA pieces of sgemm (Note [SGEMM]): one register-tile kernel and two packers per tier,
// chosen once by the blocking and threading code in sgemm.cpp.
#include <algorithm>
#include <cstdint>

namespace ember::cpu::sgemm_detail {

// Register tile height, and the width of a packed panel of b (Note [SGEMM]).
constexpr int64_t kMr = 6, kNr = 64;

struct Kernels {
  // c[0..rows) x [0..w) = (load ? scale * c : 0) + A (rows x kc) @ bp (kc x w, a packed panel of
  // width w rounded up to 16 floats), A(r, p) = a[r * ar + p * ac]; rows <= kMr, w <= kNr.
  // `next` is the next tile of c, prefetched.
  void (*panel)(int64_t rows, int64_t w, int64_t kc, const float* a, int64_t ar, int64_t ac,
                const float* bp, float* c, int64_t ldc, bool load, float scale, const float* next);
  // Packs B(p, j) = b[p * rs + j * cs], p < kc, j < w <= kNr, as kc rows of w rounded up to 16
  // floats, zero-padded.
  void (*pack_b)(int64_t kc, int64_t w, const float* b, int64_t rs, int64_t cs, float* dst);
  // Packs alpha * A(i, p) = alpha * a[i * rs + p * cs], i < mc, p < kc, as tiles of kMr rows,
  // each kc steps of kMr floats.
  void (*pack_a)(int64_t mc, int64_t kc, float alpha, const float* a, int64_t rs, int64_t cs,
                 float* dst);
};

// Columns [j, w) of B(p, j) = b[p * rs + j * cs], p < kc, copied element by element into packed
// rows ldp floats apart, and each row's padding past w zeroed: what a tier's pack_b leaves to
// plain loads (any strides, ragged ends).
inline void pack_b_columns(int64_t kc, int64_t j, int64_t w, const float* b, int64_t rs, int64_t cs,
                           float* dst, int64_t ldp) {
  for (int64_t p = 0; p < kc; ++p) {
    for (int64_t q = j; q < w; ++q) dst[p * ldp + q] = b[p * rs + q * cs];
    std::fill(dst + p * ldp + w, dst + (p + 1) * ldp, 0.0f);
  }
}

extern const Kernels kAvx512Kernels;
extern const Kernels kAvx2Kernels;

}  // namespace ember::cpu::sgemm_detail
