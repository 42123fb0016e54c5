// SLEEF's u10 functions over a float array, at one vector width (see _vector_math.cpp):
// compiled with -mavx512f -DW=16 or with -mavx2 -mfma -DW=8.
#include <immintrin.h>
#include <sleef.h>

#include <cstdint>

#if W == 16
#define V __m512
#define LOAD _mm512_loadu_ps
#define STORE _mm512_storeu_ps
#define SET1 _mm512_set1_ps
#define ADD _mm512_add_ps
#define SUB _mm512_sub_ps
#define DIV _mm512_div_ps
#define F(name) Sleef_##name##f16_u10avx512f
#define LOOP(name) sleef512_##name
#else
#define V __m256
#define LOAD _mm256_loadu_ps
#define STORE _mm256_storeu_ps
#define SET1 _mm256_set1_ps
#define ADD _mm256_add_ps
#define SUB _mm256_sub_ps
#define DIV _mm256_div_ps
#define F(name) Sleef_##name##f8_u10avx2
#define LOOP(name) sleef256_##name
#endif

#define SLEEF_LOOP(name, expr)                           \
  void LOOP(name)(const float* a, float* o, int64_t n) { \
    for (int64_t i = 0; i < n; i += W) {                 \
      V x = LOAD(a + i);                                 \
      STORE(o + i, expr);                                \
    }                                                    \
  }
SLEEF_LOOP(exp, F(exp)(x))
SLEEF_LOOP(log, F(log)(x))
SLEEF_LOOP(tanh, F(tanh)(x))
SLEEF_LOOP(erf, F(erf)(x))
// SLEEF has no sigmoid: 1 / (1 + e^-x), as a caller would write it.
SLEEF_LOOP(sigmoid, DIV(SET1(1.0f), ADD(SET1(1.0f), F(exp)(SUB(SET1(0.0f), x)))))
