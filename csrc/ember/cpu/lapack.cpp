// LAPACK-backed matrix factorizations (ops/linalg_lapack.cpp) for float and double, one matrix
// of a batch at a time. OpenBLAS ships LAPACK; its Fortran entry points are declared here.
//
// Note [Column-major buffers]
// LAPACK reads matrices column by column. contiguous(A.mT) lays each matrix of A out that way,
// so the routines run on copies without explicit index juggling, and results are returned as
// `.mT` of such buffers: column-major strides, as torch.linalg's results have too.
#include <cblas.h>

#include <algorithm>
#include <complex>
#include <vector>

#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/kernels.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/linalg.h"

extern "C" {
void sgetrf_(const int* m, const int* n, float* a, const int* lda, int* ipiv, int* info);
void dgetrf_(const int* m, const int* n, double* a, const int* lda, int* ipiv, int* info);
void sgesv_(const int* n, const int* nrhs, float* a, const int* lda, int* ipiv, float* b,
            const int* ldb, int* info);
void dgesv_(const int* n, const int* nrhs, double* a, const int* lda, int* ipiv, double* b,
            const int* ldb, int* info);
void spotrf_(const char* uplo, const int* n, float* a, const int* lda, int* info, size_t);
void dpotrf_(const char* uplo, const int* n, double* a, const int* lda, int* info, size_t);
void sgeqrf_(const int* m, const int* n, float* a, const int* lda, float* tau, float* work,
             const int* lwork, int* info);
void dgeqrf_(const int* m, const int* n, double* a, const int* lda, double* tau, double* work,
             const int* lwork, int* info);
void sorgqr_(const int* m, const int* n, const int* k, float* a, const int* lda, const float* tau,
             float* work, const int* lwork, int* info);
void dorgqr_(const int* m, const int* n, const int* k, double* a, const int* lda, const double* tau,
             double* work, const int* lwork, int* info);
void sgesdd_(const char* jobz, const int* m, const int* n, float* a, const int* lda, float* s,
             float* u, const int* ldu, float* vt, const int* ldvt, float* work, const int* lwork,
             int* iwork, int* info, size_t);
void dgesdd_(const char* jobz, const int* m, const int* n, double* a, const int* lda, double* s,
             double* u, const int* ldu, double* vt, const int* ldvt, double* work, const int* lwork,
             int* iwork, int* info, size_t);
void sgeev_(const char* jobvl, const char* jobvr, const int* n, float* a, const int* lda, float* wr,
            float* wi, float* vl, const int* ldvl, float* vr, const int* ldvr, float* work,
            const int* lwork, int* info, size_t, size_t);
void dgeev_(const char* jobvl, const char* jobvr, const int* n, double* a, const int* lda,
            double* wr, double* wi, double* vl, const int* ldvl, double* vr, const int* ldvr,
            double* work, const int* lwork, int* info, size_t, size_t);
void cgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<float>* a,
            const int* lda, std::complex<float>* w, std::complex<float>* vl, const int* ldvl,
            std::complex<float>* vr, const int* ldvr, std::complex<float>* work, const int* lwork,
            float* rwork, int* info, size_t, size_t);
void zgeev_(const char* jobvl, const char* jobvr, const int* n, std::complex<double>* a,
            const int* lda, std::complex<double>* w, std::complex<double>* vl, const int* ldvl,
            std::complex<double>* vr, const int* ldvr, std::complex<double>* work, const int* lwork,
            double* rwork, int* info, size_t, size_t);
void ssyevd_(const char* jobz, const char* uplo, const int* n, float* a, const int* lda, float* w,
             float* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
void dsyevd_(const char* jobz, const char* uplo, const int* n, double* a, const int* lda, double* w,
             double* work, const int* lwork, int* iwork, const int* liwork, int* info, size_t,
             size_t);
}

namespace ember::cpu {

namespace {

// Overloads that pick the s/d routine by element type.
void getrf(int m, int n, float* a, int* ipiv, int* info) { sgetrf_(&m, &n, a, &m, ipiv, info); }
void getrf(int m, int n, double* a, int* ipiv, int* info) { dgetrf_(&m, &n, a, &m, ipiv, info); }
void gesv(int n, int k, float* a, int* ipiv, float* b, int* info) {
  sgesv_(&n, &k, a, &n, ipiv, b, &n, info);
}
void gesv(int n, int k, double* a, int* ipiv, double* b, int* info) {
  dgesv_(&n, &k, a, &n, ipiv, b, &n, info);
}
void potrf(char uplo, int n, float* a, int* info) { spotrf_(&uplo, &n, a, &n, info, 1); }
void potrf(char uplo, int n, double* a, int* info) { dpotrf_(&uplo, &n, a, &n, info, 1); }
void geqrf(int m, int n, float* a, float* tau, float* w, int lw, int* info) {
  sgeqrf_(&m, &n, a, &m, tau, w, &lw, info);
}
void geqrf(int m, int n, double* a, double* tau, double* w, int lw, int* info) {
  dgeqrf_(&m, &n, a, &m, tau, w, &lw, info);
}
void orgqr(int m, int n, int k, float* a, const float* tau, float* w, int lw, int* info) {
  sorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info);
}
void orgqr(int m, int n, int k, double* a, const double* tau, double* w, int lw, int* info) {
  dorgqr_(&m, &n, &k, a, &m, tau, w, &lw, info);
}
void gesdd(char job, int m, int n, float* a, float* s, float* u, int ldu, float* vt, int ldvt,
           float* w, int lw, int* iw, int* info) {
  sgesdd_(&job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lw, iw, info, 1);
}
void gesdd(char job, int m, int n, double* a, double* s, double* u, int ldu, double* vt, int ldvt,
           double* w, int lw, int* iw, int* info) {
  dgesdd_(&job, &m, &n, a, &m, s, u, &ldu, vt, &ldvt, w, &lw, iw, info, 1);
}
void syevd(char job, char uplo, int n, float* a, float* w, float* wk, int lw, int* iw, int liw,
           int* info) {
  ssyevd_(&job, &uplo, &n, a, &n, w, wk, &lw, iw, &liw, info, 1, 1);
}
void syevd(char job, char uplo, int n, double* a, double* w, double* wk, int lw, int* iw, int liw,
           int* info) {
  dsyevd_(&job, &uplo, &n, a, &n, w, wk, &lw, iw, &liw, info, 1, 1);
}
void trsm(bool upper, bool unit, int n, int k, const float* a, float* b) {
  cblas_strsm(CblasColMajor, CblasLeft, upper ? CblasUpper : CblasLower, CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, n, k, 1.0f, a, n, b, n);
}
void trsm(bool upper, bool unit, int n, int k, const double* a, double* b) {
  cblas_dtrsm(CblasColMajor, CblasLeft, upper ? CblasUpper : CblasLower, CblasNoTrans,
              unit ? CblasUnit : CblasNonUnit, n, k, 1.0, a, n, b, n);
}

constexpr uint32_t kLapackTypes = type_bit(kFloat) | type_bit(kDouble);

// Geometry and assembly without the public ops: the last two dims swapped (matrix_transpose),
// the upper or lower triangle (triu/tril: where over the same bool mask they build), and
// identity matrices broadcast to `sizes` (eye expanded).
Tensor matrix_transpose(const Tensor& t) {
  DimVector sizes(t.sizes()), strides(t.strides());
  const size_t r = sizes.size() - 2, c = sizes.size() - 1;
  std::swap(sizes[r], sizes[c]);
  std::swap(strides[r], strides[c]);
  return t.as_strided_view(sizes, strides, t.storage_offset());
}
Tensor triangle(const Tensor& t, bool upper) {
  const int64_t rows = t.size(-2), cols = t.size(-1);
  Tensor mask = empty({rows, cols}, kBool);
  bool* m = mask.data_ptr<bool>();
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) m[i * cols + j] = upper ? j >= i : j <= i;
  return where(mask, t, zeros({}, t.dtype()));
}
Tensor identities(IntArrayRef sizes, ScalarType dt) {
  const int64_t rows = sizes[sizes.size() - 2], cols = sizes[sizes.size() - 1];
  Tensor e = zeros({rows, cols}, dt);
  Tensor diagonal = e.as_strided_view({std::min(rows, cols)}, {cols + 1}, 0);
  fill_(diagonal, 1);
  DimVector strides(sizes.size(), 0);
  strides[sizes.size() - 2] = cols;
  strides[sizes.size() - 1] = 1;
  return e.as_strided_view(sizes, strides, 0);
}

// See Note [Column-major buffers]. Always a copy: LAPACK overwrites it, and contiguous() of an
// already column-major input would hand back the caller's own storage.
Tensor column_major(const Tensor& a) {
  Tensor t = matrix_transpose(a);
  Tensor c = contiguous(t);
  if (c.storage().get() != a.storage().get()) return c;
  Tensor copy = empty(c.sizes(), c.dtype());
  return copy_(copy, c);
}
Tensor column_major_empty(IntArrayRef batch, int64_t rows, int64_t cols, ScalarType dt) {
  std::vector<int64_t> s(batch.begin(), batch.end());
  s.push_back(cols);
  s.push_back(rows);
  return matrix_transpose(empty(s, dt));
}
std::vector<int64_t> batch_of(const Tensor& a) {
  return std::vector<int64_t>(a.sizes().begin(), a.sizes().end() - 2);
}
int64_t count(const std::vector<int64_t>& batch) {
  int64_t n = 1;
  for (int64_t b : batch) n *= b;
  return n;
}
Tensor int_tensor(std::vector<int64_t> shape) { return zeros(shape, kInt); }
template <class T>
T* data(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}
// Workspace size from a query call's result.
template <class T>
int lwork_of(T w) {
  return std::max(1, int(w));
}

std::tuple<Tensor, Tensor, Tensor> lu_factor_kernel(const Tensor& self) {
  auto batch = batch_of(self);
  int m = int(self.size(-2)), n = int(self.size(-1)), k = std::min(m, n);
  Tensor lu = column_major(self);
  auto pshape = batch;
  pshape.push_back(k);
  Tensor piv = int_tensor(pshape), info = int_tensor(batch);
  dispatch<kLapackTypes>(self.dtype(), "linalg_lu_factor", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b = 0; b < count(batch) && m * n > 0; ++b)
      getrf(m, n, data<T>(lu) + b * m * n, data<int>(piv) + b * k, data<int>(info) + b);
  });
  return {matrix_transpose(lu), piv, info};
}

std::tuple<Tensor, Tensor> solve_kernel(const Tensor& a, const Tensor& rhs) {
  auto batch = batch_of(a);
  int n = int(a.size(-1)), k = int(rhs.size(-1));
  Tensor lu = column_major(a), x = column_major(rhs), info = int_tensor(batch);
  std::vector<int> piv(size_t(std::max(n, 1)));
  dispatch<kLapackTypes>(a.dtype(), "linalg_solve", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b = 0; b < count(batch) && n > 0; ++b)
      gesv(n, k, data<T>(lu) + b * n * n, piv.data(), data<T>(x) + b * n * k, data<int>(info) + b);
  });
  return {matrix_transpose(x), info};
}

std::tuple<Tensor, Tensor> cholesky_kernel(const Tensor& self, bool upper) {
  auto batch = batch_of(self);
  int n = int(self.size(-1));
  Tensor l = column_major(self), info = int_tensor(batch);
  dispatch<kLapackTypes>(self.dtype(), "linalg_cholesky", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b = 0; b < count(batch) && n > 0; ++b)
      potrf(upper ? 'U' : 'L', n, data<T>(l) + b * n * n, data<int>(info) + b);
  });
  // potrf leaves the other triangle untouched.
  Tensor out = matrix_transpose(l);
  return {triangle(out, upper), info};
}

// mode: "reduced", "complete" or "r" (R only).
std::tuple<Tensor, Tensor> qr_kernel(const Tensor& self, const std::string& mode) {
  auto batch = batch_of(self);
  int m = int(self.size(-2)), n = int(self.size(-1)), k = std::min(m, n);
  bool complete = mode == "complete";
  int qcols = complete ? m : k;
  Tensor a = column_major(self);
  Tensor q = column_major_empty(batch, m, qcols, self.dtype());
  dispatch<kLapackTypes>(self.dtype(), "linalg_qr", [&](auto tag) {
    using T = decltype(tag);
    std::vector<T> tau(size_t(std::max(k, 1)));
    int info = 0;
    if (m == 0) return;
    T query;
    geqrf(m, n, (T*)nullptr, tau.data(), &query, -1, &info);
    int lw = lwork_of(query);
    orgqr(m, qcols, k, (T*)nullptr, tau.data(), &query, -1, &info);
    std::vector<T> work(size_t(std::max(lw, lwork_of(query))));
    lw = int(work.size());
    for (int64_t b = 0; b < count(batch); ++b) {
      T* ab = data<T>(a) + b * m * n;
      geqrf(m, n, ab, tau.data(), work.data(), lw, &info);
      if (mode == "r") continue;
      T* qb = data<T>(q) + b * m * qcols;
      std::copy(ab, ab + int64_t(m) * std::min(n, qcols), qb);
      orgqr(m, qcols, k, qb, tau.data(), work.data(), lw, &info);
    }
  });
  Tensor r = triangle(matrix_transpose(a), true);
  if (!complete) {  // the first k rows
    DimVector sizes(r.sizes());
    sizes[sizes.size() - 2] = k;
    r = r.as_strided_view(sizes, r.strides(), r.storage_offset());
  }
  return {mode == "r" ? empty({0}, self.dtype()) : q, r};
}

// Returns U, S, Vh (U and Vh empty unless compute_uv) and info.
std::tuple<Tensor, Tensor, Tensor, Tensor> svd_kernel(const Tensor& self, bool full_matrices,
                                                      bool compute_uv) {
  auto batch = batch_of(self);
  int m = int(self.size(-2)), n = int(self.size(-1)), k = std::min(m, n);
  char job = !compute_uv ? 'N' : full_matrices ? 'A' : 'S';
  int ucols = full_matrices ? m : k, vrows = full_matrices ? n : k;
  Tensor a = column_major(self), info = int_tensor(batch);
  auto sshape = batch;
  sshape.push_back(k);
  Tensor s = empty(sshape, self.dtype());
  Tensor u = column_major_empty(batch, m, compute_uv ? ucols : 0, self.dtype());
  Tensor vt = column_major_empty(batch, compute_uv ? vrows : 0, n, self.dtype());
  dispatch<kLapackTypes>(self.dtype(), "linalg_svd", [&](auto tag) {
    using T = decltype(tag);
    if (m * n == 0) {
      // An empty matrix has no singular values; its full U and Vh are identities.
      if (compute_uv) {
        copy_(u, identities(u.sizes(), self.dtype()));
        copy_(vt, identities(vt.sizes(), self.dtype()));
      }
      return;
    }
    std::vector<int> iwork(size_t(8 * k));
    int ldu = std::max(m, 1), ldvt = std::max(compute_uv ? vrows : 1, 1), qinfo = 0;
    T query;
    // The query needs valid output pointers for the leading dimensions only.
    T dummy = 0;
    gesdd(job, m, n, data<T>(a), data<T>(s), &dummy, ldu, &dummy, ldvt, &query, -1, iwork.data(),
          &qinfo);
    std::vector<T> work(size_t(lwork_of(query)));
    for (int64_t b = 0; b < count(batch); ++b) {
      T* ub = compute_uv ? data<T>(u) + b * m * ucols : &dummy;
      T* vb = compute_uv ? data<T>(vt) + b * vrows * n : &dummy;
      gesdd(job, m, n, data<T>(a) + b * m * n, data<T>(s) + b * k, ub, ldu, vb, ldvt, work.data(),
            int(work.size()), iwork.data(), data<int>(info) + b);
    }
  });
  return {u, s, vt, info};
}

std::tuple<Tensor, Tensor, Tensor> eigh_kernel(const Tensor& self, bool upper, bool compute_v) {
  auto batch = batch_of(self);
  int n = int(self.size(-1));
  Tensor v = column_major(self), info = int_tensor(batch);
  auto wshape = batch;
  wshape.push_back(n);
  Tensor w = empty(wshape, self.dtype());
  dispatch<kLapackTypes>(self.dtype(), "linalg_eigh", [&](auto tag) {
    using T = decltype(tag);
    if (n == 0) return;
    char job = compute_v ? 'V' : 'N', uplo = upper ? 'U' : 'L';
    T query;
    int iquery = 0, qinfo = 0;
    syevd(job, uplo, n, data<T>(v), data<T>(w), &query, -1, &iquery, -1, &qinfo);
    std::vector<T> work(size_t(lwork_of(query)));
    std::vector<int> iwork(size_t(std::max(1, iquery)));
    for (int64_t b = 0; b < count(batch); ++b)
      syevd(job, uplo, n, data<T>(v) + b * n * n, data<T>(w) + b * n, work.data(), int(work.size()),
            iwork.data(), int(iwork.size()), data<int>(info) + b);
  });
  return {w, compute_v ? matrix_transpose(v) : empty({0}, self.dtype()), info};
}

void geev_real(char jv, int n, float* a, float* wr, float* wi, float* vr, float* work, int lw,
               int* info) {
  int one = 1, ldvr = std::max(n, 1);
  sgeev_("N", &jv, &n, a, &ldvr, wr, wi, nullptr, &one, vr, &ldvr, work, &lw, info, 1, 1);
}
void geev_real(char jv, int n, double* a, double* wr, double* wi, double* vr, double* work, int lw,
               int* info) {
  int one = 1, ldvr = std::max(n, 1);
  dgeev_("N", &jv, &n, a, &ldvr, wr, wi, nullptr, &one, vr, &ldvr, work, &lw, info, 1, 1);
}
void geev_complex(char jv, int n, std::complex<float>* a, std::complex<float>* w,
                  std::complex<float>* vr, std::complex<float>* work, int lw, float* rwork,
                  int* info) {
  int one = 1, ldvr = std::max(n, 1);
  cgeev_("N", &jv, &n, a, &ldvr, w, nullptr, &one, vr, &ldvr, work, &lw, rwork, info, 1, 1);
}
void geev_complex(char jv, int n, std::complex<double>* a, std::complex<double>* w,
                  std::complex<double>* vr, std::complex<double>* work, int lw, double* rwork,
                  int* info) {
  int one = 1, ldvr = std::max(n, 1);
  zgeev_("N", &jv, &n, a, &ldvr, w, nullptr, &one, vr, &ldvr, work, &lw, rwork, info, 1, 1);
}

// General eigenproblem: eigenvalues and column-major right eigenvectors, complex either way (a
// real input's conjugate pairs come from LAPACK's split real/imaginary columns).
std::tuple<Tensor, Tensor, Tensor> eig_kernel(const Tensor& self, bool compute_v) {
  auto batch = batch_of(self);
  const int n = int(self.size(-1));
  const ScalarType ct = to_complex_type(self.dtype());
  Tensor a = column_major(self), info = int_tensor(batch);
  auto wshape = batch;
  wshape.push_back(n);
  Tensor w = empty(wshape, ct);
  auto vshape = batch;
  vshape.push_back(compute_v ? n : 0);
  vshape.push_back(compute_v ? n : 0);
  Tensor v = empty(vshape, ct);  // holds the transpose: row j is eigenvector j
  const char jv = compute_v ? 'V' : 'N';
  if (n == 0) return {w, v, info};
  dispatch<kLapackTypes | kComplexTypes>(self.dtype(), "linalg_eig", [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_floating_point_v<T>) {
      using CT = std::complex<T>;
      std::vector<T> wr(static_cast<size_t>(n)), wi(static_cast<size_t>(n)),
          vr(compute_v ? static_cast<size_t>(n) * n : 1);
      T query;
      int qinfo = 0;
      geev_real(jv, n, data<T>(a), wr.data(), wi.data(), vr.data(), &query, -1, &qinfo);
      std::vector<T> work(size_t(lwork_of(query)));
      for (int64_t b = 0; b < count(batch); ++b) {
        geev_real(jv, n, data<T>(a) + b * n * n, wr.data(), wi.data(), vr.data(), work.data(),
                  int(work.size()), data<int>(info) + b);
        CT* wb = data<CT>(w) + b * n;
        for (int j = 0; j < n; ++j) wb[j] = CT(wr[size_t(j)], wi[size_t(j)]);
        if (!compute_v) continue;
        CT* vb = data<CT>(v) + b * n * n;
        for (int j = 0; j < n; ++j) {
          const T* c = vr.data() + size_t(j) * n;
          if (wi[size_t(j)] != 0 && j + 1 < n) {
            const T* c2 = c + n;
            for (int i = 0; i < n; ++i) {
              vb[j * n + i] = CT(c[i], c2[i]);
              vb[(j + 1) * n + i] = CT(c[i], -c2[i]);
            }
            ++j;
          } else {
            for (int i = 0; i < n; ++i) vb[j * n + i] = CT(c[i], 0);
          }
        }
      }
    } else {
      using R = typename T::value_type;
      std::vector<R> rwork(size_t(2 * n));
      T query;
      int qinfo = 0;
      T dummy;
      geev_complex(jv, n, data<T>(a), data<T>(w), compute_v ? data<T>(v) : &dummy, &query, -1,
                   rwork.data(), &qinfo);
      std::vector<T> work(size_t(lwork_of(query.real())));
      for (int64_t b = 0; b < count(batch); ++b)
        geev_complex(jv, n, data<T>(a) + b * n * n, data<T>(w) + b * n,
                     compute_v ? data<T>(v) + b * n * n : &dummy, work.data(), int(work.size()),
                     rwork.data(), data<int>(info) + b);
    }
  });
  return {w, compute_v ? matrix_transpose(v) : v, info};
}

// Left triangular solve A X = B; no singularity check (zeros on the diagonal give inf/nan).
Tensor solve_triangular_kernel(const Tensor& a, const Tensor& rhs, bool upper, bool unitriangular) {
  auto batch = batch_of(a);
  int n = int(a.size(-1)), k = int(rhs.size(-1));
  Tensor ac = column_major(a), x = column_major(rhs);
  dispatch<kLapackTypes>(a.dtype(), "linalg_solve_triangular", [&](auto tag) {
    using T = decltype(tag);
    for (int64_t b = 0; b < count(batch) && n * k > 0; ++b)
      trsm(upper, unitriangular, n, k, data<T>(ac) + b * n * n, data<T>(x) + b * n * k);
  });
  return matrix_transpose(x);
}

EMBER_REGISTER_KERNEL(op::linalg_lu_factor, CPU, lu_factor_kernel);
EMBER_REGISTER_KERNEL(op::linalg_solve, CPU, solve_kernel);
EMBER_REGISTER_KERNEL(op::linalg_cholesky, CPU, cholesky_kernel);
EMBER_REGISTER_KERNEL(op::linalg_qr, CPU, qr_kernel);
EMBER_REGISTER_KERNEL(op::linalg_svd, CPU, svd_kernel);
EMBER_REGISTER_KERNEL(op::linalg_eigh, CPU, eigh_kernel);
EMBER_REGISTER_KERNEL(op::linalg_eig, CPU, eig_kernel);
EMBER_REGISTER_KERNEL(op::linalg_solve_triangular, CPU, solve_triangular_kernel);

}  // namespace

}  // namespace ember::cpu
