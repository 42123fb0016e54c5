// Quantized kernels (schema/quantized.h): the int8 GEMM behind quantized linear and convolution
// (static and dynamic), per-channel affine (batch norm) and embedding-bag lookup of int8/int4
// rows. Quantize and dequantize are in cpu/quantize.cpp, add and mul in
// cpu/quantized_elementwise.cpp.
//
// Note [Int8 GEMM]
// C[M,N] (int32) = A[M,K] (uint8 activations) x B[K,N] (int8 weights) on AVX512-VNNI
// (vpdpbusd: four u8*s8 products summed into each int32 lane, no saturation). B is packed once
// (`_ember_qpack`) as blocks of 16 output columns; within a block, each group of 4 k's is one
// 64-byte row [16 columns x 4 k], so one vector load feeds 16 columns. K is padded to a multiple
// of 4 and N to a multiple of 16 with zero weights. The microkernel keeps a tile of up to 4 rows x
// 64 columns in 16 accumulators and broadcasts 4 activation bytes per row per step. Zero points
// are applied after the sum: sum (a - za)(w - zw) = sum a*w - za*colsum(w) - zw*rowsum(a)
// + K*za*zw, with colsum computed at pack time. The epilogue requantizes in registers (torch's
// formula: (acc + bias / (sa*sw)) * (sa*sw/so), rounded half to even, plus zo, clamped; relu
// clamps at zo) or, for dynamic linear, scales to float and adds the bias. Without VNNI the
// same packed layout runs through a scalar loop (the reference for the tests, too).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define EMBER_QVNNI 1
#endif

#include "ember/core/parallel.h"
#include "ember/cpu/isa.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/quantized.h"

namespace ember::cpu {
namespace {

constexpr int64_t kLanes = 16;  // output columns per packed block

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

template <class T>
T* ptr(const Tensor& t) {
  return static_cast<T*>(t.data_ptr());
}

#ifdef EMBER_QVNNI
bool has_vnni() {
  static const bool ok = [] {
    __builtin_cpu_init();  // kBestIsa: ATEN_CPU_CAPABILITY may cap it (Note [CPU capability])
    return kBestIsa == Isa::avx512 && __builtin_cpu_supports("avx512vnni");
  }();
  return ok;
}
#define EMBER_QTARGET __attribute__((target("avx512f,avx512bw,avx512vl,avx512dq,avx512vnni")))
#else
bool has_vnni() { return false; }
#endif

// ---------------------------------------------------------------- activations of dynamic linear

// The scalar twin of quantize_u8_avx512 (CPUs without VNNI).
template <class Q>
void quantize_run(const float* x, Q* q, int64_t n, float inv_scale, int64_t zp, int64_t qmin,
                  int64_t qmax) {
  for (int64_t i = 0; i < n; ++i) {
    double v = double(std::nearbyint(x[i] * inv_scale)) + double(zp);
    v = std::min(std::max(v, double(qmin)), double(qmax));
    q[i] = Q(int64_t(v));
  }
}

#ifdef EMBER_QVNNI
// uint8 quantization of one row (the activations of dynamic linear): 16 lanes per step.
EMBER_QTARGET void quantize_u8_avx512(const float* x, uint8_t* q, int64_t n, float inv_scale,
                                      int32_t zp, int32_t qmax) {
  const __m512 vs = _mm512_set1_ps(inv_scale);
  const __m512i vz = _mm512_set1_epi32(zp), lo = _mm512_setzero_si512(),
                hi = _mm512_set1_epi32(qmax);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i v = _mm512_cvtps_epi32(_mm512_mul_ps(_mm512_loadu_ps(x + i), vs));
    v = _mm512_min_epi32(_mm512_max_epi32(_mm512_add_epi32(v, vz), lo), hi);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(q + i), _mm512_cvtepi32_epi8(v));
  }
  for (; i < n; ++i) {
    int32_t v = int32_t(std::nearbyint(x[i] * inv_scale)) + zp;
    q[i] = uint8_t(std::min(std::max(v, 0), qmax));
  }
}

// The smallest and largest of n floats, 16 lanes at a time.
EMBER_QTARGET void min_max_avx512(const float* x, int64_t n, float& lo, float& hi) {
  __m512 vlo = _mm512_set1_ps(lo), vhi = _mm512_set1_ps(hi);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512 v = _mm512_loadu_ps(x + i);
    vlo = _mm512_min_ps(vlo, v);
    vhi = _mm512_max_ps(vhi, v);
  }
  lo = _mm512_reduce_min_ps(vlo);
  hi = _mm512_reduce_max_ps(vhi);
  for (; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
}
#endif

// ---------------------------------------------------------------- packing

// weight int8 [N, K] (N = all groups' output channels, K per group) -> packed blocks per group,
// and per-column sums (int32, padded N per group).
std::tuple<Tensor, Tensor> qpack_kernel(const Tensor& weight_, int64_t groups) {
  EMBER_CHECK(weight_.dtype() == kChar && weight_.dim() == 2,
              "_ember_qpack: expected an int8 matrix; got ", dtype_name(weight_.dtype()));
  Tensor weight = weight_.contiguous();
  int64_t n_all = weight.size(0), k = weight.size(1);
  int64_t n = n_all / groups, k4 = round_up(k, 4) / 4, npad = round_up(n, kLanes);
  Tensor packed = empty({groups * npad * k4 * 4}, kChar);
  Tensor colsum = empty({groups * npad}, kInt);
  int8_t* p = ptr<int8_t>(packed);
  int32_t* cs = ptr<int32_t>(colsum);
  const int8_t* w = ptr<int8_t>(weight);
  std::memset(p, 0, size_t(packed.numel()));
  for (int64_t g = 0; g < groups; ++g) {
    int8_t* pg = p + g * npad * k4 * 4;
    for (int64_t col = 0; col < npad; ++col) {
      int32_t sum = 0;
      if (col < n) {
        const int8_t* row = w + (g * n + col) * k;
        int64_t blk = col / kLanes, lane = col % kLanes;
        for (int64_t kk = 0; kk < k; ++kk) {
          pg[((blk * k4 + kk / 4) * kLanes + lane) * 4 + kk % 4] = row[kk];
          sum += row[kk];
        }
      }
      cs[g * npad + col] = sum;
    }
  }
  return {packed, colsum};
}

// ---------------------------------------------------------------- GEMM + epilogue

// What the epilogue does with a tile's int32 sums.
struct Epilogue {
  int64_t k = 0;                    // the true K (for the K*za*zw term)
  int32_t a_zp = 0;                 // activation zero point
  const int32_t* colsum = nullptr;  // [npad] of this group
  const int32_t* w_zp = nullptr;    // [n] of this group
  const float* w_scale = nullptr;   // [n]
  const float* bias = nullptr;      // [n] or null
  bool any_w_zp = false;
  float a_scale = 1;
  // static (quantized output)
  float out_scale = 1;
  int32_t out_zp = 0, qlo = 0, qhi = 255;
  bool signed_out = false;
  // dynamic (float output)
  bool float_out = false;
  bool relu = false;
  // output addressing: element (m, n) at out + m*sm + n*sn (bytes of the element type)
  void* out = nullptr;
  int64_t sm = 0, sn = 1;
};

// The corrected int32 sum of one (m, n): the scalar definition the vector epilogue follows.
inline int32_t corrected(const Epilogue& e, int32_t acc, int64_t n, int32_t rowsum) {
  int32_t wz = e.w_zp[n];
  return acc - e.a_zp * e.colsum[n] - wz * rowsum + int32_t(e.k) * e.a_zp * wz;
}

inline void store_scalar(const Epilogue& e, int64_t m, int64_t n, int32_t acc, int32_t rowsum) {
  int32_t c = corrected(e, acc, n, rowsum);
  float sw = e.a_scale * e.w_scale[n];
  if (e.float_out) {
    // one rounding for the scaling and the bias, as fbgemm's float-output requantization
    float y = std::fma(float(c), sw, e.bias ? e.bias[n] : 0.f);
    if (e.relu) y = std::max(y, 0.f);
    static_cast<float*>(e.out)[m * e.sm + n * e.sn] = y;
    return;
  }
  float y =
      e.bias ? (float(c) + e.bias[n] / sw) * (sw / e.out_scale) : float(c) * (sw / e.out_scale);
  int32_t q = int32_t(std::nearbyint(y)) + e.out_zp;
  q = std::min(std::max(q, e.qlo), e.qhi);
  if (e.signed_out) static_cast<int8_t*>(e.out)[m * e.sm + n * e.sn] = int8_t(q);
  else static_cast<uint8_t*>(e.out)[m * e.sm + n * e.sn] = uint8_t(q);
}

// Scalar GEMM over the packed layout: rows [m0, m1), column blocks [b0, b1).
void gemm_tile_scalar(const uint8_t* a, int64_t lda, const int8_t* bp, int64_t k4, int64_t n,
                      const int32_t* rowsum, int64_t m0, int64_t m1, int64_t b0, int64_t b1,
                      const Epilogue& e) {
  for (int64_t m = m0; m < m1; ++m)
    for (int64_t blk = b0; blk < b1; ++blk)
      for (int64_t lane = 0; lane < kLanes; ++lane) {
        int64_t col = blk * kLanes + lane;
        if (col >= n) break;
        int32_t acc = 0;
        const int8_t* b = bp + blk * k4 * kLanes * 4 + lane * 4;
        const uint8_t* ar = a + m * lda;
        for (int64_t kk = 0; kk < k4; ++kk)
          for (int j = 0; j < 4; ++j) acc += int32_t(ar[kk * 4 + j]) * int32_t(b[kk * 64 + j]);
        store_scalar(e, m, col, acc, rowsum ? rowsum[m] : 0);
      }
}

#ifdef EMBER_QVNNI
template <int MR, int NB>
EMBER_QTARGET void vnni_tile(const uint8_t* a, int64_t lda, const int8_t* b, int64_t bstride,
                             int64_t k4, int64_t n, int64_t m0, int64_t col0, const int32_t* rowsum,
                             const Epilogue& e) {
  // Every loop over the tile is unrolled, so the 16 accumulators stay in registers (GCC keeps
  // a rolled loop's array on the stack, a load and a store around every vpdpbusd).
  __m512i acc[MR][NB];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i)
#pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_setzero_si512();
  const uint8_t* ar[MR];
#pragma GCC unroll 16
  for (int i = 0; i < MR; ++i) ar[i] = a + (m0 + i) * lda;
  for (int64_t kk = 0; kk < k4; ++kk) {
    __m512i bv[NB];
#pragma GCC unroll 16
    for (int j = 0; j < NB; ++j) bv[j] = _mm512_loadu_si512(b + j * bstride + kk * 64);
#pragma GCC unroll 16
    for (int i = 0; i < MR; ++i) {
      int32_t word;
      std::memcpy(&word, ar[i] + kk * 4, 4);
      __m512i av = _mm512_set1_epi32(word);
#pragma GCC unroll 16
      for (int j = 0; j < NB; ++j) acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], av, bv[j]);
    }
  }
  // Epilogue, 16 columns at a time.
  const __m512i vaz = _mm512_set1_epi32(e.a_zp);
  const __m512i vkaz = _mm512_set1_epi32(int32_t(e.k) * e.a_zp);
  for (int j = 0; j < NB; ++j) {
    int64_t c0 = col0 + j * kLanes;
    int64_t valid = std::min<int64_t>(kLanes, n - c0);
    if (valid <= 0) break;
    __mmask16 mask = valid == 16 ? __mmask16(0xFFFF) : __mmask16((1u << valid) - 1);
    __m512i vcs = _mm512_loadu_si512(e.colsum + c0);
    __m512i vwz = _mm512_maskz_loadu_epi32(mask, e.w_zp + c0);
    __m512 vsw =
        _mm512_mul_ps(_mm512_set1_ps(e.a_scale), _mm512_maskz_loadu_ps(mask, e.w_scale + c0));
    __m512 vb = e.bias ? _mm512_maskz_loadu_ps(mask, e.bias + c0) : _mm512_setzero_ps();
    // column term: -za*colsum + K*za*zw
    __m512i colterm = _mm512_sub_epi32(_mm512_mullo_epi32(vkaz, vwz), _mm512_mullo_epi32(vaz, vcs));
    __m512 vmul = _mm512_div_ps(vsw, _mm512_set1_ps(e.out_scale));
    __m512 vbias_scaled = e.bias ? _mm512_div_ps(vb, vsw) : _mm512_setzero_ps();
    for (int i = 0; i < MR; ++i) {
      int64_t m = m0 + i;
      __m512i c = _mm512_add_epi32(acc[i][j], colterm);
      if (e.any_w_zp)
        c = _mm512_sub_epi32(c, _mm512_mullo_epi32(vwz, _mm512_set1_epi32(rowsum[m])));
      if (e.float_out) {
        __m512 y = _mm512_fmadd_ps(_mm512_cvtepi32_ps(c), vsw, vb);
        if (e.relu) y = _mm512_max_ps(y, _mm512_setzero_ps());
        float* o = static_cast<float*>(e.out) + m * e.sm;
        if (e.sn == 1) {
          _mm512_mask_storeu_ps(o + c0, mask, y);
        } else {
          alignas(64) float tmp[16];
          _mm512_store_ps(tmp, y);
          for (int64_t l = 0; l < valid; ++l) o[(c0 + l) * e.sn] = tmp[l];
        }
        continue;
      }
      __m512 y = _mm512_cvtepi32_ps(c);
      if (e.bias) y = _mm512_add_ps(y, vbias_scaled);
      y = _mm512_mul_ps(y, vmul);
      __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(y), _mm512_set1_epi32(e.out_zp));
      q = _mm512_min_epi32(_mm512_max_epi32(q, _mm512_set1_epi32(e.qlo)), _mm512_set1_epi32(e.qhi));
      __m128i bytes = _mm512_cvtepi32_epi8(q);
      char* o = static_cast<char*>(e.out) + m * e.sm;
      if (e.sn == 1) {
        _mm_mask_storeu_epi8(o + c0, mask, bytes);
      } else {
        alignas(16) char tmp[16];
        _mm_store_si128(reinterpret_cast<__m128i*>(tmp), bytes);
        for (int64_t l = 0; l < valid; ++l) o[(c0 + l) * e.sn] = tmp[l];
      }
    }
  }
}

template <int MR>
void vnni_tile_nb(int nb, const uint8_t* a, int64_t lda, const int8_t* b, int64_t bstride,
                  int64_t k4, int64_t n, int64_t m0, int64_t col0, const int32_t* rowsum,
                  const Epilogue& e) {
  switch (nb) {
    case 1:
      return vnni_tile<MR, 1>(a, lda, b, bstride, k4, n, m0, col0, rowsum, e);
    case 2:
      return vnni_tile<MR, 2>(a, lda, b, bstride, k4, n, m0, col0, rowsum, e);
    case 3:
      return vnni_tile<MR, 3>(a, lda, b, bstride, k4, n, m0, col0, rowsum, e);
    default:
      return vnni_tile<MR, 4>(a, lda, b, bstride, k4, n, m0, col0, rowsum, e);
  }
}
#endif

constexpr int64_t kMR = 4, kNB = 4;

// One tile task: rows [m0, m0+MR) x blocks [b0, b0+NB) of one GEMM.
void gemm_tile(const uint8_t* a, int64_t lda, const int8_t* bp, int64_t k4, int64_t n,
               const int32_t* rowsum, int64_t m0, int64_t m1, int64_t b0, int64_t b1,
               const Epilogue& e) {
#ifdef EMBER_QVNNI
  if (has_vnni()) {
    int64_t bstride = k4 * kLanes * 4;
    for (int64_t m = m0; m < m1; m += kMR) {
      int64_t mr = std::min(kMR, m1 - m);
      for (int64_t blk = b0; blk < b1; blk += kNB) {
        int nb = int(std::min(kNB, b1 - blk));
        const int8_t* b = bp + blk * bstride;
        int64_t col0 = blk * kLanes;
        switch (mr) {
          case 1:
            vnni_tile_nb<1>(nb, a, lda, b, bstride, k4, n, m, col0, rowsum, e);
            break;
          case 2:
            vnni_tile_nb<2>(nb, a, lda, b, bstride, k4, n, m, col0, rowsum, e);
            break;
          case 3:
            vnni_tile_nb<3>(nb, a, lda, b, bstride, k4, n, m, col0, rowsum, e);
            break;
          default:
            vnni_tile_nb<4>(nb, a, lda, b, bstride, k4, n, m, col0, rowsum, e);
        }
      }
    }
    return;
  }
#endif
  gemm_tile_scalar(a, lda, bp, k4, n, rowsum, m0, m1, b0, b1, e);
}

// Runs C = A x B with the epilogue over [M, N], split into tiles across threads. A: [M, k4*4]
// uint8 rows of stride lda.
void gemm_u8s8(const uint8_t* a, int64_t lda, int64_t m, const int8_t* bp, int64_t k4, int64_t n,
               const int32_t* rowsum, const Epilogue& e) {
  int64_t nblocks = round_up(n, kLanes) / kLanes;
  // Tiles: 64 rows (or fewer when M is small) x 4 blocks; small M splits over columns.
  int64_t mt = m <= 16 ? m : 64;
  int64_t nbt = kNB;
  int64_t mtiles = (m + mt - 1) / mt, ntiles = (nblocks + nbt - 1) / nbt;
  int64_t work = m * n * k4 * 4;
  int64_t grain = work >= (1 << 18) ? 1 : mtiles * ntiles;
  parallel_for(0, mtiles * ntiles, grain, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t mi = t / ntiles, ni = t % ntiles;
      int64_t r0 = mi * mt, r1 = std::min(m, r0 + mt);
      int64_t b0 = ni * nbt, b1 = std::min(nblocks, b0 + nbt);
      gemm_tile(a, lda, bp, k4, n, rowsum, r0, r1, b0, b1, e);
    }
  });
}

std::vector<int32_t> row_sums(const uint8_t* a, int64_t lda, int64_t m, int64_t k) {
  std::vector<int32_t> s(size_t(m), 0);
  for (int64_t i = 0; i < m; ++i) {
    int32_t acc = 0;
    for (int64_t j = 0; j < k; ++j) acc += a[i * lda + j];
    s[size_t(i)] = acc;
  }
  return s;
}

struct WeightParams {
  std::vector<int32_t> zp;
  bool any_zp = false;
};
WeightParams weight_zps(const Tensor& w_zps) {
  Tensor z = w_zps.contiguous();
  WeightParams p;
  p.zp.resize(size_t(z.numel()));
  for (int64_t i = 0; i < z.numel(); ++i) {
    p.zp[size_t(i)] = z.dtype() == kLong ? int32_t(ptr<int64_t>(z)[i]) : ptr<int32_t>(z)[i];
    p.any_zp = p.any_zp || p.zp[size_t(i)] != 0;
  }
  return p;
}

// The activation rows as a [M, k4*4] uint8 buffer (padded with zeros when K % 4 != 0).
const uint8_t* padded_rows(const Tensor& x, int64_t m, int64_t k, std::vector<uint8_t>& buf) {
  if (k % 4 == 0) return ptr<uint8_t>(x);
  int64_t kp = round_up(k, 4);
  buf.assign(size_t(m * kp), 0);
  const uint8_t* src = ptr<uint8_t>(x);
  for (int64_t i = 0; i < m; ++i) std::memcpy(buf.data() + i * kp, src + i * k, size_t(k));
  return buf.data();
}

Tensor qlinear_kernel(const Tensor& input, double in_scale, int64_t in_zp, const Tensor& packed,
                      const Tensor& colsum, int64_t n, const Tensor& w_scales_, const Tensor& w_zps,
                      const std::optional<Tensor>& bias_, double out_scale, int64_t out_zp,
                      bool relu) {
  EMBER_CHECK(input.dtype() == kByte, "quantized::linear: expected quint8 input; got ",
              dtype_name(input.dtype()));
  Tensor x = input.contiguous();
  int64_t k = x.size(-1), m = x.numel() / std::max<int64_t>(1, k);
  int64_t k4 = round_up(k, 4) / 4;
  EMBER_CHECK(packed.numel() == round_up(n, kLanes) * k4 * 4,
              "quantized::linear: expected input with ", packed.numel() / round_up(n, kLanes),
              " features; got ", k);
  DimVector shape(x.sizes());
  shape.back() = n;
  Tensor out = empty(shape, kByte);
  Tensor w_scales = w_scales_.contiguous();
  Tensor bias = bias_ ? bias_->contiguous() : Tensor();
  WeightParams wp = weight_zps(w_zps);
  std::vector<uint8_t> buf;
  const uint8_t* a = padded_rows(x, m, k, buf);
  int64_t lda = k4 * 4;
  std::vector<int32_t> rs;
  if (wp.any_zp) rs = row_sums(a, lda, m, k);
  Epilogue e;
  e.k = k;
  e.a_zp = int32_t(in_zp);
  e.colsum = ptr<int32_t>(colsum);
  e.w_zp = wp.zp.data();
  e.w_scale = ptr<float>(w_scales);
  e.bias = bias.defined() ? ptr<float>(bias) : nullptr;
  e.any_w_zp = wp.any_zp;
  e.a_scale = float(in_scale);
  e.out_scale = float(out_scale);
  e.out_zp = int32_t(out_zp);
  e.qlo = relu ? int32_t(std::max<int64_t>(out_zp, 0)) : 0;
  e.qhi = 255;
  e.out = ptr<uint8_t>(out);
  e.sm = n;
  e.sn = 1;
  gemm_u8s8(a, lda, m, ptr<int8_t>(packed), k4, n, rs.empty() ? nullptr : rs.data(), e);
  return out;
}

// torch's choice of (scale, zero_point) for a range [lo, hi] mapped onto [qmin, qmax].
std::pair<float, int32_t> choose_qparams(float lo, float hi, int32_t qmin, int32_t qmax) {
  lo = std::min(lo, 0.f);
  hi = std::max(hi, 0.f);
  double scale = (double(hi) - double(lo)) / double(qmax - qmin);
  if (float(scale) == 0.f || std::isinf(1.f / float(scale))) scale = 0.1;
  constexpr double kSmallScale = 6.1e-5;  // torch's smallest scale; the range grows to match
  if (scale < kSmallScale) {
    double grow = kSmallScale / scale;
    scale = kSmallScale;
    if (lo == 0.f) hi = float(scale * (qmax - qmin));
    else if (hi == 0.f) lo = float(-scale * (qmax - qmin));
    else {
      lo = float(lo * grow);
      hi = float(hi * grow);
    }
  }
  float fscale = float(scale);
  double zp_min = qmin - lo / scale, zp_max = qmax - hi / scale;
  double err_min = std::abs(double(qmin)) - std::abs(lo / scale);
  double err_max = std::abs(double(qmax)) - std::abs(hi / scale);
  double zp0 = err_min < err_max ? zp_min : zp_max;
  int32_t zp = zp0 < qmin ? qmin : zp0 > qmax ? qmax : int32_t(std::nearbyint(zp0));
  return {fscale, zp};
}

Tensor qlinear_dynamic_kernel(const Tensor& input, const Tensor& packed, const Tensor& colsum,
                              int64_t n, const Tensor& w_scales_, const Tensor& w_zps,
                              const std::optional<Tensor>& bias_, bool reduce_range, bool relu) {
  EMBER_CHECK(input.dtype() == kFloat, "quantized::linear_dynamic: expected float32 input; got ",
              dtype_name(input.dtype()));
  Tensor x = input.contiguous();
  int64_t k = x.size(-1), m = x.numel() / std::max<int64_t>(1, k);
  int64_t k4 = round_up(k, 4) / 4, lda = k4 * 4;
  EMBER_CHECK(packed.numel() == round_up(n, kLanes) * k4 * 4,
              "quantized::linear_dynamic: expected input with ",
              packed.numel() / round_up(n, kLanes), " features; got ", k);
  const float* xs = ptr<float>(x);
  float lo = std::numeric_limits<float>::infinity(), hi = -lo;
#ifdef EMBER_QVNNI
  if (has_vnni()) min_max_avx512(xs, m * k, lo, hi);
  else
#endif
    for (int64_t i = 0; i < m * k; ++i) {
      lo = std::min(lo, xs[i]);
      hi = std::max(hi, xs[i]);
    }
  if (m * k == 0) lo = hi = 0;
  // reduce_range picks the parameters for 0..127 but, as fbgemm's quantization in torch, the
  // values are clamped to the full uint8 range: the maximum may round to 128.
  auto [sa, za] = choose_qparams(lo, hi, 0, reduce_range ? 127 : 255);
  constexpr int32_t qmax = 255;
  std::vector<uint8_t> a(size_t(m * lda), 0);
  float inv = 1.0f / sa;
  parallel_for(0, m, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, k)),
               [&](int64_t b, int64_t e) {
                 for (int64_t i = b; i < e; ++i) {
#ifdef EMBER_QVNNI
                   if (has_vnni()) {
                     quantize_u8_avx512(xs + i * k, a.data() + i * lda, k, inv, za, qmax);
                     continue;
                   }
#endif
                   quantize_run<uint8_t>(xs + i * k, a.data() + i * lda, k, inv, za, 0, qmax);
                 }
               });
  DimVector shape(x.sizes());
  shape.back() = n;
  Tensor out = empty(shape, kFloat);
  Tensor w_scales = w_scales_.contiguous();
  Tensor bias = bias_ ? bias_->contiguous() : Tensor();
  WeightParams wp = weight_zps(w_zps);
  std::vector<int32_t> rs;
  if (wp.any_zp) rs = row_sums(a.data(), lda, m, k);
  Epilogue e;
  e.k = k;
  e.a_zp = za;
  e.colsum = ptr<int32_t>(colsum);
  e.w_zp = wp.zp.data();
  e.w_scale = ptr<float>(w_scales);
  e.bias = bias.defined() ? ptr<float>(bias) : nullptr;
  e.any_w_zp = wp.any_zp;
  e.a_scale = sa;
  e.float_out = true;
  e.relu = relu;
  e.out = ptr<float>(out);
  e.sm = n;
  e.sn = 1;
  gemm_u8s8(a.data(), lda, m, ptr<int8_t>(packed), k4, n, rs.empty() ? nullptr : rs.data(), e);
  return out;
}

// weight_shape = (out_channels, kernel_h, kernel_w); input uint8 NCHW; output uint8 NCHW.
Tensor qconv2d_kernel(const Tensor& input, double in_scale, int64_t in_zp, const Tensor& packed,
                      const Tensor& colsum, IntArrayRef wshape, IntArrayRef stride,
                      IntArrayRef padding, IntArrayRef dilation, int64_t groups,
                      const Tensor& w_scales_, const Tensor& w_zps,
                      const std::optional<Tensor>& bias_, double out_scale, int64_t out_zp,
                      bool relu) {
  EMBER_CHECK(input.dtype() == kByte && input.dim() == 4,
              "quantized::conv2d: expected a 4-d quint8 input; got ", dtype_name(input.dtype()));
  const Tensor& x = input;
  int64_t nb = x.size(0), c = x.size(1), h = x.size(2), w = x.size(3);
  int64_t oc = wshape[0], kh = wshape[1], kw = wshape[2];
  int64_t cg = c / groups, ocg = oc / groups;
  int64_t oh = (h + 2 * padding[0] - dilation[0] * (kh - 1) - 1) / stride[0] + 1;
  int64_t ow = (w + 2 * padding[1] - dilation[1] * (kw - 1) - 1) / stride[1] + 1;
  EMBER_CHECK(oh > 0 && ow > 0, "quantized::conv2d: the kernel is larger than the padded input");
  int64_t k = cg * kh * kw, k4 = round_up(k, 4) / 4, lda = k4 * 4, npad = round_up(ocg, kLanes);
  EMBER_CHECK(packed.numel() == groups * npad * lda,
              "quantized::conv2d: the packed weight does not match the input's channels");
  int64_t hw = oh * ow;
  // channels_last output (as torch's): the epilogue stores 16 channels at a time, and the next
  // convolution's NHWC view of it needs no copy.
  Tensor out = empty_strided({nb, oc, oh, ow}, {oh * ow * oc, 1, ow * oc, oc}, kByte);
  Tensor w_scales = w_scales_.contiguous();
  Tensor bias = bias_ ? bias_->contiguous() : Tensor();
  WeightParams wp = weight_zps(w_zps);
  uint8_t* ys = ptr<uint8_t>(out);
  // im2col of every (image, group) from an NHWC copy of the input: rows oh*ow, columns
  // (i, j, c) (the packed weight's order, see PackedConvWeight), so each kernel tap copies the
  // group's channels in one run; taps outside the input get the zero point.
  Tensor xh = x.permute({0, 2, 3, 1}).contiguous();
  const uint8_t* xn = ptr<uint8_t>(xh);
  std::vector<uint8_t> cols(size_t(nb * groups * hw * lda));
  uint8_t pad = uint8_t(in_zp);
  parallel_for(0, nb * groups * oh,
               std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, ow * lda)),
               [&](int64_t b, int64_t e) {
                 for (int64_t r = b; r < e; ++r) {
                   int64_t img = r / (groups * oh), g = (r / oh) % groups, y = r % oh;
                   for (int64_t xo = 0; xo < ow; ++xo) {
                     uint8_t* row = cols.data() + ((img * groups + g) * hw + y * ow + xo) * lda;
                     for (int64_t i = 0; i < kh; ++i) {
                       int64_t iy = y * stride[0] - padding[0] + i * dilation[0];
                       for (int64_t j = 0; j < kw; ++j) {
                         int64_t ix = xo * stride[1] - padding[1] + j * dilation[1];
                         uint8_t* dst = row + (i * kw + j) * cg;
                         bool inside = iy >= 0 && iy < h && ix >= 0 && ix < w;
                         const uint8_t* src = xn + ((img * h + iy) * w + ix) * c + g * cg;
                         if (cg == 1) dst[0] = inside ? src[0] : pad;
                         else if (inside) std::memcpy(dst, src, size_t(cg));
                         else std::memset(dst, pad, size_t(cg));
                       }
                     }
                     std::memset(row + k, 0, size_t(lda - k));
                   }
                 }
               });
  std::vector<int32_t> rs;
  if (wp.any_zp) rs = row_sums(cols.data(), lda, nb * groups * hw, k);
  // One GEMM per (image, group); tiles of all of them share one parallel_for.
  int64_t mt = 64, mtiles = (hw + mt - 1) / mt;
  int64_t nblocks = npad / kLanes, ntiles = (nblocks + kNB - 1) / kNB;
  int64_t per = mtiles * ntiles;
  int64_t total = nb * groups * per;
  parallel_for(0, total, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t ig = t / per, rest = t % per;
      int64_t img = ig / groups, g = ig % groups;
      int64_t mi = rest / ntiles, ni = rest % ntiles;
      Epilogue e;
      e.k = k;
      e.a_zp = int32_t(in_zp);
      e.colsum = ptr<int32_t>(colsum) + g * npad;
      e.w_zp = wp.zp.data() + g * ocg;
      e.w_scale = ptr<float>(w_scales) + g * ocg;
      e.bias = bias.defined() ? ptr<float>(bias) + g * ocg : nullptr;
      e.any_w_zp = wp.any_zp;
      e.a_scale = float(in_scale);
      e.out_scale = float(out_scale);
      e.out_zp = int32_t(out_zp);
      e.qlo = relu ? int32_t(std::max<int64_t>(out_zp, 0)) : 0;
      e.qhi = 255;
      e.out = ys + img * hw * oc + g * ocg;
      e.sm = oc;
      e.sn = 1;
      const uint8_t* a = cols.data() + ig * hw * lda;
      const int32_t* r = rs.empty() ? nullptr : rs.data() + ig * hw;
      int64_t r0 = mi * mt, r1 = std::min(hw, r0 + mt);
      int64_t b0 = ni * kNB, b1 = std::min(nblocks, b0 + kNB);
      gemm_tile(a, lda, ptr<int8_t>(packed) + g * npad * lda, k4, ocg, r, r0, r1, b0, b1, e);
    }
  });
  return out;
}

// ---------------------------------------------------------------- elementwise

// y[n, c, ...] = clamp(round((x - zp) * mul[c] + add[c]) + zo): quantized batch norm (and any
// per-channel affine map) on dim 1.
Tensor qchannel_affine_kernel(const Tensor& self_, int64_t zp, const Tensor& mul_,
                              const Tensor& add_, int64_t zo, int64_t qmin, int64_t qmax) {
  Tensor x = self_.contiguous(), mul = mul_.contiguous(), add = add_.contiguous();
  Tensor out = empty(x.sizes(), x.dtype());
  int64_t c = x.size(1), inner = 1;
  for (int64_t d = 2; d < x.dim(); ++d) inner *= x.size(d);
  int64_t planes = x.numel() / std::max<int64_t>(1, inner);
  const float* mu = ptr<float>(mul);
  const float* ad = ptr<float>(add);
  auto run = [&](const auto* xs, auto* ys) {
    using Q = std::remove_pointer_t<decltype(ys)>;
    parallel_for(0, planes, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(1, inner)),
                 [&](int64_t b, int64_t e) {
                   for (int64_t p = b; p < e; ++p) {
                     int64_t ch = p % c;
                     float m = mu[ch], a = ad[ch];
                     for (int64_t i = p * inner; i < (p + 1) * inner; ++i) {
                       int64_t q = int64_t(std::nearbyint((float(xs[i]) - float(zp)) * m + a)) + zo;
                       ys[i] = Q(std::min(std::max(q, qmin), qmax));
                     }
                   }
                 });
  };
  if (x.dtype() == kByte) run(ptr<uint8_t>(x), ptr<uint8_t>(out));
  else if (x.dtype() == kChar) run(ptr<int8_t>(x), ptr<int8_t>(out));
  else EMBER_CHECK(false, "quantized batch_norm: expected 8-bit values");
  return out;
}

// ---------------------------------------------------------------- embedding bag

// weight: uint8 rows of `dim` values (bits 8) or ceil(dim/2) bytes (bits 4, low nibble first);
// per-row float scales and float zero points: x = (q - zp) * scale. mode 0 sum, 1 mean, 2 max.
Tensor qembedding_bag_kernel(const Tensor& weight_, const Tensor& scales_, const Tensor& zps_,
                             int64_t bits, int64_t dim, const Tensor& indices_,
                             const Tensor& offsets_, int64_t mode,
                             const std::optional<Tensor>& psw_, bool include_last_offset) {
  Tensor wt = weight_.contiguous(), sc = scales_.contiguous(), zp = zps_.contiguous();
  Tensor idx = indices_.contiguous(), off = offsets_.contiguous();
  EMBER_CHECK(idx.dtype() == kLong && off.dtype() == kLong,
              "quantized::embedding_bag: expected int64 indices and offsets");
  int64_t rows = wt.size(0), row_bytes = wt.size(1);
  int64_t ni = idx.numel(), nbags = off.numel() - (include_last_offset ? 1 : 0);
  Tensor psw = psw_ ? psw_->contiguous() : Tensor();
  Tensor out = empty({nbags, dim}, kFloat);
  const uint8_t* w = ptr<uint8_t>(wt);
  const float* s = ptr<float>(sc);
  const float* z = ptr<float>(zp);
  const int64_t* ix = ptr<int64_t>(idx);
  const int64_t* of = ptr<int64_t>(off);
  float* y = ptr<float>(out);
  for (int64_t i = 0; i < ni; ++i)
    EMBER_CHECK_INDEX(ix[i] >= 0 && ix[i] < rows, "index ", ix[i],
                      " is out of bounds for the embedding of ", rows, " rows");
  parallel_for(0, nbags, 16, [&](int64_t b0, int64_t b1) {
    for (int64_t bag = b0; bag < b1; ++bag) {
      int64_t start = of[bag], end = bag + 1 < off.numel() ? of[bag + 1] : ni;
      float* o = y + bag * dim;
      for (int64_t d = 0; d < dim; ++d)
        o[d] = mode == 2 && end > start ? -std::numeric_limits<float>::infinity() : 0.f;
      for (int64_t p = start; p < end; ++p) {
        int64_t r = ix[p];
        const uint8_t* src = w + r * row_bytes;
        float scale = s[r], zero = z[r];
        float wgt = psw.defined() ? ptr<float>(psw)[p] : 1.f;
        for (int64_t d = 0; d < dim; ++d) {
          int q = bits == 8 ? src[d] : (d % 2 == 0 ? src[d / 2] & 15 : src[d / 2] >> 4);
          float v = (float(q) - zero) * scale;
          if (mode == 2) o[d] = std::max(o[d], v);
          else o[d] += v * wgt;
        }
      }
      if (mode == 1 && end > start)
        for (int64_t d = 0; d < dim; ++d) o[d] /= float(end - start);
    }
  });
  return out;
}

}  // namespace

EMBER_REGISTER_KERNEL(op::_ember_qpack, CPU, qpack_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qlinear, CPU, qlinear_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qlinear_dynamic, CPU, qlinear_dynamic_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qconv2d, CPU, qconv2d_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qchannel_affine, CPU, qchannel_affine_kernel);
EMBER_REGISTER_KERNEL(op::_ember_qembedding_bag, CPU, qembedding_bag_kernel);

}  // namespace ember::cpu
