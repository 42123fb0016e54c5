#pragma once
// The convolution's own float GEMM for AVX-512 CPUs. See Note [Conv GEMM].
#include <cstdint>

namespace ember::cpu {

// Note [Conv GEMM]
// The convolution's forward and input-gradient GEMMs multiply a small matrix (the weight, or its
// transpose) by a wide row-major column matrix. OpenBLAS may run its AVX2 kernels on AVX-512 CPUs
// it does not know (or when told to by OPENBLAS_CORETYPE), at half the speed this shape allows.
// conv_sgemm computes it with AVX-512 register tiles of 6 rows x 64 columns (24 accumulators). A
// block of 128 rows of a 64-column panel of b is copied into an L1-sized buffer that every row
// tile then reads sequentially (unless b's rows are exactly one panel wide already); a transposed
// A is packed once so that a k step's broadcasts are adjacent. Each output is summed over k in
// ascending order in blocks of a fixed size, so results do not depend on threads or tiling.

/// True when this CPU runs conv_sgemm.
bool has_conv_sgemm();

/// c (m x n, row-major, ldc) = A (m x k) @ b (k x n, row-major, ldb), where A(i, p) is
/// a[i * a_row + p * a_col] (a row-major matrix or the transpose of one). Needs has_conv_sgemm().
void conv_sgemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t a_row, int64_t a_col,
                const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace ember::cpu
