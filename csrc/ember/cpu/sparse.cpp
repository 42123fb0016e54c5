// CPU kernels of the sparse products: CSR @ dense, one task per block of rows, and the product
// of two dense matrices sampled at a sparse pattern. See Note [Sparse mm kernel].
#include <algorithm>
#include <cstring>

#include "ember/core/parallel.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/isa.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/sparse.h"

// The 64-byte vector helpers below are inline and only ever run inside an ISA clone; GCC's note
// that their ABI differs between ISAs concerns calls across object files, which never happen.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace ember::cpu {

namespace {

constexpr uint32_t kSparseTypes = type_bit(kFloat) | type_bit(kDouble);

// Note [Sparse mm kernel]
// Row r of CSR @ dense is the sum over the row's entries (c, v) of v * dense[c, :]. Each output
// row is computed in column blocks of up to four 64-byte vectors held in registers (GCC's vector
// extension; the ISA clones lower them to zmm, ymm pairs or xmm quads), accumulated over the
// row's entries and written once; rows are independent, so they split over the pool's threads
// with no reduction. The loop runs in the best ISA clone (Note [ISA clones]). An accumulator in
// a local array instead stayed in memory (a store and reload per entry) and ran 3x slower.
// dense rows are gathered at random, which is why the dense operand is made contiguous first:
// a row is then one run of memory.
template <class T>
struct VecOf;
template <>
struct VecOf<float> {
  typedef float type __attribute__((vector_size(64)));
};
template <>
struct VecOf<double> {
  typedef double type __attribute__((vector_size(64)));
};
template <class T>
using Vec = typename VecOf<T>::type;

template <class T>
inline Vec<T> loadu(const T* p) {
  Vec<T> v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}

template <class T>
inline void storeu(T* p, const Vec<T>& v) {
  std::memcpy(p, &v, sizeof(v));
}

// out[k : k + NV * lanes] of one row from its entries [j0, j1).
template <class T, int NV>
inline void row_block(const int64_t* col, const T* val, const T* dense, T* o, int64_t j0,
                      int64_t j1, int64_t n, int64_t k) {
  constexpr int64_t L = int64_t(sizeof(Vec<T>) / sizeof(T));
  Vec<T> acc[NV] = {};
  for (int64_t j = j0; j < j1; ++j) {
    T a = val[j];
    const T* b = dense + col[j] * n + k;
    for (int v = 0; v < NV; ++v) acc[v] += a * loadu(b + v * L);
  }
  for (int v = 0; v < NV; ++v) storeu(o + k + v * L, acc[v]);
}

template <class T>
void csr_rows(const int64_t* crow, const int64_t* col, const T* val, const T* dense, T* out,
              int64_t r0, int64_t r1, int64_t n) {
  constexpr int64_t L = int64_t(sizeof(Vec<T>) / sizeof(T));
  for (int64_t r = r0; r < r1; ++r) {
    int64_t j0 = crow[r], j1 = crow[r + 1];
    T* o = out + r * n;
    int64_t k = 0;
    for (; k + 4 * L <= n; k += 4 * L) row_block<T, 4>(col, val, dense, o, j0, j1, n, k);
    if (k + 2 * L <= n) {
      row_block<T, 2>(col, val, dense, o, j0, j1, n, k);
      k += 2 * L;
    }
    if (k + L <= n) {
      row_block<T, 1>(col, val, dense, o, j0, j1, n, k);
      k += L;
    }
    if (k < n) {
      int64_t w = n - k;
      T acc[L] = {};
      for (int64_t j = j0; j < j1; ++j) {
        T a = val[j];
        const T* b = dense + col[j] * n + k;
        for (int64_t u = 0; u < w; ++u) acc[u] += a * b[u];
      }
      std::memcpy(o + k, acc, size_t(w) * sizeof(T));
    }
  }
}

Tensor csr_mm(const Tensor& crow, const Tensor& col, const Tensor& values, const Tensor& dense) {
  int64_t m = crow.numel() - 1, n = dense.size(1), k_rows = dense.size(0);
  Tensor out = empty({m, n}, dense.dtype(), dense.device());
  if (m == 0 || n == 0) return out;
  const int64_t* cp = crow.data_ptr<int64_t>();
  const int64_t* ip = col.data_ptr<int64_t>();
  int64_t nnz = col.numel();
  EMBER_CHECK(cp[0] == 0 && cp[m] == nnz,
              "_sparse_csr_mm: expected crow_indices to run from 0 to nnz; got ", cp[0], " to ",
              cp[m], " with nnz ", nnz);
  for (int64_t j = 0; j < nnz; ++j)
    EMBER_CHECK(ip[j] >= 0 && ip[j] < k_rows, "_sparse_csr_mm: column index ", ip[j],
                " is out of bounds for a dense operand of ", k_rows, " rows");
  // Rows per task: enough multiply-adds that waking a thread pays.
  int64_t per_row = std::max<int64_t>(1, (nnz / std::max<int64_t>(m, 1) + 1) * n);
  int64_t grain = std::max<int64_t>(1, kGrainSize / per_row);
  dispatch<kSparseTypes>(dense.dtype(), "sparse_csr_mm_cpu", [&](auto tag) {
    using T = decltype(tag);
    const T* vp = values.data_ptr<T>();
    const T* dp = dense.data_ptr<T>();
    T* op = out.data_ptr<T>();
    parallel_for(0, m, grain, [&](int64_t r0, int64_t r1) {
      with_best_isa([&] { csr_rows<T>(cp, ip, vp, dp, op, r0, r1, n); });
    });
  });
  return out;
}

Tensor sampled_dot(const Tensor& rows, const Tensor& cols, const Tensor& a, const Tensor& b) {
  int64_t nnz = rows.numel(), n = a.size(1);
  Tensor out = empty({nnz}, a.dtype(), a.device());
  if (nnz == 0) return out;
  const int64_t* rp = rows.data_ptr<int64_t>();
  const int64_t* cp = cols.data_ptr<int64_t>();
  for (int64_t j = 0; j < nnz; ++j)
    EMBER_CHECK(rp[j] >= 0 && rp[j] < a.size(0) && cp[j] >= 0 && cp[j] < b.size(0),
                "_sparse_sampled_dot: index (", rp[j], ", ", cp[j], ") is out of bounds for ",
                a.size(0), " and ", b.size(0), " rows");
  int64_t grain = std::max<int64_t>(1, kGrainSize / std::max<int64_t>(n, 1));
  dispatch<kSparseTypes>(a.dtype(), "sparse_sampled_dot_cpu", [&](auto tag) {
    using T = decltype(tag);
    const T* ap = a.data_ptr<T>();
    const T* bp = b.data_ptr<T>();
    T* op = out.data_ptr<T>();
    parallel_for(0, nnz, grain, [&](int64_t j0, int64_t j1) {
      with_best_isa([&] {
        for (int64_t j = j0; j < j1; ++j) {
          const T* x = ap + rp[j] * n;
          const T* y = bp + cp[j] * n;
          T s = 0;
          for (int64_t u = 0; u < n; ++u) s += x[u] * y[u];
          op[j] = s;
        }
      });
    });
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_sparse_csr_mm, CPU, csr_mm);
EMBER_REGISTER_KERNEL(op::_sparse_sampled_dot, CPU, sampled_dot);

}  // namespace ember::cpu
