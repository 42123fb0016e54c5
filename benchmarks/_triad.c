// STREAM triad a[i] = b[i] + s * c[i] on T threads over arrays of N doubles each (chosen by the
// caller far larger than the last-level cache). Counts 24 bytes per element, as STREAM does.
// Prints "gbs <best of trials>". Usage: _triad THREADS N TRIALS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double *a, *b, *c;
static long n;
static int threads;

typedef struct {
  int id;
  int init;
} job;

static void *part(void *arg) {
  job *j = arg;
  long lo = n * j->id / threads, hi = n * (j->id + 1) / threads;
  if (j->init) {  // first touch by the thread that later streams the slice (NUMA placement)
    for (long i = lo; i < hi; ++i) a[i] = 0.0, b[i] = 1.0, c[i] = 2.0;
  } else {
    const double s = 3.0;
    for (long i = lo; i < hi; ++i) a[i] = b[i] + s * c[i];
  }
  return NULL;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double run(int init) {
  pthread_t tid[256];
  job jobs[256];
  double t0 = now();
  for (int i = 0; i < threads; ++i) {
    jobs[i] = (job){i, init};
    pthread_create(&tid[i], NULL, part, &jobs[i]);
  }
  for (int i = 0; i < threads; ++i) pthread_join(tid[i], NULL);
  return now() - t0;
}

int main(int argc, char **argv) {
  threads = argc > 1 ? atoi(argv[1]) : 1;
  n = argc > 2 ? atol(argv[2]) : 1L << 25;
  int trials = argc > 3 ? atoi(argv[3]) : 10;
  if (threads < 1 || threads > 256 || n < threads) return 2;
  n = (n + 7) & ~7L;  // aligned_alloc wants a multiple of the 64-byte alignment
  a = aligned_alloc(64, n * sizeof(double));
  b = aligned_alloc(64, n * sizeof(double));
  c = aligned_alloc(64, n * sizeof(double));
  if (!a || !b || !c) return 3;
  run(1);
  double best = 1e30;
  for (int t = 0; t < trials; ++t) {
    double s = run(0);
    if (s < best) best = s;
  }
  if (a[n / 2] != 7.0) return 4;  // checks the result and keeps the stores alive
  printf("gbs %.3f\n", 24.0 * n / best * 1e-9);
  return 0;
}
