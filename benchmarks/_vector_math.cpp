// Micro-benchmark of cpu/vmath.h against SLEEF's u10 functions (built by vector_math.py).
// Prints one line per (function, implementation): name impl ns_per_element max_ulp.
// Single thread, N floats in and out, best of R passes; ULP error against double libm.
// The SLEEF loops are in _vector_math_sleef.cpp, compiled once with -mavx2 and once with
// -mavx512f (sleef.h declares a vector width's functions only when its ISA macro is on).
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic", "no-trapping-math", \
                     "no-math-errno")
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "ember/cpu/vmath.h"

using namespace ember::cpu;

template <class F>
__attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx2,fma,prefer-vector-width=512"),
               flatten)) void
own512(const float* __restrict a, float* __restrict o, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}
template <class F>
__attribute__((target("avx2,fma"), flatten)) void own256(const float* __restrict a,
                                                         float* __restrict o, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) o[i] = f(a[i]);
}

#ifdef HAVE_SLEEF
#define DECL(name)                                           \
  void sleef512_##name(const float* a, float* o, int64_t n); \
  void sleef256_##name(const float* a, float* o, int64_t n);
// clang-format off
DECL(exp)
DECL(log)
DECL(tanh)
DECL(erf)
DECL(sigmoid)
// clang-format on
#endif

struct Fn {
  const char* name;
  float lo, hi;
  double (*ref)(double);
  void (*own512)(const float*, float*, int64_t);
  void (*own256)(const float*, float*, int64_t);
  void (*s512)(const float*, float*, int64_t);
  void (*s256)(const float*, float*, int64_t);
};

#define OWN(f)                                                                                \
  [](const float* a, float* o, int64_t n) { own512(a, o, n, [](float x) { return f(x); }); }, \
      [](const float* a, float* o, int64_t n) { own256(a, o, n, [](float x) { return f(x); }); }
#ifdef HAVE_SLEEF
#define SLEEF(name) sleef512_##name, sleef256_##name
#else
#define SLEEF(name) nullptr, nullptr
#endif

double sigmoid_ref(double x) {
  return x >= 0 ? 1 / (1 + std::exp(-x)) : std::exp(x) / (1 + std::exp(x));
}
double exp_ref(double x) { return std::exp(x); }
double log_ref(double x) { return std::log(x); }
double tanh_ref(double x) { return std::tanh(x); }
double erf_ref(double x) { return std::erf(x); }

double ulp(float got, double ref) {
  if (std::isnan(got) && std::isnan(ref)) return 0;
  float r = float(ref);
  if (std::isinf(r)) return got == r ? 0 : INFINITY;
  float a = std::fabs(r);
  double spacing = double(std::nextafter(a, INFINITY)) - double(a);
  return std::fabs(double(got) - ref) / spacing;
}

int main(int argc, char** argv) {
  const int64_t n = argc > 1 ? std::atoll(argv[1]) : (1 << 22);
  const int reps = argc > 2 ? std::atoi(argv[2]) : 20;
  Fn fns[] = {
      {"exp", -87.0f, 88.0f, exp_ref, OWN(fast_exp), SLEEF(exp)},
      {"log", 1e-30f, 1e30f, log_ref, OWN(fast_log), SLEEF(log)},
      {"tanh", -10.0f, 10.0f, tanh_ref, OWN(fast_tanh), SLEEF(tanh)},
      {"sigmoid", -20.0f, 20.0f, sigmoid_ref, OWN(fast_sigmoid), SLEEF(sigmoid)},
      {"erf", -4.5f, 4.5f, erf_ref, OWN(fast_erf), SLEEF(erf)},
  };
  std::vector<float> a(n), o(n);
  std::mt19937 gen(0);
  for (const Fn& f : fns) {
    // log: log-uniform inputs; the others uniform
    if (std::strcmp(f.name, "log") == 0) {
      std::uniform_real_distribution<float> d(std::log(f.lo), std::log(f.hi));
      for (auto& v : a) v = std::exp(d(gen));
    } else {
      std::uniform_real_distribution<float> d(f.lo, f.hi);
      for (auto& v : a) v = d(gen);
    }
    // ULP check on a dense sweep: every 64th float of the range plus the random inputs
    std::vector<float> sweep(a.begin(), a.begin() + std::min<int64_t>(n, 1 << 20));
    for (float x = f.lo; x < f.hi; x = std::nextafter(x, INFINITY) + std::fabs(x) * 1e-6f + 1e-30f)
      sweep.push_back(x);
    sweep.resize(sweep.size() / 16 * 16);
    std::vector<float> so(sweep.size());
    struct {
      const char* impl;
      void (*run)(const float*, float*, int64_t);
    } impls[] = {{"own-avx512", f.own512},
                 {"own-avx2", f.own256},
                 {"sleef-avx512", f.s512},
                 {"sleef-avx2", f.s256}};
    for (auto& im : impls) {
      if (!im.run) continue;
      double best = 1e30;
      for (int r = 0; r < reps; ++r) {
        auto t0 = std::chrono::steady_clock::now();
        im.run(a.data(), o.data(), n);
        auto t1 = std::chrono::steady_clock::now();
        best = std::min(best, std::chrono::duration<double, std::nano>(t1 - t0).count() / n);
      }
      im.run(sweep.data(), so.data(), int64_t(sweep.size()));
      double worst = 0;
      for (size_t i = 0; i < sweep.size(); ++i)
        worst = std::max(worst, ulp(so[i], f.ref(double(sweep[i]))));
      std::printf("%s %s %.4f %.3f\n", f.name, im.impl, best, worst);
    }
  }
  return 0;
}
