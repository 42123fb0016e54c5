// The float row primitives of cpu/softmax_rows.h, built for SSE2, AVX2+FMA and AVX-512 from one
// source (softmax_rows_impl.inc); row_kernels() picks once per process.
#include "ember/cpu/softmax_rows.h"

#include "ember/cpu/isa.h"
// vmath's templates are declared outside the target pragmas below and always inlined into the
// functions there, so the vector-ABI note GCC gives for their signatures does not apply.
#pragma GCC diagnostic ignored "-Wpsabi"
#include "ember/cpu/vmath.h"

namespace ember::cpu {

namespace sse {
#define EMBER_VW 4
#include "ember/cpu/softmax_rows_impl.inc"
#undef EMBER_VW
}  // namespace sse

#if defined(__x86_64__) && defined(__GNUC__)
#define EMBER_HAVE_WIDE_ROWS 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#define EMBER_VW 8
#include "ember/cpu/softmax_rows_impl.inc"
#undef EMBER_VW
}  // namespace avx2
#pragma GCC pop_options
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512")
namespace avx512 {
#define EMBER_VW 16
#include "ember/cpu/softmax_rows_impl.inc"
#undef EMBER_VW
}  // namespace avx512
#pragma GCC pop_options
#endif

const RowKernels& row_kernels() {
  static const RowKernels& chosen = [&]() -> const RowKernels& {
#ifdef EMBER_HAVE_WIDE_ROWS
    if (kBestIsa == Isa::avx512) return avx512::kernels;
    if (kBestIsa == Isa::avx2) return avx2::kernels;
#endif
    return sse::kernels;
  }();
  return chosen;
}

}  // namespace ember::cpu
