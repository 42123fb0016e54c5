// Kernels of `_rnn_layer` and its backward (Note [Fused RNN layer] in ops/rnn.cpp): the GEMMs run
// on the cpu GEMM kernels (cpu/kernels.h), the gate math of each step is one fused loop over
// (batch, hidden).
#include <algorithm>
#include <array>
#include <vector>

#include "ember/core/parallel.h"
#include "ember/core/rnn_mode.h"
#include "ember/cpu/copy.h"
#include "ember/cpu/dispatch_dtype.h"
#include "ember/cpu/isa.h"
#include "ember/cpu/kernels.h"
#include "ember/cpu/math.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/schema/rnn.h"

namespace ember::cpu {
namespace {

using RnnOut = std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor>;
using variable_list = std::vector<Tensor>;
constexpr uint32_t kRnnTypes = type_bit(kFloat) | type_bit(kDouble);

// Per-step saved values: LSTM's activated gates (i, f, g, o), GRU's (r, z, n) and the
// hidden part of its n pre-activation (W_hn h + b_hn); the RNN needs only its output.
int64_t saved_width(RnnMode mode) { return mode == RnnMode::LSTM || mode == RnnMode::GRU ? 4 : 0; }
int64_t gate_count(RnnMode mode) {
  return mode == RnnMode::LSTM ? 4 : mode == RnnMode::GRU ? 3 : 1;
}

// The gate loops run per batch row over the hidden units, on __restrict buffers and without
// branches, so that they vectorize (this file is built like optim/fused.cpp, Note [Vectorized
// optimizer loops]); a row's gate g of width H starts at g * H.
template <class T>
void lstm_row(int64_t H, const T* __restrict xi, const T* __restrict hh, const T* __restrict cp,
              T* __restrict c, T* __restrict h, T* __restrict s) {
  for (int64_t j = 0; j < H; ++j) {
    T i = fast_sigmoid(xi[j] + hh[j]), f = fast_sigmoid(xi[H + j] + hh[H + j]);
    T g = fast_tanh(xi[2 * H + j] + hh[2 * H + j]);
    T o = fast_sigmoid(xi[3 * H + j] + hh[3 * H + j]);
    T cn = f * cp[j] + i * g;
    c[j] = cn;
    h[j] = o * fast_tanh(cn);
    s[j] = i, s[H + j] = f, s[2 * H + j] = g, s[3 * H + j] = o;
  }
}

template <class T>
void gru_row(int64_t H, const T* __restrict xi, const T* __restrict hh, const T* __restrict hp,
             T* __restrict h, T* __restrict s) {
  for (int64_t j = 0; j < H; ++j) {
    T r = fast_sigmoid(xi[j] + hh[j]), z = fast_sigmoid(xi[H + j] + hh[H + j]);
    T hn = hh[2 * H + j];
    T n = fast_tanh(xi[2 * H + j] + r * hn);
    h[j] = n + z * (hp[j] - n);
    s[j] = r, s[H + j] = z, s[2 * H + j] = n, s[3 * H + j] = hn;
  }
}

template <class T>
void rnn_row(bool relu, int64_t H, const T* __restrict xi, const T* __restrict hh,
             T* __restrict h) {
  if (relu) {
    for (int64_t j = 0; j < H; ++j) {
      T v = xi[j] + hh[j];
      h[j] = v < T(0) ? T(0) : v;  // NaN passes, as relu's does
    }
  } else {
    for (int64_t j = 0; j < H; ++j) h[j] = fast_tanh(xi[j] + hh[j]);
  }
}

// One forward step over `rows` batch rows: gi and gh are the input and hidden projections
// (biases included), hp/cp the previous state; `saved` receives what the backward reads.
template <class T>
void step_forward(RnnMode mode, int64_t rows, int64_t H, const T* gi, const T* gh, const T* hp,
                  const T* cp, T* h, T* c, T* saved) {
  int64_t G = gate_count(mode) * H;
  for (int64_t b = 0; b < rows; ++b) {
    const T *xi = gi + b * G, *hh = gh + b * G;
    if (mode == RnnMode::LSTM)
      lstm_row(H, xi, hh, cp + b * H, c + b * H, h + b * H, saved + b * 4 * H);
    else if (mode == RnnMode::GRU) gru_row(H, xi, hh, hp + b * H, h + b * H, saved + b * 4 * H);
    else rnn_row(mode == RnnMode::RNN_RELU, H, xi, hh, h + b * H);
  }
}

// Backward rows: d is the gradient reaching h_t (from later steps plus the layer's output).
template <class T>
void lstm_back_row(int64_t H, const T* __restrict d, const T* __restrict s, const T* __restrict c,
                   const T* __restrict cp, T* __restrict dc, T* __restrict dg) {
  for (int64_t j = 0; j < H; ++j) {
    T i = s[j], f = s[H + j], g = s[2 * H + j], o = s[3 * H + j];
    T tc = fast_tanh(c[j]);
    T dcc = dc[j] + d[j] * o * (T(1) - tc * tc);
    dg[j] = dcc * g * i * (T(1) - i);
    dg[H + j] = dcc * cp[j] * f * (T(1) - f);
    dg[2 * H + j] = dcc * i * (T(1) - g * g);
    dg[3 * H + j] = d[j] * tc * o * (T(1) - o);
    dc[j] = dcc * f;
  }
}

template <class T>
void gru_back_row(int64_t H, const T* __restrict d, const T* __restrict s, const T* __restrict hp,
                  T* __restrict dgi, T* __restrict dgh, T* __restrict direct) {
  for (int64_t j = 0; j < H; ++j) {
    T r = s[j], z = s[H + j], n = s[2 * H + j], hn = s[3 * H + j];
    T dn = d[j] * (T(1) - z) * (T(1) - n * n);
    T dr = dn * hn * r * (T(1) - r);
    T dz = d[j] * (hp[j] - n) * z * (T(1) - z);
    dgi[j] = dgh[j] = dr;
    dgi[H + j] = dgh[H + j] = dz;
    dgi[2 * H + j] = dn;
    dgh[2 * H + j] = dn * r;
    direct[j] = d[j] * z;
  }
}

template <class T>
void rnn_back_row(bool relu, int64_t H, const T* __restrict d, const T* __restrict h,
                  T* __restrict dg) {
  if (relu) {
    for (int64_t j = 0; j < H; ++j) dg[j] = h[j] > T(0) ? d[j] : T(0);
  } else {
    for (int64_t j = 0; j < H; ++j) dg[j] = d[j] * (T(1) - h[j] * h[j]);
  }
}

// One backward step: `d` (rows x H, owned scratch) is the gradient reaching h_t. Writes the
// pre-activation gradients dgi (input side) and dgh (hidden side; for LSTM and the RNN the same
// buffer), updates dc to the gradient of c_{t-1}, and for GRU writes `direct`, the part of
// dh_{t-1} that does not go through W_hh.
template <class T>
void step_backward(RnnMode mode, int64_t rows, int64_t H, const T* d, const T* saved, const T* h,
                   const T* hp, const T* c, const T* cp, T* dc, T* dgi, T* dgh, T* direct) {
  int64_t G = gate_count(mode) * H;
  for (int64_t b = 0; b < rows; ++b) {
    const T* db = d + b * H;
    if (mode == RnnMode::LSTM)
      lstm_back_row(H, db, saved + b * 4 * H, c + b * H, cp + b * H, dc + b * H, dgi + b * G);
    else if (mode == RnnMode::GRU)
      gru_back_row(H, db, saved + b * 4 * H, hp + b * H, dgi + b * G, dgh + b * G, direct + b * H);
    else rnn_back_row(mode == RnnMode::RNN_RELU, H, db, h + b * H, dgi + b * G);
  }
}

// p + offset, or null for an absent buffer.
template <class T>
T* at(T* p, int64_t offset) {
  return p ? p + offset : nullptr;
}

// Runs f(b0, b1) over the batch rows [0, B) on the pool, in parts of at least ~2048 gate
// elements, each with the best ISA: one step's gate math is small, but serial it left the other
// threads idle between the step's threaded products.
template <class F>
void over_rows(int64_t B, int64_t H, F&& f) {
  const int64_t grain = std::max<int64_t>(1, 2048 / std::max<int64_t>(H, 1));
  parallel_for(0, B, grain, [&](int64_t b0, int64_t b1) { with_best_isa([&] { f(b0, b1); }); });
}

// Geometry without the view ops: m^T of a matrix, row i of a tensor (select(t, 0, i)), rows
// [start, start + n) (narrow(t, 0, start, n)), and a fresh owned copy (clone, contiguous).
Tensor transposed(const Tensor& m) {
  return m.as_strided_view({m.size(1), m.size(0)}, {m.stride(1), m.stride(0)}, m.storage_offset());
}
Tensor row(const Tensor& t, int64_t i) {
  DimVector sizes(t.sizes()), strides(t.strides());
  sizes.erase(0);
  strides.erase(0);
  return t.as_strided_view(sizes, strides, t.storage_offset() + i * t.stride(0));
}
Tensor rows(const Tensor& t, int64_t start, int64_t n) {
  DimVector sizes(t.sizes());
  sizes[0] = n;
  return t.as_strided_view(sizes, t.strides(), t.storage_offset() + start * t.stride(0));
}
// t as a contiguous (r, c) matrix (reshape, copying only when t is not contiguous).
Tensor as_matrix(const Tensor& t, int64_t r, int64_t c) {
  Tensor ct = contiguous(t);
  return ct.as_strided_view({r, c}, {c, 1}, ct.storage_offset());
}
Tensor owned_copy(const Tensor& t) {
  Tensor out = empty(t.sizes(), t.dtype(), t.device());
  copy_(out, t);
  return out;
}

template <class T>
const T* ptr(const Tensor& t, int64_t offset = 0) {
  return t.defined() ? t.data_ptr<T>() + offset : nullptr;
}
template <class T>
T* mut(const Tensor& t, int64_t offset = 0) {
  return t.defined() ? t.data_ptr<T>() + offset : nullptr;
}

// b_ih + b_hh (1-d, of x's dtype), one rounding per element as the add kernel does.
Tensor bias_sum(const Tensor& a, const Tensor& b) {
  Tensor out = owned_copy(a), cb = contiguous(b);
  dispatch<kRnnTypes>(a.dtype(), "_rnn_layer", [&](auto tag) {
    using S = decltype(tag);
    S* o = out.data_ptr<S>();
    const S* y = cb.data_ptr<S>();
    for (int64_t i = 0; i < out.numel(); ++i) o[i] += y[i];
  });
  return out;
}

RnnOut rnn_layer_kernel(const Tensor& x, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
                        const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, int64_t mode_id,
                        bool reverse) {
  RnnMode mode = RnnMode(mode_id);
  int64_t T = x.size(0), B = x.size(1), I = x.size(2), H = w_hh.size(1);
  const ScalarType opts = x.dtype();
  Tensor out = empty({T, B, H}, opts);
  Tensor saved = saved_width(mode) ? empty({T, B, saved_width(mode) * H}, opts) : Tensor();
  Tensor cells = mode == RnnMode::LSTM ? empty({T, B, H}, opts) : Tensor();
  if (T == 0) return {out, owned_copy(hx), cx.defined() ? owned_copy(cx) : Tensor(), saved, cells};
  Tensor h0 = contiguous(hx), c0 = cx.defined() ? contiguous(cx) : Tensor();
  Tensor x2 = as_matrix(x, T * B, I);
  // LSTM and the plain RNN add both biases to one pre-activation: b_hh joins the input projection
  // once instead of being copied into every step's product. GRU's b_hn sits inside r * (...).
  const bool fold = mode != RnnMode::GRU && b_hh.defined();
  Tensor b_in = fold ? (b_ih.defined() ? bias_sum(b_ih, b_hh) : b_hh) : b_ih;
  Tensor wit = transposed(w_ih);
  Tensor gi = contiguous(b_in.defined() ? addmm(b_in, x2, wit) : mm(x2, wit));
  // W_hh^T row-major once: every step's product would otherwise transpose it again while packing.
  Tensor wt = contiguous(transposed(w_hh));
  int64_t G = gi.size(1);
  dispatch<kRnnTypes>(x.dtype(), "_rnn_layer", [&](auto tag) {
    using S = decltype(tag);
    for (int64_t k = 0; k < T; ++k) {
      int64_t ti = reverse ? T - 1 - k : k, tp = reverse ? ti + 1 : ti - 1;
      Tensor hp = k == 0 ? h0 : row(out, tp);
      Tensor gh = contiguous(b_hh.defined() && !fold ? addmm(b_hh, hp, wt) : mm(hp, wt));
      const S* cp = k == 0 ? ptr<S>(c0) : ptr<S>(cells, tp * B * H);
      const S *gi_t = ptr<S>(gi, ti * B * G), *gh_t = ptr<S>(gh), *hp_t = ptr<S>(hp);
      S *h_t = mut<S>(out, ti * B * H), *c_t = mut<S>(cells, ti * B * H);
      S* s_t = mut<S>(saved, ti * B * 4 * H);
      over_rows(B, H, [&](int64_t b0, int64_t b1) {
        step_forward<S>(mode, b1 - b0, H, gi_t + b0 * G, gh_t + b0 * G, hp_t + b0 * H,
                        at(cp, b0 * H), h_t + b0 * H, at(c_t, b0 * H), at(s_t, b0 * 4 * H));
      });
    }
  });
  int64_t last = reverse ? 0 : T - 1;
  Tensor c_n = cells.defined() ? owned_copy(row(cells, last)) : Tensor();
  return {out, owned_copy(row(out, last)), c_n, saved, cells};
}
EMBER_REGISTER_KERNEL(op::_rnn_layer, CPU, rnn_layer_kernel);

// Gradients of (x, hx, cx, w_ih, w_hh, b_ih, b_hh); `mask` says which are wanted.
variable_list rnn_layer_backward_kernel(const Tensor& x, const Tensor& hx, const Tensor& cx,
                                        const Tensor& w_ih, const Tensor& w_hh, const Tensor& out,
                                        const Tensor& saved, const Tensor& cells,
                                        const Tensor& g_out, const Tensor& g_hn, const Tensor& g_cn,
                                        int64_t mode_id, bool reverse, std::array<bool, 7> mask) {
  RnnMode mode = RnnMode(mode_id);
  int64_t T = x.size(0), B = x.size(1), I = x.size(2), H = w_hh.size(1);
  int64_t G = gate_count(mode) * H;
  const ScalarType opts = x.dtype();
  // dh and dc are owned: the steps update them in place.
  Tensor dh = g_hn.defined() ? owned_copy(g_hn) : zeros({B, H}, opts);
  Tensor dc;
  if (mode == RnnMode::LSTM) dc = g_cn.defined() ? owned_copy(g_cn) : zeros({B, H}, opts);
  Tensor dout = g_out.defined() ? contiguous(g_out) : Tensor();
  Tensor dgi = empty({T, B, G}, opts);
  Tensor dgh = mode == RnnMode::GRU ? empty({T, B, G}, opts) : dgi;
  Tensor h0 = contiguous(hx), c0 = cx.defined() ? contiguous(cx) : Tensor();
  dispatch<kRnnTypes>(x.dtype(), "_rnn_layer_backward", [&](auto tag) {
    using S = decltype(tag);
    for (int64_t k = T - 1; k >= 0; --k) {
      int64_t ti = reverse ? T - 1 - k : k, tp = reverse ? ti + 1 : ti - 1;
      Tensor hp = k == 0 ? h0 : row(out, tp);
      const S* cp = k == 0 ? ptr<S>(c0) : ptr<S>(cells, tp * B * H);
      Tensor direct = mode == RnnMode::GRU ? empty({B, H}, opts) : Tensor();
      S* d = mut<S>(dh);  // owned: the initial clone or zeros, then each step's product
      const S *o = ptr<S>(dout, ti * B * H), *s_t = ptr<S>(saved, ti * B * 4 * H);
      const S *h_t = ptr<S>(out, ti * B * H), *hp_t = ptr<S>(hp), *c_t = ptr<S>(cells, ti * B * H);
      S *dc_p = mut<S>(dc), *dgi_p = mut<S>(dgi, ti * B * G), *dgh_p = mut<S>(dgh, ti * B * G);
      S* direct_p = mut<S>(direct);
      over_rows(B, H, [&](int64_t b0, int64_t b1) {
        if (o)
          for (int64_t i = b0 * H; i < b1 * H; ++i) d[i] += o[i];
        step_backward<S>(mode, b1 - b0, H, d + b0 * H, at(s_t, b0 * 4 * H), h_t + b0 * H,
                         hp_t + b0 * H, at(c_t, b0 * H), at(cp, b0 * H), at(dc_p, b0 * H),
                         dgi_p + b0 * G, dgh_p + b0 * G, at(direct_p, b0 * H));
      });
      Tensor dgh_t = row(dgh, ti);
      dh = direct.defined() ? addmm(direct, dgh_t, w_hh) : mm(dgh_t, w_hh);
    }
  });
  Tensor dgi2 = as_matrix(dgi, T * B, G), dgh2 = as_matrix(dgh, T * B, G);
  variable_list r(7);
  if (mask[0]) {
    Tensor gx = mm(dgi2, w_ih);  // (T * B, I), contiguous
    r[0] = gx.as_strided_view({T, B, I}, {B * I, I, 1}, gx.storage_offset());
  }
  if (mask[1]) r[1] = dh;
  if (mask[2]) r[2] = dc;
  if (mask[3]) r[3] = mm(transposed(dgi2), as_matrix(x, T * B, I));
  if (mask[4]) {
    // h_{t-1} of every step, in the layout of dgh: h0 comes first in walking order.
    Tensor prev = empty({T, B, H}, opts);
    if (T > 0) {
      Tensor first = !reverse ? row(prev, 0) : row(prev, T - 1);
      Tensor rest = !reverse ? rows(prev, 1, T - 1) : rows(prev, 0, T - 1);
      copy_(first, h0);
      copy_(rest, !reverse ? rows(out, 0, T - 1) : rows(out, 1, T - 1));
    }
    r[4] = mm(transposed(dgh2), as_matrix(prev, T * B, H));
  }
  if (mask[5]) r[5] = sum(dgi2, IntArrayRef{0});
  if (mask[6]) r[6] = sum(dgh2, IntArrayRef{0});
  return r;
}
EMBER_REGISTER_KERNEL(op::_rnn_layer_backward, CPU, rnn_layer_backward_kernel);

}  // namespace
}  // namespace ember::cpu
