#pragma once
// OpenBLAS's thread count beside ember's pool (Note [BLAS threads]).
//
// Note [BLAS threads]
// OpenBLAS has its own threads. A single large product uses them, set to ember's thread count;
// work made of many independent products (batches of bmm, chunks of a convolution) runs the
// products on ember's pool instead, with OpenBLAS held to one thread, so the two pools never nest
// and never spin against each other.
#include <cblas.h>

#include <atomic>

#include "ember/core/parallel.h"

namespace ember::cpu {

/// Sets OpenBLAS's thread count, calling into it only on a change (small products are hot).
inline void set_blas_threads(int n) {
  static std::atomic<int> current{-1};
  if (current.exchange(n) != n) openblas_set_num_threads(n);
}

/// OpenBLAS at ember's thread count, for one product at a time.
inline void use_blas_threads() { set_blas_threads(get_num_threads()); }

/// OpenBLAS single-threaded for the guard's lifetime, while ember's pool runs the products.
class SerialBlas {
 public:
  SerialBlas() { set_blas_threads(1); }
  ~SerialBlas() { use_blas_threads(); }
  SerialBlas(const SerialBlas&) = delete;
  SerialBlas& operator=(const SerialBlas&) = delete;
};

}  // namespace ember::cpu
