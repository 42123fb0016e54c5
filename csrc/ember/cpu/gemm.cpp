// CPU matrix products: sgemm for float32 on AVX-512 CPUs (Note [SGEMM]), OpenBLAS for the other
// float32/float64 products, oneDNN for bfloat16 (Note [oneDNN bf16]), a blocked loop for the
// other dtypes. See Note [GEMM layouts].
#include <algorithm>
#include <climits>
#include <optional>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/cpu/blas_threads.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/onednn.h"
#include "ember/cpu/sgemm.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/dispatch/profile_range.h"
#include "ember/schema/linalg.h"

namespace ember::cpu {

namespace {

// Note [GEMM layouts]
// Every product here is out[b] = beta * out[b] + alpha * a[b] @ b[b] over 3-d operands (batch,
// rows, cols) with arbitrary strides; `out` is always a fresh contiguous tensor. BLAS reads a
// matrix either row-major (unit column stride, leading dim = row stride) or as the transpose of
// one (unit row stride), so transposed and sliced operands go in as they are with a trans flag
// and a leading dim; only other layouts (broadcast rows, two non-unit strides) are copied. The
// batch stride is free, so broadcast batches (stride 0) never copy. beta == 0 never reads `out`,
// so NaN or garbage there doesn't propagate (addmm with beta=0, as in PyTorch). sgemm takes any
// strides, so on its path nothing is copied.

struct Layout {
  bool trans;
  int64_t ld;
};

// How BLAS can read a rows x cols matrix with strides (rs, cs), if it can.
std::optional<Layout> blas_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  auto fits = [](int64_t ld, int64_t min) {
    return ld >= std::max<int64_t>(min, 1) && ld <= INT_MAX;
  };
  if (cs == 1 || cols <= 1) {
    int64_t ld = rows <= 1 ? std::max<int64_t>(cols, 1) : rs;
    if (fits(ld, cols)) return Layout{false, ld};
  }
  if (rs == 1 || rows <= 1) {
    int64_t ld = cols <= 1 ? std::max<int64_t>(rows, 1) : cs;
    if (fits(ld, rows)) return Layout{true, ld};
  }
  return std::nullopt;
}

// OpenBLAS runs its own threads; keep their count equal to ember's so the two never stack up.

// OpenBLAS runs a product on the calling thread below these sizes (its GEMM and GEMV
// multithreading thresholds with the default GEMM_MULTITHREAD_THRESHOLD of 4); batches of such
// small products are spread over ember's pool instead, so the two pools never nest.
constexpr int64_t kBlasSerialGemm = 65536 * 4, kBlasSerialGemv = 2304 * 4;

CBLAS_TRANSPOSE flag(bool t) { return t ? CblasTrans : CblasNoTrans; }

void blas_gemm(const float*, bool ta, bool tb, int m, int n, int k, float alpha, const float* a,
               int lda, const float* b, int ldb, float beta, float* c, int ldc) {
  cblas_sgemm(CblasRowMajor, flag(ta), flag(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void blas_gemm(const double*, bool ta, bool tb, int m, int n, int k, double alpha, const double* a,
               int lda, const double* b, int ldb, double beta, double* c, int ldc) {
  cblas_dgemm(CblasRowMajor, flag(ta), flag(tb), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}
void blas_gemv(const float*, bool t, int rows, int cols, float alpha, const float* a, int lda,
               const float* x, int incx, float beta, float* y, int incy) {
  cblas_sgemv(CblasRowMajor, flag(t), rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}
void blas_gemv(const double*, bool t, int rows, int cols, double alpha, const double* a, int lda,
               const double* x, int incx, double beta, double* y, int incy) {
  cblas_dgemv(CblasRowMajor, flag(t), rows, cols, alpha, a, lda, x, incx, beta, y, incy);
}

struct Dims {
  int64_t B, M, N, K;
};

Dims dims_of(const Tensor& a, const Tensor& b) {
  return {a.size(0), a.size(1), b.size(2), a.size(2)};
}

// A matrix of a batch as (pointer, trans, ld) for BLAS; copies `t` contiguous if it must.
template <class T>
struct BlasOperand {
  Tensor t;
  Layout layout;
  BlasOperand(Tensor x) : t(std::move(x)) {
    auto l = blas_layout(t.size(1), t.size(2), t.stride(1), t.stride(2));
    if (!l) {
      t = contiguous(t);
      l = blas_layout(t.size(1), t.size(2), t.stride(1), t.stride(2));
    }
    layout = *l;
  }
  const T* at(int64_t batch) const { return t.data_ptr<T>() + batch * t.stride(0); }
};

template <class T>
void blas_batched(const Tensor& out, const Tensor& a_in, const Tensor& b_in, T beta, T alpha) {
  Dims d = dims_of(a_in, b_in);
  BlasOperand<T> a(a_in), b(b_in);
  T* c = out.data_ptr<T>();
  const int M = int(d.M), N = int(d.N), K = int(d.K);
  const int64_t c_batch = d.M * d.N;
  auto one = [&](int64_t i) {
    const T* pa = a.at(i);
    const T* pb = b.at(i);
    T* pc = c + i * c_batch;
    if (N == 1) {
      // Matrix-vector: y(M) = A(M, K) x(K), x a column of b (K stride = b's row stride).
      int incx = K == 1 ? 1 : int(b.t.stride(1));
      if (incx > 0 && b.t.stride(1) <= INT_MAX) {
        if (beta == T(0)) std::fill_n(pc, M, T(0));  // gemv scales y by beta: never read garbage
        const Layout& la = a.layout;
        if (la.trans) blas_gemv(pa, true, K, M, alpha, pa, int(la.ld), pb, incx, beta, pc, 1);
        else blas_gemv(pa, false, M, K, alpha, pa, int(la.ld), pb, incx, beta, pc, 1);
        return;
      }
    }
    if (M == 1) {
      // Vector-matrix: y(N) = B(K, N)^T x(K), x the row of a (K stride = a's column stride).
      int incx = K == 1 ? 1 : int(a.t.stride(2));
      if (incx > 0 && a.t.stride(2) <= INT_MAX) {
        if (beta == T(0)) std::fill_n(pc, N, T(0));
        const Layout& lb = b.layout;
        if (lb.trans) blas_gemv(pa, false, N, K, alpha, pb, int(lb.ld), pa, incx, beta, pc, 1);
        else blas_gemv(pa, true, K, N, alpha, pb, int(lb.ld), pa, incx, beta, pc, 1);
        return;
      }
    }
    blas_gemm(pa, a.layout.trans, b.layout.trans, M, N, K, alpha, pa, int(a.layout.ld), pb,
              int(b.layout.ld), beta, pc, std::max(N, 1));
  };
  const int64_t work = d.M * d.N * d.K;
  const int64_t serial = (d.M == 1 || d.N == 1) ? kBlasSerialGemv : kBlasSerialGemm;
  auto batches = [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i) one(i);
  };
  if (d.B > 1 && work < serial) {  // OpenBLAS would run each on the calling thread anyway
    parallel_for(0, d.B, std::max<int64_t>(1, kBlasSerialGemm / std::max<int64_t>(work, 1)),
                 batches);
  } else if (d.B >= get_num_threads() && get_num_threads() > 1 && !in_parallel_region()) {
    SerialBlas serial_blas;  // Note [BLAS threads]
    parallel_for(0, d.B, 1, batches);
  } else {
    use_blas_threads();
    batches(0, d.B);
  }
}

// float32 products through sgemm (Note [SGEMM]); false where OpenBLAS runs them instead: CPUs
// without AVX-512 and matrix-vector products. Batches run on the pool when there are enough of
// them, each product on one thread; otherwise each product splits over the threads itself.
bool sgemm_batched(const Tensor& out, const Tensor& a, const Tensor& b, float beta, float alpha) {
  const Dims d = dims_of(a, b);
  if (!has_sgemm() || d.M == 1 || d.N == 1) return false;
  const float* pa = a.data_ptr<float>();
  const float* pb = b.data_ptr<float>();
  float* pc = out.data_ptr<float>();
  auto batches = [&](int64_t b0, int64_t b1) {
    for (int64_t i = b0; i < b1; ++i)
      sgemm(d.M, d.N, d.K, alpha, pa + i * a.stride(0), a.stride(1), a.stride(2),
            pb + i * b.stride(0), b.stride(1), b.stride(2), beta, pc + i * d.M * d.N, d.N);
  };
  const int64_t work = std::max<int64_t>(1, d.M * d.N * d.K);
  if (d.B > 1 && (d.B >= get_num_threads() || work < kSgemmSerialWork))
    parallel_for(0, d.B, std::max<int64_t>(1, kSgemmSerialWork / work), batches);
  else batches(0, d.B);
  return true;
}

// Accumulators of the fallback: 16-bit floats in float; integers in an unsigned type of at least
// 32 bits, so overflow wraps like PyTorch's integer matmul instead of being undefined.
template <class T>
using gemm_acc_t =
    std::conditional_t<std::is_integral_v<T>,
                       std::conditional_t<(sizeof(T) > 4), uint64_t, uint32_t>, acc_t<T>>;

template <class T, class Acc>
Acc widen(T v) {
  if constexpr (std::is_integral_v<T>) return Acc(int64_t(v));
  else return Acc(v);
}

// Columns of a micro-tile: a fixed trip count lets GCC vectorize at -O2 (its very-cheap cost
// model skips loops that would need a scalar epilogue or runtime alias checks).
constexpr int64_t kNr = 16;

// c (R x kNr, row stride kNr) += a (R rows, strided) @ b (kb x kNr, row stride ldb).
template <int R, class T, class Acc>
void micro_tile(const T* a, int64_t sa1, int64_t sa2, const Acc* b, int64_t ldb, int64_t kb,
                Acc* c) {
  Acc acc[R][kNr];
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < kNr; ++j) acc[r][j] = c[r * kNr + j];
  for (int64_t k = 0; k < kb; ++k) {
    const Acc* br = b + k * ldb;
    for (int r = 0; r < R; ++r) {
      const Acc av = widen<T, Acc>(a[r * sa1 + k * sa2]);
      for (int64_t j = 0; j < kNr; ++j) acc[r][j] += av * br[j];
    }
  }
  for (int r = 0; r < R; ++r)
    for (int64_t j = 0; j < kNr; ++j) c[r * kNr + j] = acc[r][j];
}

// Blocked fallback. b is first packed (all batches) into a contiguous Acc buffer whose rows are
// padded with zeros to a multiple of kNr; work is then split into (batch, row block) tasks. A
// task walks column tiles of kNr and depth blocks of kKb, so its accumulators and the b panel
// stay in cache, and runs 4-row micro-tiles over them.
template <class T>
void fallback_batched(const Tensor& out, const Tensor& a, const Tensor& b, const Scalar& beta_s,
                      const Scalar& alpha_s, bool use_beta) {
  using Acc = gemm_acc_t<T>;
  constexpr int64_t kMb = 64, kKb = 256;
  Dims d = dims_of(a, b);
  const Acc alpha = std::is_integral_v<T> ? Acc(alpha_s.to_long()) : Acc(alpha_s.to_double());
  const Acc beta = std::is_integral_v<T> ? Acc(beta_s.to_long()) : Acc(beta_s.to_double());
  const int64_t ldb = (d.N + kNr - 1) / kNr * kNr;
  std::vector<Acc> bp(size_t(d.B * d.K * ldb), Acc(0));
  const T* pb = b.data_ptr<T>();
  const int64_t sb0 = b.stride(0), sb1 = b.stride(1), sb2 = b.stride(2);
  parallel_for(0, d.B * d.K, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(d.N, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const T* src = pb + (r / d.K) * sb0 + (r % d.K) * sb1;
                   Acc* dst = bp.data() + r * ldb;
                   for (int64_t j = 0; j < d.N; ++j) dst[j] = widen<T, Acc>(src[j * sb2]);
                 }
               });
  const T* pa = a.data_ptr<T>();
  const int64_t sa0 = a.stride(0), sa1 = a.stride(1), sa2 = a.stride(2);
  T* pc = out.data_ptr<T>();
  const int64_t row_blocks = (d.M + kMb - 1) / kMb;
  const int64_t task_work = std::max<int64_t>(1, std::min(d.M, kMb) * d.N * d.K);
  parallel_for(0, d.B * row_blocks, std::max<int64_t>(1, kGrainSize * 8 / task_work),
               [&](int64_t t0, int64_t t1) {
                 std::vector<Acc> tile(size_t(kMb * kNr));
                 for (int64_t task = t0; task < t1; ++task) {
                   const int64_t batch = task / row_blocks, i0 = (task % row_blocks) * kMb;
                   const int64_t mb = std::min(kMb, d.M - i0);
                   const T* ab = pa + batch * sa0 + i0 * sa1;
                   const Acc* bb = bp.data() + batch * d.K * ldb;
                   T* cb = pc + (batch * d.M + i0) * d.N;
                   for (int64_t j0 = 0; j0 < d.N; j0 += kNr) {
                     std::fill(tile.begin(), tile.end(), Acc(0));
                     for (int64_t k0 = 0; k0 < d.K; k0 += kKb) {
                       const int64_t kb = std::min(kKb, d.K - k0);
                       const Acc* panel = bb + k0 * ldb + j0;
                       int64_t i = 0;
                       for (; i + 4 <= mb; i += 4)
                         micro_tile<4>(ab + i * sa1 + k0 * sa2, sa1, sa2, panel, ldb, kb,
                                       tile.data() + i * kNr);
                       for (; i < mb; ++i)
                         micro_tile<1>(ab + i * sa1 + k0 * sa2, sa1, sa2, panel, ldb, kb,
                                       tile.data() + i * kNr);
                     }
                     const int64_t nb = std::min(kNr, d.N - j0);
                     for (int64_t i = 0; i < mb; ++i) {
                       T* ci = cb + i * d.N + j0;
                       const Acc* ti = tile.data() + i * kNr;
                       for (int64_t j = 0; j < nb; ++j) {
                         Acc v = alpha * ti[j];
                         if (use_beta) v += beta * widen<T, Acc>(ci[j]);
                         ci[j] = T(v);
                       }
                     }
                   }
                 }
               });
}

// out = beta * out (or 0 when beta is 0): the whole product when the inner dim is empty.
void scale_output(const Tensor& out, const Scalar& beta, bool use_beta) {
  if (!use_beta) {
    Tensor o = out;
    fill_(o, 0);
    return;
  }
  dispatch<kNumericTypes>(out.dtype(), "addmm", [&](auto tag) {
    using T = decltype(tag);
    using Acc = gemm_acc_t<T>;
    const Acc s = std::is_integral_v<T> ? Acc(beta.to_long()) : Acc(beta.to_double());
    T* p = out.data_ptr<T>();
    for (int64_t i = 0; i < out.numel(); ++i) p[i] = T(s * widen<T, Acc>(p[i]));
  });
}

bool is_zero(const Scalar& s) { return s.to_double() == 0; }

// bf16 products below this many multiply-adds stay in the loop: oneDNN's per-call setup (a few
// microseconds) would outweigh them.
constexpr int64_t kOnednnMinWork = 1 << 15;

// The one GEMM entry: out (B, M, N), contiguous = beta * out + alpha * a (B, M, K) @ b (B, K, N).
// `name` is the op PyTorch names in its unsupported-dtype error.
void gemm_batched(const char* name, const Tensor& out, const Tensor& a_in, const Tensor& b_in,
                  const Scalar& beta, const Scalar& alpha) {
  if (out.numel() == 0) return;
  Tensor a = a_in.detach(), b = b_in.detach();
  Dims d = dims_of(a, b);
  bool use_beta = !is_zero(beta);
  if (d.K == 0 && !use_beta) {  // nothing to multiply: any dtype, bool included, as torch
    scale_output(out, beta, false);
    return;
  }
  dispatch<kNumericTypes>(out.dtype(), name, [&](auto tag) {
    using T = decltype(tag);
    if (d.K == 0) {
      scale_output(out, beta, use_beta);
      return;
    }
    constexpr bool blas = std::is_same_v<T, float> || std::is_same_v<T, double>;
    if constexpr (std::is_same_v<T, BFloat16>) {  // Note [oneDNN bf16]
      if (d.M * d.N * d.K >= kOnednnMinWork && d.M > 1 && d.N > 1 && d.K > 1 &&
          onednn::gemm_bf16(out, a, b, use_beta ? beta.to<float>() : 0.0f, alpha.to<float>()))
        return;
    }
    if constexpr (std::is_same_v<T, float>) {
      if (sgemm_batched(out, a, b, use_beta ? beta.to<float>() : 0.0f, alpha.to<float>())) return;
    }
    if constexpr (blas) {
      if (d.M <= INT_MAX && d.N <= INT_MAX && d.K <= INT_MAX) {
        blas_batched<T>(out, a, b, use_beta ? beta.to<T>() : T(0), alpha.to<T>());
        return;
      }
    }
    fallback_batched<T>(out, a, b, beta, alpha, use_beta);
  });
}

// 3-d views (no autograd) of 1-d and 2-d operands: a leading batch of 1, vectors as columns/rows.
Tensor as_batch(const Tensor& t) {
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes.insert(0, 1);
  strides.insert(0, 0);
  return t.as_strided_view(sizes, strides, t.storage_offset());
}
Tensor as_column(const Tensor& v) {
  return v.as_strided_view({1, v.size(0), 1}, {0, v.stride(0), 1}, v.storage_offset());
}
Tensor as_row(const Tensor& v) {
  return v.as_strided_view({1, 1, v.size(0)}, {0, 1, v.stride(0)}, v.storage_offset());
}

// torch's rows of a 2-d GEMM (Note [Profiler rows]): the result, then each operand BLAS reads
// row-major, passes through aten::resolve_conj; an operand in neither order is cloned.
[[gnu::noinline]] void gemm_rows(const Tensor& out, const Tensor& m1, const Tensor& m2) {
  const std::nullopt_t none = std::nullopt;
  auto operand = [&](const Tensor& t) {
    if (t.stride(1) == 1 && t.stride(0) >= std::max<int64_t>(1, t.size(1))) {
      profiler::mark_op("resolve_conj", t);
    } else if (!(t.stride(0) == 1 && t.stride(1) >= std::max<int64_t>(1, t.size(0)))) {
      profiler::OpRange clone("clone", t, none);
      {
        profiler::OpRange el("empty_like", t, none, none, none, none, none);
        profiler::mark_op("empty", none, none, none, none, none, none);
      }
      profiler::mark_op("copy_", t, t, false);
    }
  };
  profiler::mark_op("resolve_conj", out);
  operand(m2);
  operand(m1);
}

// Fills a fresh (B, M, N) output with self broadcast, the `beta * self` part of addmm/baddbmm.
Tensor init_output(const Tensor& self, IntArrayRef shape, const Scalar& beta) {
  Tensor out = empty(shape, self.dtype(), self.device());
  if (!is_zero(beta) && out.numel() > 0) {
    if (profiler::enabled()) [[unlikely]] {  // torch's rows: expand, then copy_
      {
        profiler::OpRange expand("expand", self, shape, false);
        profiler::mark_op("as_strided", self, shape, shape, std::nullopt);
      }
      profiler::OpRange copy("copy_", out, out, false);
      copy_(out, self.detach());
    } else {
      copy_(out, self.detach());
    }
  }
  return out;
}

Tensor mm_kernel(const Tensor& self, const Tensor& mat2) {
  Tensor out = empty({self.size(0), mat2.size(1)}, self.dtype(), self.device());
  if (profiler::enabled()) [[unlikely]]
    gemm_rows(out, self, mat2);
  gemm_batched("addmm_impl_cpu_", as_batch(out), as_batch(self), as_batch(mat2), 0, 1);
  return out;
}

Tensor bmm_kernel(const Tensor& self, const Tensor& mat2) {
  Tensor out = empty({self.size(0), self.size(1), mat2.size(2)}, self.dtype(), self.device());
  if (profiler::enabled()) [[unlikely]] {  // torch's bmm rows: each operand, whatever its strides
    profiler::mark_op("resolve_conj", mat2);
    profiler::mark_op("resolve_conj", self);
  }
  gemm_batched("bmm", out, self, mat2, 0, 1);
  return out;
}

Tensor mv_kernel(const Tensor& self, const Tensor& vec) {
  Tensor out = empty({self.size(0)}, self.dtype(), self.device());
  gemm_batched("addmv_impl_cpu", as_column(out), as_batch(self), as_column(vec), 0, 1);
  return out;
}

Tensor dot_kernel(const Tensor& self, const Tensor& other) {
  Tensor out = empty({}, self.dtype(), self.device());
  Tensor o3 = out.as_strided_view({1, 1, 1}, {0, 0, 0}, 0);
  gemm_batched("dot", o3, as_row(self), as_column(other), 0, 1);
  return out;
}

Tensor addmm_kernel(const Tensor& self, const Tensor& mat1, const Tensor& mat2, const Scalar& beta,
                    const Scalar& alpha) {
  Tensor out = init_output(self, {mat1.size(0), mat2.size(1)}, beta);
  if (profiler::enabled()) [[unlikely]]
    gemm_rows(out, mat1, mat2);
  gemm_batched("addmm_impl_cpu_", as_batch(out), as_batch(mat1), as_batch(mat2), beta, alpha);
  return out;
}

Tensor baddbmm_kernel(const Tensor& self, const Tensor& b1, const Tensor& b2, const Scalar& beta,
                      const Scalar& alpha) {
  Tensor out = init_output(self, {b1.size(0), b1.size(1), b2.size(2)}, beta);
  gemm_batched("baddbmm", out, b1, b2, beta, alpha);
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::mm, CPU, mm_kernel);
EMBER_REGISTER_KERNEL(op::bmm, CPU, bmm_kernel);
EMBER_REGISTER_KERNEL(op::mv, CPU, mv_kernel);
EMBER_REGISTER_KERNEL(op::dot, CPU, dot_kernel);
EMBER_REGISTER_KERNEL(op::addmm, CPU, addmm_kernel);
EMBER_REGISTER_KERNEL(op::baddbmm, CPU, baddbmm_kernel);

Tensor mm(const Tensor& self, const Tensor& mat2) { return mm_kernel(self, mat2); }
Tensor addmm(const Tensor& self, const Tensor& mat1, const Tensor& mat2) {
  return addmm_kernel(self, mat1, mat2, 1, 1);
}

}  // namespace ember::cpu
