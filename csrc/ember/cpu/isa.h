#pragma once
// Runs a hot loop compiled for the best instruction set this CPU has. See Note [ISA clones].
//
// Note [ISA clones]
// The library is built for the baseline x86-64 ISA (SSE2). with_best_isa(f) calls f through a
// function compiled for AVX-512 (F, BW, VL, DQ) when the CPU has it, else for AVX2+FMA, else f
// as compiled; `flatten` inlines f and everything it calls there, so the loop inside f is
// vectorized 16 or 8 floats wide. The AVX-512 clone asks for 512-bit vectors explicitly: GCC's
// tunings for AVX-512 cores would otherwise keep 256-bit ones. Only loops inside f benefit:
// work handed to another thread (parallel_for) must call with_best_isa inside the chunk.
// Each clone compiles the loops once more, so memory-bound kernel files (binary, copy), where
// 16 lanes measured no faster than 8, cap the tier at AVX2 (with_best_isa<Isa::avx2>): the
// AVX-512 clone added 40% to their compile time.

#include <algorithm>
#include <cstdlib>
#include <string_view>

namespace ember::cpu {

enum class Isa { baseline, avx2, avx512 };

// Note [CPU capability]
// ATEN_CPU_CAPABILITY, as torch reads it once at start-up (`default`, `avx2` or `avx512`), caps
// the tier: every clone above it, ember's AVX-512 sgemm, its VNNI int8 kernels and oneDNN's
// float32, bf16 and int8 routes (which ember takes only with AVX-512) are then skipped, so a test
// can run the AVX2 and baseline kernels on an AVX-512 machine (in a subprocess). Other values are
// ignored, as torch ignores them. _C._get_cpu_capability() reports the tier in torch's words.
inline Isa cap_by_environment(Isa best) {
  const char* cap = std::getenv("ATEN_CPU_CAPABILITY");
  if (cap == nullptr) return best;
  const std::string_view c(cap);
  if (c == "default") return Isa::baseline;
  if (c == "avx2") return std::min(best, Isa::avx2);
  return best;
}

#if defined(__x86_64__) && defined(__GNUC__)
// __builtin_cpu_init first: this runs in a static initializer, possibly before libgcc's own.
inline const Isa kBestIsa = [] {
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
      __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512dq"))
    return cap_by_environment(Isa::avx512);
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    return cap_by_environment(Isa::avx2);
  return Isa::baseline;
}();
#else
inline const Isa kBestIsa = Isa::baseline;
#endif

// Sanitizer builds skip the clones: instrumenting every loop twice made them build for an
// hour.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && \
    !defined(__SANITIZE_ADDRESS__)
template <class F>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"),
               flatten)) void
call_avx512(const F& f) {
  f();
}

template <class F>
__attribute__((target("avx2,fma"), flatten)) void call_avx2(const F& f) {
  f();
}

/// Calls f through the clone of the best ISA this CPU has, up to Widest.
template <Isa Widest = Isa::avx512, class F>
void with_best_isa(const F& f) {
  if constexpr (Widest == Isa::avx512) {
    if (kBestIsa == Isa::avx512) return call_avx512(f);
  }
  if (kBestIsa != Isa::baseline) call_avx2(f);
  else f();
}
#else
template <Isa Widest = Isa::avx512, class F>
void with_best_isa(const F& f) {
  f();
}
#endif

}  // namespace ember::cpu
