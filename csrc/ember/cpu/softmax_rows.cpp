// The float row primitives of cpu/softmax_rows.h, built for SSE2 and for AVX2+FMA from one
// source (softmax_rows_impl.inc); row_kernels() picks once per process.
#include "ember/cpu/softmax_rows.h"

namespace ember::cpu {

namespace sse {
#define EMBER_VW 4
#include "ember/cpu/softmax_rows_impl.inc"
#undef EMBER_VW
}  // namespace sse

#if defined(__x86_64__) && defined(__GNUC__)
#define EMBER_HAVE_AVX2_ROWS 1
#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#define EMBER_VW 8
#include "ember/cpu/softmax_rows_impl.inc"
#undef EMBER_VW
}  // namespace avx2
#pragma GCC pop_options
#endif

const RowKernels& row_kernels() {
  static const RowKernels& chosen = [&]() -> const RowKernels& {
#ifdef EMBER_HAVE_AVX2_ROWS
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) return avx2::kernels;
#endif
    return sse::kernels;
  }();
  return chosen;
}

}  // namespace ember::cpu
