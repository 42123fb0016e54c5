#pragma once
// Elementwise loops over a TensorIter: a contiguous path the compiler vectorizes, a path for a
// broadcast scalar operand, and the general strided path.
#include "ember/cpu/tensor_iter.h"

namespace ember::cpu {

// Kernels compute in acc_t: 16-bit floats are widened to float before the functor sees them.
template <class T>
inline acc_t<T> up(T v) {
  return v;
}
template <class T>
inline acc_t<T> load(const char* p) {
  return *reinterpret_cast<const T*>(p);
}

/// out[i] = f(up(a[i])) with a of type A, out of type O.
template <class O, class A, class F>
void unary_loop(const TensorIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(O) && s[1] == sizeof(A)) {
      O* o = reinterpret_cast<O*>(p[0]);
      const A* a = reinterpret_cast<const A*>(p[1]);
      for (int64_t i = 0; i < n; ++i) o[i] = O(f(up(a[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) = O(f(load<A>(p[1] + i * s[1])));
    }
  });
}

/// out[i] = f(up(a[i]), up(b[i])).
template <class O, class A, class B, class F>
void binary_loop(const TensorIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    O* o = reinterpret_cast<O*>(p[0]);
    const A* a = reinterpret_cast<const A*>(p[1]);
    const B* b = reinterpret_cast<const B*>(p[2]);
    if (s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == sizeof(B)) {
      for (int64_t i = 0; i < n; ++i) o[i] = O(f(up(a[i]), up(b[i])));
    } else if (s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == 0) {
      const acc_t<B> bv = *b;
      for (int64_t i = 0; i < n; ++i) o[i] = O(f(up(a[i]), bv));
    } else if (s[0] == sizeof(O) && s[1] == 0 && s[2] == sizeof(B)) {
      const acc_t<A> av = *a;
      for (int64_t i = 0; i < n; ++i) o[i] = O(f(av, up(b[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            O(f(load<A>(p[1] + i * s[1]), load<B>(p[2] + i * s[2])));
    }
  });
}

/// out[i] = f(up(a[i]), up(b[i]), up(c[i])).
template <class O, class A, class B, class C, class F>
void ternary_loop(const TensorIter& it, F f) {
  it.for_each([&](char** p, const int64_t* s, int64_t n) {
    if (s[0] == sizeof(O) && s[1] == sizeof(A) && s[2] == sizeof(B) && s[3] == sizeof(C)) {
      O* o = reinterpret_cast<O*>(p[0]);
      const A* a = reinterpret_cast<const A*>(p[1]);
      const B* b = reinterpret_cast<const B*>(p[2]);
      const C* c = reinterpret_cast<const C*>(p[3]);
      for (int64_t i = 0; i < n; ++i) o[i] = O(f(up(a[i]), up(b[i]), up(c[i])));
    } else {
      for (int64_t i = 0; i < n; ++i)
        *reinterpret_cast<O*>(p[0] + i * s[0]) =
            O(f(load<A>(p[1] + i * s[1]), load<B>(p[2] + i * s[2]), load<C>(p[3] + i * s[3])));
    }
  });
}

}  // namespace ember::cpu
