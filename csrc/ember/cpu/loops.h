#pragma once
// Elementwise loops over a TensorIter: a contiguous path the compiler vectorizes, paths for a
// broadcast scalar operand, and the general strided path. See Note [Vectorized elementwise].
//
// Note [Vectorized elementwise]
// At -O2, GCC 12 uses the very-cheap vectorizer cost model, which rejects nearly every loop with
// an unknown trip count, and it keeps ternaries as branches (relu on random data mispredicts
// half the time). The kernel files that include this header start with
//   #pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math",
//                        "no-math-errno", "fp-contract=off")
// so these loops vectorize and if-convert; fp-contract=off keeps every ISA's result bitwise
// the same as the scalar expression. The contiguous and scalar paths run through
// with_best_isa<Widest> (Note [ISA clones]); the functor is inlined there. An in-place
// operand (out == input) gets its own loop: the vectorizer's run-time alias check would
// otherwise reject that exact overlap and fall back to scalar code. The loops take their bound,
// pointers and functor by value (dense_loop): read through a lambda's closure, they may alias the
// output's stores (an 8-bit store may alias anything, an int64 one the int64 bound), so GCC
// reloaded them every iteration and left the loop scalar (int8 and int64 add ran ~10x slower
// than int32).
#include <cstdint>
#include <type_traits>

#include "ember/cpu/isa.h"
#include "ember/cpu/tensor_iter.h"

namespace ember::cpu {

// Kernels compute in acc_t: 16-bit floats are widened to float before the functor sees them.
template <class T>
inline acc_t<T> load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}
// Element i of a dense operand, widened. A bool is read as its byte: GCC 12 cannot vectorize a
// load of C++ bool, so where(mask, ...) and logical ops would stay scalar (and branchy).
template <class T>
inline acc_t<T> ld(const T* p, int64_t i) {
  if constexpr (std::is_same_v<T, bool>) return reinterpret_cast<const uint8_t*>(p)[i] != 0;
  else return p[i];
}

// o[i] = f(in[i]...) over [0, n); in place (dense_loop_inplace) o is also the first operand.
template <class O, class F, class... In>
inline void dense_loop(O* o, int64_t n, F f, const In*... in) {
  for (int64_t i = 0; i < n; ++i) o[i] = O(f(ld(in, i)...));
}
template <class O, class F, class... In>
inline void dense_loop_inplace(O* o, int64_t n, F f, const In*... in) {
  for (int64_t i = 0; i < n; ++i) o[i] = O(f(ld(o, i), ld(in, i)...));
}

/// out[i] = f(a[i]) computed in acc_t, with a of type A, out of type O.
template <class O, class A, Isa Widest = Isa::avx512, class F>
void unary_loop(const TensorIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    if (s[0] == sizeof(O) && s[1] == sizeof(A)) {
      with_best_isa<Widest>([o, a, n, &f] {
        if constexpr (std::is_same_v<O, A>) {
          if (o == a) return dense_loop_inplace(o, n, f);
        }
        dense_loop(o, n, f, a);
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = O(f(load<A>(p[1] + i * s[1])));
    }
  });
}

/// out[i] = f(a[i], b[i]).
template <class O, class A, class B, Isa Widest = Isa::avx512, class F>
void binary_loop(const TensorIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    const B* b = reinterpret_cast<const B*>(p[2]);
    const bool dense_o = s[0] == sizeof(O), dense_a = s[1] == sizeof(A),
               dense_b = s[2] == sizeof(B);
    if (dense_o && dense_a && dense_b) {
      with_best_isa<Widest>([o, a, b, n, &f] {
        if constexpr (std::is_same_v<O, A>) {
          if (o == a) return dense_loop_inplace(o, n, f, b);
        }
        dense_loop(o, n, f, a, b);
      });
    } else if (dense_o && dense_a && s[2] == 0) {
      const acc_t<B> bv = *b;
      with_best_isa<Widest>([o, a, bv, n, &f] {
        auto fb = [f, bv](auto x) { return f(x, bv); };
        if constexpr (std::is_same_v<O, A>) {
          if (o == a) return dense_loop_inplace(o, n, fb);
        }
        dense_loop(o, n, fb, a);
      });
    } else if (dense_o && s[1] == 0 && dense_b) {
      const acc_t<A> av = *a;
      with_best_isa<Widest>([o, av, b, n, &f] {
        dense_loop(
            o, n, [f, av](auto y) { return f(av, y); }, b);
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            O(f(load<A>(p[1] + i * s[1]), load<B>(p[2] + i * s[2])));
    }
  });
}

/// out[i] = f(a[i], b[i], c[i]).
template <class O, class A, class B, class C, Isa Widest = Isa::avx512, class F>
void ternary_loop(const TensorIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    const B* b = reinterpret_cast<const B*>(p[2]);
    const C* c = reinterpret_cast<const C*>(p[3]);
    const bool dense = s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == sizeof(B);
    if (dense && s[3] == sizeof(C)) {
      with_best_isa<Widest>([o, a, b, c, n, &f] { dense_loop(o, n, f, a, b, c); });
    } else if (dense && s[3] == 0) {  // e.g. where(mask, x, 0)
      const acc_t<C> cv = *c;
      with_best_isa<Widest>([o, a, b, cv, n, &f] {
        dense_loop(
            o, n, [f, cv](auto x, auto y) { return f(x, y, cv); }, a, b);
      });
    } else if (s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == 0 && s[3] == sizeof(C)) {
      const acc_t<B> bv = *b;
      with_best_isa<Widest>([o, a, bv, c, n, &f] {
        dense_loop(
            o, n, [f, bv](auto x, auto z) { return f(x, bv, z); }, a, c);
      });
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            O(f(load<A>(p[1] + i * s[1]), load<B>(p[2] + i * s[2]), load<C>(p[3] + i * s[3])));
    }
  });
}

}  // namespace ember::cpu
