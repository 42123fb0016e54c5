// FMA peak of T threads: each runs CHAINS independent FMA chains on the widest vector registers
// the compiler targets (-march=native), more chains than FMA latency x ports, so the FMA units
// never wait. Prints "gflops <best of trials> isa <name>". Usage: _fma_peak THREADS SECONDS
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__AVX512F__)
typedef __m512 vec;
#define LANES 16
#define ISA "avx512"
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define SET1(x) _mm512_set1_ps(x)
#define HSUM(v) _mm512_reduce_add_ps(v)
#elif defined(__FMA__)
typedef __m256 vec;
#define LANES 8
#define ISA "avx2"
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define SET1(x) _mm256_set1_ps(x)
static float HSUM(vec v) {
  float f[8];
  _mm256_storeu_ps(f, v);
  return f[0] + f[1] + f[2] + f[3] + f[4] + f[5] + f[6] + f[7];
}
#else
#error "no FMA instructions on this target"
#endif

// 12 chains: enough for 2 FMA ports x 4-6 cycles latency, few enough for AVX2's 16 registers.
#define CHAINS 12

static long g_iters;
static volatile float g_sink;

static void *chains(void *arg) {
  (void)arg;
  vec acc[CHAINS];
  for (int c = 0; c < CHAINS; ++c) acc[c] = SET1(0.001f * c);
  // acc = acc * 0.999999 + 1e-7 converges to 0.1: no overflow, no denormals.
  const vec x = SET1(0.999999f), y = SET1(1e-7f);
  for (long i = 0; i < g_iters; ++i) {
#pragma GCC unroll 12
    for (int c = 0; c < CHAINS; ++c) acc[c] = FMA(acc[c], x, y);
  }
  float s = 0;
  for (int c = 0; c < CHAINS; ++c) s += HSUM(acc[c]);
  g_sink = s;  // keeps the loop alive
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double run(int threads) {
  pthread_t tid[256];
  double t0 = now();
  for (int i = 0; i < threads; ++i) pthread_create(&tid[i], NULL, chains, NULL);
  for (int i = 0; i < threads; ++i) pthread_join(tid[i], NULL);
  return now() - t0;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  double seconds = argc > 2 ? atof(argv[2]) : 0.2;
  if (threads < 1 || threads > 256) return 2;
  g_iters = 100000;  // calibrate so one trial lasts about `seconds`
  double t = run(1);
  g_iters = (long)(g_iters * seconds / t) + 1;
  double best = 1e30;
  for (int trial = 0; trial < 5; ++trial) {
    t = run(threads);
    if (t < best) best = t;
  }
  double flops = 2.0 * threads * (double)g_iters * CHAINS * LANES;
  printf("gflops %.3f isa %s\n", flops / best * 1e-9, ISA);
  return 0;
}
