#pragma once
// Runs a hot loop compiled for the best instruction set this CPU has. See Note [ISA clones].
//
// Note [ISA clones]
// The library is built for the baseline x86-64 ISA (SSE2). with_best_isa(f) calls f through a
// function compiled for AVX2+FMA when the CPU supports it; `flatten` inlines f and everything it
// calls there, so the loop inside f is vectorized 8 floats wide. Other CPUs run f as compiled.
// Only loops inside f benefit: work handed to another thread (parallel_for) must call
// with_best_isa inside the chunk.

namespace ember::cpu {

// Sanitizer builds skip the clones: instrumenting every loop twice made them build for an hour.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
// __builtin_cpu_init first: this runs in a static initializer, possibly before libgcc's own.
inline const bool kHasAvx2 = [] {
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}();

template <class F>
__attribute__((target("avx2,fma"), flatten)) void call_avx2(const F& f) {
  f();
}

template <class F>
void with_best_isa(const F& f) {
  if (kHasAvx2) call_avx2(f);
  else f();
}
#else
template <class F>
void with_best_isa(const F& f) {
  f();
}
#endif

}  // namespace ember::cpu
