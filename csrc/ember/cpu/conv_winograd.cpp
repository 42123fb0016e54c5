// Winograd F(2x2, 3x3) float32 convolution: the forward, and the input and weight gradients
// from one transform of the output gradient. See Note [Winograd convolution].
#pragma GCC optimize("tree-vectorize", "vect-cost-model=dynamic")
#pragma GCC diagnostic ignored "-Wpsabi"  // vec, only ever inlined
#include "ember/cpu/conv_winograd.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string_view>

#include "ember/cpu/blas_threads.h"
#include "ember/cpu/conv_chunks.h"
#include "ember/cpu/sgemm.h"

namespace ember::cpu {

// Note [Winograd convolution]
// A 3x3 convolution at unit stride computes each 2x2 block of outputs ("tile") from the 4x4
// input patch under it with 16 multiplies per channel pair instead of 36: with B^T = [1 0 -1 0;
// 0 1 1 0; 0 -1 1 0; 0 1 0 -1], G = [1 0 0; .5 .5 .5; .5 -.5 .5; 0 0 1] and A^T = [1 1 1 0;
// 0 1 -1 -1], a tile's output is A^T [sum over c of (G w G^T) (.) (B^T d B)] A. Grouped by the
// 16 positions of the 4x4 products, the sum over input channels is 16 GEMMs, (K, C) @ (C,
// tiles): 2.25x fewer multiply-adds than the direct convolution's GEMM, plus the transforms,
// which are adds. The weight gradient is the same algebra run backwards: per position, (K,
// tiles) @ (tiles, C) of the output gradient's transform A dY A^T and the input's B^T d B, then
// G^T (.) G back to 3x3, summed over tiles in each GEMM and over chunks of samples in order, so
// results do not depend on the thread count; chunks are sized by the shapes alone
// (kChunkTiles tiles). The input gradient is the forward's adjoint: per position, (C, K) @ (K,
// tiles) of the weights' transform and A dY A^T, the output gradient's transform the weight
// gradient also needs, then B (.) B^T per tile, whose overlapping 4x4 patches are summed in a
// fixed order (input_untransform). It runs only with the weight gradient and where it pays
// (winograd_adjoint_pays): sharing A dY A^T saves the turned convolution's input transform over
// K channels, but the patch sums cost about twice its output transform over C. Measured (1
// thread, CPU time, 30-60 alternating pairs): both gradients of 32 -> 64 at 14 x 14, N=128, 0.90x
// the weight gradient plus the turned convolution; 128 -> 128 at 28 x 28 1.00-1.03x; 256 -> 256
// at 14 x 14 1.09x; 64 -> 64 at 56 x 56 (patch arrays past L1) 1.2x; the input gradient alone
// of 32 -> 64 1.14x. Elsewhere the input gradient is the turned convolution (Note [Input
// gradient as a convolution]), itself Winograd's.
// The transforms run over whole rows of tiles: each input plane, zero-bordered, is split into
// its even and odd columns, so the four columns of every tile in a row are four contiguous
// streams and the loop over tiles vectorizes.
// Errors: the transforms add and halve, so results differ from the direct sum by a few ulps of
// the inputs' magnitudes (test_conv_padded.py checks them against float64). But they also
// subtract inputs from each other: an infinity would give inf - inf = NaN where the direct sum
// gives +-inf, so a pass that meets an infinity or NaN in its operands returns false and the
// caller runs the direct path.
// Measured on the AMD EPYC (AVX2) in docs/ARCHITECTURE.md (issue 18, session 19).

namespace {

// Fewer channels leave the GEMMs too thin to pay for the transforms.
constexpr int64_t kMinChannels = 8;
// Tiles per chunk: the chunk's transformed operands stay near L2's size.
constexpr int64_t kChunkTiles = 196;
// input_untransform's patch arrays of one plane stay in half of L1 up to this; past it (3x3
// 64 -> 64 at 56 x 56: 56 KB) the turned convolution measured faster.
constexpr int64_t kAdjointBytes = 16 * 1024;

// Eight floats as one value: the transforms' loops run on these, compiled to one AVX2 register
// (or two SSE ones, or half an AVX-512 one) by the clone with_best_isa picks.
typedef float vec __attribute__((vector_size(32)));
constexpr int64_t kLanes = 8;
inline vec load(const float* p) {
  vec v;
  std::memcpy(&v, p, sizeof v);
  return v;
}
inline void store(float* p, vec v) { std::memcpy(p, &v, sizeof v); }

// One image's tiles, in rows of TW + 1: the last tile of each row is a dummy, so that tile
// s + 1 is the next one to the right and s + TW + 1 the one below, for every s (its outputs are
// dropped and its output gradient is zero).
struct Tiles {
  int64_t H, W, ph, pw, OH, OW, TH, TW;
  int64_t stride() const { return TW + 1; }
  int64_t per_image() const { return TH * stride(); }
  // The transforms run over whole vectors of tiles: the buffers' slack past per_image().
  int64_t padded() const { return (per_image() + kLanes - 1) / kLanes * kLanes; }
  // A parity plane (below) with the slack the last vector reads past it.
  int64_t plane() const { return (TH + 1) * stride() + 2 * kLanes; }
  // input_untransform's per-tile arrays: zeros before the tiles for the shifted reads, and room
  // past them for the last vector's spill and the parity planes' last row.
  int64_t lead() const { return stride() + 1; }
  int64_t spread() const { return lead() + std::max(padded(), (TH + 1) * stride() + kLanes); }
};

Tiles tiles_of(int64_t H, int64_t W, IntArrayRef padding, int64_t OH, int64_t OW) {
  return {H, W, padding[0], padding[1], OH, OW, (OH + 1) / 2, (OW + 1) / 2};
}

int64_t chunk_images(int64_t n, const Tiles& t) {
  return std::clamp<int64_t>((kChunkTiles + t.per_image() - 1) / t.per_image(), 1, n);
}

// Whether p[0, n) holds no infinity or NaN (an exponent of all ones).
bool all_finite(const float* p, int64_t n) {
  uint32_t bad = 0;
  for (int64_t i = 0; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, p + i, sizeof b);
    bad |= uint32_t((b & 0x7f800000u) == 0x7f800000u);
  }
  return bad == 0;
}

// c (m x n) = a (m x k) @ b: b (k x n) or, transposed, b^T stored (n x k); all row-major with
// row strides lda, ldb, ldc.
void gemm(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b, int64_t ldb,
          bool bt, float* c, int64_t ldc) {
  if (has_sgemm()) {
    sgemm(m, n, k, 1.0f, a, lda, 1, b, bt ? 1 : ldb, bt ? ldb : 1, 0.0f, c, ldc);
    return;
  }
  cblas_sgemm(CblasRowMajor, CblasNoTrans, bt ? CblasTrans : CblasNoTrans, int(m), int(n), int(k),
              1.0f, a, int(lda), b, int(ldb), 0.0f, c, int(ldc));
}

// The transforms' operands: 16 matrices, `mat` floats apart, of rows `ld` floats long; one
// image's tiles start at column col0. Row slack lets the last vector of tiles spill.
struct Operand {
  float* data;
  int64_t mat, ld, col0;
  float* at(int p, int64_t row) const { return data + p * mat + row * ld + col0; }
};

// The zero-bordered plane of one input channel (row r, column q hold x[r - ph][q - pw]) as four
// parity planes: q[2 * (r % 2) + (q % 2)][(r / 2) * stride() + q / 2]. Tile s's 4x4 patch is
// then q[2 * (i % 2) + (j % 2)][s + (i / 2) * stride() + j / 2]: four vectors at fixed offsets.
// `padded` holds the plane itself, rows of 2 * stride(): every channel writes the same inside,
// so its border stays zero. The whole plane is copied before it is split: splitting each row
// right after copying it read vectors across the copy's stores, which could not forward them
// (~8 % of the transforms' time in perf). The parity planes' slack stays zero.
void split_plane(const float* x, const Tiles& t, float* padded, float* const q[4]) {
  const int64_t S = t.stride();
  for (int64_t h = 0; h < t.H; ++h)
    std::copy_n(x + h * t.W, t.W, padded + (h + t.ph) * 2 * S + t.pw);
  for (int64_t r = 0; r < 2 * t.TH + 2; ++r) {
    const float* line = padded + r * 2 * S;
    float* even = q[2 * (r % 2)] + (r / 2) * S;
    float* odd = q[2 * (r % 2) + 1] + (r / 2) * S;
    for (int64_t i = 0; i < S; ++i) {
      even[i] = line[2 * i];
      odd[i] = line[2 * i + 1];
    }
  }
}

// v[p][c][tile] = (B^T d B)[p] of each tile d of one image's C channels. `q` holds four
// zeroed planes of t.plane() floats, `padded` the zero-bordered plane (split_plane).
void input_transform(const float* image, int64_t C, const Tiles& t, float* const q[4],
                     float* padded, const Operand& v) {
  const int64_t S = t.stride();
  for (int64_t c = 0; c < C; ++c) {
    split_plane(image + c * t.H * t.W, t, padded, q);
    for (int64_t s = 0; s < t.padded(); s += kLanes) {
      vec r[4][4];  // B^T d: the rows combined, per column j
      for (int j = 0; j < 4; ++j) {
        const float* top = q[j % 2] + s + j / 2;         // rows 0 and 2
        const float* bottom = q[2 + j % 2] + s + j / 2;  // rows 1 and 3
        const vec d0 = load(top), d1 = load(bottom), d2 = load(top + S), d3 = load(bottom + S);
        r[0][j] = d0 - d2;
        r[1][j] = d1 + d2;
        r[2][j] = d2 - d1;
        r[3][j] = d1 - d3;
      }
      for (int i = 0; i < 4; ++i) {  // (B^T d) B: the columns combined
        store(v.at(4 * i + 0, c) + s, r[i][0] - r[i][2]);
        store(v.at(4 * i + 1, c) + s, r[i][1] + r[i][2]);
        store(v.at(4 * i + 2, c) + s, r[i][2] - r[i][1]);
        store(v.at(4 * i + 3, c) + s, r[i][1] - r[i][3]);
      }
    }
  }
}

// The input gradient of one image's C planes from dv[p][c][tile], the gradient of each tile's
// B^T d B: the adjoint of input_transform. Each tile's B dv B^T lands on its 4x4 patch, which
// overlaps its neighbours', so the patch's 16 entries are first stored per tile in `spread` (16
// arrays of t.spread() floats, zero before t.lead(); entry (i, j) goes to array 4 * plane +
// 2 * (i / 2) + j / 2, where parity plane 2 * (i % 2) + j % 2 holds it at offset (i / 2) *
// stride() + j / 2 from the tile). Each parity plane `q` then sums its four arrays, shifted by
// those offsets, in one fixed order, and gi is the plane's inside.
void input_untransform(const Operand& dv, int64_t C, const Tiles& t, float* spread,
                       float* const q[4], float* gi) {
  const int64_t S = t.stride(), L = t.lead(), n = t.spread(), rows = (t.TH + 1) * S;
  for (int64_t c = 0; c < C; ++c) {
    for (int64_t s = 0; s < t.padded(); s += kLanes) {
      vec r[4][4];  // B dv: the rows combined, per column j
      for (int j = 0; j < 4; ++j) {
        const vec v0 = load(dv.at(j, c) + s), v1 = load(dv.at(4 + j, c) + s);
        const vec v2 = load(dv.at(8 + j, c) + s), v3 = load(dv.at(12 + j, c) + s);
        r[0][j] = v0;
        r[1][j] = v1 - v2 + v3;
        r[2][j] = v1 + v2 - v0;
        r[3][j] = -v3;
      }
      for (int i = 0; i < 4; ++i) {  // (B dv) B^T: the columns combined
        const vec d[4] = {r[i][0], r[i][1] - r[i][2] + r[i][3], r[i][1] + r[i][2] - r[i][0],
                          -r[i][3]};
        for (int j = 0; j < 4; ++j)
          store(spread + (4 * (2 * (i % 2) + j % 2) + 2 * (i / 2) + j / 2) * n + L + s, d[j]);
      }
    }
    // Past the image's tiles lie the next image's (or the row slack): they add nothing here.
    for (int e = 0; e < 16; ++e)
      std::fill(spread + e * n + L + t.per_image(), spread + (e + 1) * n, 0.0f);
    for (int p = 0; p < 4; ++p) {
      const float* e = spread + 4 * p * n + L;
      for (int64_t s = 0; s < rows; s += kLanes)
        store(q[p] + s, load(e + s) + load(e + n + s - 1) + load(e + 2 * n + s - S) +
                            load(e + 3 * n + s - S - 1));
    }
    float* plane = gi + c * t.H * t.W;
    for (int64_t h = 0; h < t.H; ++h) {
      const int64_t r = h + t.ph;
      const float* even = q[2 * (r % 2)] + (r / 2) * S;  // the padded row's even columns
      const float* odd = q[2 * (r % 2) + 1] + (r / 2) * S;
      for (int64_t w = 0; w < t.W; ++w) {
        const int64_t col = w + t.pw;
        plane[h * t.W + w] = (col % 2 ? odd : even)[col / 2];
      }
    }
  }
}

// One image's K output planes from m[p][k][tile] (A^T m A per tile), plus the bias. `work`
// holds 4 * padded() floats.
void output_transform(const Operand& m, int64_t K, const Tiles& t, const float* bias, float* work,
                      float* y) {
  const int64_t S = t.stride(), n = t.padded();
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t s = 0; s < n; s += kLanes) {
      vec r[2][4];  // A^T m: the rows combined, per column j
      for (int j = 0; j < 4; ++j) {
        const vec m0 = load(m.at(j, k) + s), m1 = load(m.at(4 + j, k) + s);
        const vec m2 = load(m.at(8 + j, k) + s), m3 = load(m.at(12 + j, k) + s);
        r[0][j] = m0 + m1 + m2;
        r[1][j] = m1 - m2 - m3;
      }
      for (int a = 0; a < 2; ++a) {  // work: output row a's even, then odd columns
        store(work + (2 * a) * n + s, r[a][0] + r[a][1] + r[a][2]);
        store(work + (2 * a + 1) * n + s, r[a][1] - r[a][2] - r[a][3]);
      }
    }
    const float b = bias ? bias[k] : 0.0f;
    for (int64_t oh = 0; oh < t.OH; ++oh) {
      float* row = y + (k * t.OH + oh) * t.OW;
      const float* even = work + 2 * (oh % 2) * n + (oh / 2) * S;
      const float* odd = even + n;
      for (int64_t i = 0; i < t.OW / 2; ++i) {
        row[2 * i] = even[i] + b;
        row[2 * i + 1] = odd[i] + b;
      }
      if (t.OW % 2) row[t.OW - 1] = even[t.OW / 2] + b;
    }
  }
}

// dm[p][k][tile] = (A dY A^T)[p] of each 2x2 tile dY of one image's K output-gradient planes,
// zero past the output's edges and at the dummy tiles. `g` holds four planes of t.plane()
// floats, zero past per_image().
void grad_transform(const float* go, int64_t K, const Tiles& t, float* const g[4],
                    const Operand& dm) {
  const int64_t S = t.stride();
  for (int64_t k = 0; k < K; ++k) {
    const float* plane = go + k * t.OH * t.OW;
    for (int64_t oh = 0; oh < 2 * t.TH; ++oh) {  // g[2a + b][th * S + tw] = dY[2th + a][2tw + b]
      float* even = g[2 * (oh % 2)] + (oh / 2) * S;
      float* odd = g[2 * (oh % 2) + 1] + (oh / 2) * S;
      std::fill_n(even, S, 0.0f);
      std::fill_n(odd, S, 0.0f);
      if (oh >= t.OH) continue;
      const float* row = plane + oh * t.OW;
      for (int64_t i = 0; i < t.OW / 2; ++i) {
        even[i] = row[2 * i];
        odd[i] = row[2 * i + 1];
      }
      if (t.OW % 2) even[t.OW / 2] = row[t.OW - 1];
    }
    for (int64_t s = 0; s < t.padded(); s += kLanes) {
      const vec y00 = load(g[0] + s), y01 = load(g[1] + s);
      const vec y10 = load(g[2] + s), y11 = load(g[3] + s);
      const vec u[4][2] = {{y00, y01},
                           {y00 + y10, y01 + y11},
                           {y00 - y10, y01 - y11},
                           {-y10, -y11}};  // A dY: the rows
      for (int i = 0; i < 4; ++i) {        // (A dY) A^T: the columns
        store(dm.at(4 * i + 0, k) + s, u[i][0]);
        store(dm.at(4 * i + 1, k) + s, u[i][0] + u[i][1]);
        store(dm.at(4 * i + 2, k) + s, u[i][0] - u[i][1]);
        store(dm.at(4 * i + 3, k) + s, -u[i][1]);
      }
    }
  }
}

// u[p][k][c] = (G w G^T)[p] of each 3x3 kernel w[k][c]; turned, u[p][c][k] (the input
// gradient's GEMMs take it as (C, K)), written in that order so the stores run along u's rows.
void weight_transform(const float* w, int64_t K, int64_t C, bool turned, float* u) {
  const int64_t KC = K * C;
  for (int64_t row = 0; row < KC; ++row) {
    const float* g = w + (turned ? (row % K) * C + row / K : row) * 9;
    for (int i = 0; i < 4; ++i) {
      float a[3];  // row i of G g
      for (int j = 0; j < 3; ++j) {
        const float g0 = g[j], g1 = g[3 + j], g2 = g[6 + j];
        a[j] = i == 0 ? g0 : i == 3 ? g2 : 0.5f * (i == 1 ? g0 + g1 + g2 : g0 - g1 + g2);
      }
      u[(4 * i + 0) * KC + row] = a[0];
      u[(4 * i + 1) * KC + row] = 0.5f * (a[0] + a[1] + a[2]);
      u[(4 * i + 2) * KC + row] = 0.5f * (a[0] - a[1] + a[2]);
      u[(4 * i + 3) * KC + row] = a[2];
    }
  }
}

// gw[kc] = G^T x[kc] G of each 4x4 x[p][kc] (the gradient back through weight_transform).
void weight_untransform(const float* x, int64_t KC, float* gw) {
  for (int64_t kc = 0; kc < KC; ++kc) {
    float b[3][4];  // G^T x: the rows combined, per column j
    for (int j = 0; j < 4; ++j) {
      const float x0 = x[j * KC + kc], x1 = x[(4 + j) * KC + kc];
      const float x2 = x[(8 + j) * KC + kc], x3 = x[(12 + j) * KC + kc];
      b[0][j] = x0 + 0.5f * (x1 + x2);
      b[1][j] = 0.5f * (x1 - x2);
      b[2][j] = 0.5f * (x1 + x2) + x3;
    }
    for (int i = 0; i < 3; ++i) {
      gw[kc * 9 + i * 3 + 0] = b[i][0] + 0.5f * (b[i][1] + b[i][2]);
      gw[kc * 9 + i * 3 + 1] = 0.5f * (b[i][1] - b[i][2]);
      gw[kc * 9 + i * 3 + 2] = 0.5f * (b[i][1] + b[i][2]) + b[i][3];
    }
  }
}

std::unique_ptr<float[]> buffer(int64_t n) {
  return std::unique_ptr<float[]>(new float[size_t(n)]);
}

// A chunk's scratch, zeroed: four parity planes and a zero-bordered plane (split_plane), and the
// output transform's work.
struct Scratch {
  std::unique_ptr<float[]> mem;
  float* planes[4];
  float* padded;
  float* work;
  explicit Scratch(const Tiles& t)
      : mem(new float[size_t(4 * t.plane() + (2 * t.TH + 2) * 2 * t.stride() + 4 * t.padded())]()) {
    for (int i = 0; i < 4; ++i) planes[i] = mem.get() + i * t.plane();
    padded = mem.get() + 4 * t.plane();
    work = padded + (2 * t.TH + 2) * 2 * t.stride();
  }
};

}  // namespace

bool winograd_applies(ScalarType dtype, int64_t in_channels, int64_t out_channels,
                      IntArrayRef kernel, IntArrayRef stride, IntArrayRef dilation,
                      int64_t groups) {
  if (dtype != kFloat || kernel.size() != 2 || groups != 1 || in_channels < kMinChannels ||
      out_channels < kMinChannels)
    return false;
  for (size_t d = 0; d < 2; ++d)
    if (kernel[d] != 3 || stride[d] != 1 || dilation[d] != 1) return false;
  const char* v = std::getenv("EMBER_WINOGRAD");
  return !(v && std::string_view(v) == "0");
}

bool winograd_adjoint_pays(int64_t in_channels, int64_t out_channels, int64_t H, int64_t W,
                           IntArrayRef padding, int64_t OH, int64_t OW) {
  return out_channels > in_channels &&
         16 * tiles_of(H, W, padding, OH, OW).spread() * int64_t(sizeof(float)) <= kAdjointBytes;
}

bool winograd_forward(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                      const Tensor& y, IntArrayRef padding) {
  const int64_t N = x.size(0), C = x.size(1), K = w.size(0), in_numel = C * x.size(2) * x.size(3);
  const Tiles t = tiles_of(x.size(2), x.size(3), padding, y.size(2), y.size(3));
  const float* px = x.data_ptr<float>();
  const float* pb = bias ? bias->data_ptr<float>() : nullptr;
  float* py = y.data_ptr<float>();
  if (!all_finite(w.data_ptr<float>(), K * C * 9)) return false;
  auto u = buffer(16 * K * C);
  weight_transform(w.data_ptr<float>(), K, C, false, u.get());
  std::atomic<bool> ok{true};
  for_each_chunk(N, chunk_images(N, t), [&](int64_t n0, int64_t n1) {
    if (!ok.load(std::memory_order_relaxed) ||
        !all_finite(px + n0 * in_numel, (n1 - n0) * in_numel)) {
      ok = false;
      return;
    }
    const int64_t T = (n1 - n0) * t.per_image(), ld = T + kLanes;
    auto v = buffer(16 * C * ld), m = buffer(16 * K * ld);
    for (int64_t row = 0; row < 16 * K; ++row) std::fill_n(m.get() + row * ld + T, kLanes, 0.0f);
    Scratch work(t);
    for (int64_t n = n0; n < n1; ++n)
      input_transform(px + n * in_numel, C, t, work.planes, work.padded,
                      {v.get(), C * ld, ld, (n - n0) * t.per_image()});
    for (int64_t p = 0; p < 16; ++p)
      gemm(K, T, C, u.get() + p * K * C, C, v.get() + p * C * ld, ld, false, m.get() + p * K * ld,
           ld);
    for (int64_t n = n0; n < n1; ++n)
      output_transform({m.get(), K * ld, ld, (n - n0) * t.per_image()}, K, t, pb, work.work,
                       py + n * K * t.OH * t.OW);
  });
  return ok;
}

bool winograd_backward(const Tensor& go, const Tensor& x, const Tensor& w, const Tensor& gi,
                       const Tensor& gw, IntArrayRef padding) {
  const int64_t N = x.size(0), C = x.size(1), K = w.size(0), in_numel = C * x.size(2) * x.size(3);
  const Tiles t = tiles_of(x.size(2), x.size(3), padding, go.size(2), go.size(3));
  const int64_t out_numel = K * t.OH * t.OW, grain = chunk_images(N, t);
  const int64_t chunks = (N + grain - 1) / grain, KC = K * C;
  const float* px = x.data_ptr<float>();
  const float* pg = go.data_ptr<float>();
  std::unique_ptr<float[]> ut, partial;
  if (gi.defined()) {  // ut[p], (C, K): the input gradient's GEMMs run C x tiles
    if (!all_finite(w.data_ptr<float>(), KC * 9)) return false;
    ut = buffer(16 * KC);
    weight_transform(w.data_ptr<float>(), K, C, true, ut.get());
  }
  if (gw.defined()) partial = buffer(chunks * 16 * KC);
  std::atomic<bool> ok{true};
  for_each_chunk(N, grain, [&](int64_t n0, int64_t n1) {
    if (!ok.load(std::memory_order_relaxed) ||
        !all_finite(pg + n0 * out_numel, (n1 - n0) * out_numel) ||
        (gw.defined() && !all_finite(px + n0 * in_numel, (n1 - n0) * in_numel))) {
      ok = false;
      return;
    }
    const int64_t T = (n1 - n0) * t.per_image(), ld = T + kLanes;
    auto v = buffer(16 * C * ld), dm = buffer(16 * K * ld);
    Scratch work(t), grads(t);
    for (int64_t n = n0; n < n1; ++n)
      grad_transform(pg + n * out_numel, K, t, grads.planes,
                     {dm.get(), K * ld, ld, (n - n0) * t.per_image()});
    if (gw.defined()) {
      for (int64_t n = n0; n < n1; ++n)
        input_transform(px + n * in_numel, C, t, work.planes, work.padded,
                        {v.get(), C * ld, ld, (n - n0) * t.per_image()});
      float* acc = partial.get() + (n0 / grain) * 16 * KC;
      for (int64_t p = 0; p < 16; ++p)
        gemm(K, C, T, dm.get() + p * K * ld, ld, v.get() + p * C * ld, ld, true, acc + p * KC, C);
    }
    if (gi.defined()) {  // v is free again: it takes dv, the gradient of the input's transform
      for (int64_t row = 0; row < 16 * C; ++row) std::fill_n(v.get() + row * ld + T, kLanes, 0.0f);
      for (int64_t p = 0; p < 16; ++p)
        gemm(C, T, K, ut.get() + p * KC, K, dm.get() + p * K * ld, ld, false, v.get() + p * C * ld,
             ld);
      std::unique_ptr<float[]> spread(new float[size_t(16 * t.spread())]());
      for (int64_t n = n0; n < n1; ++n)
        input_untransform({v.get(), C * ld, ld, (n - n0) * t.per_image()}, C, t, spread.get(),
                          work.planes, gi.data_ptr<float>() + n * in_numel);
    }
  });
  if (!ok) return false;
  if (gw.defined())
    with_best_isa([&] {
      float* acc = partial.get();
      for (int64_t c = 1; c < chunks; ++c) {
        const float* p = acc + c * 16 * KC;
        for (int64_t i = 0; i < 16 * KC; ++i) acc[i] += p[i];
      }
      weight_untransform(acc, KC, gw.data_ptr<float>());
    });
  return true;
}

}  // namespace ember::cpu
