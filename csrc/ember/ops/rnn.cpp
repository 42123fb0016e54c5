// Recurrent layers: one op runs a layer direction over the whole sequence (kernels in cpu/rnn.cpp).
//
// Note [Fused RNN layer]
// Run as separate ops, an LSTM step is ~10 dispatches and graph nodes. `_rnn_layer` instead
// computes the input projection of every step with one GEMM, then per step one GEMM with W_hh and
// one fused gate kernel; it records a single node whose backward (`_rnn_layer_backward`) walks
// the steps in reverse with a fused gate-gradient kernel and leaves the weight and input
// gradients to three GEMMs over all steps. The forward saves the activated gates (and the LSTM
// cell states), so the backward recomputes nothing but tanh(c).
// When the backward itself is recorded (create_graph), the node instead reruns the layer with
// public ops and differentiates that, so higher derivatives stay exact. Inputs the kernels do not
// cover (other dtypes, inconsistent shapes) take that composite path from the start, and so raise
// the errors the composite's ops raise.
#include "ember/ops/rnn.h"

#include <array>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/dispatch/dispatcher.h"
#include "ember/ops/derivative.h"
#include "ember/ops/ops.h"
#include "ember/schema/rnn.h"

namespace ember {

using autograd::FunctionNode;
using autograd::variable_list;

namespace {

using RnnOut = std::tuple<Tensor, Tensor, Tensor, Tensor, Tensor>;

int64_t gate_count(RnnMode mode) {
  return mode == RnnMode::LSTM ? 4 : mode == RnnMode::GRU ? 3 : 1;
}

std::optional<Tensor> maybe(const Tensor& t) {
  return t.defined() ? std::optional<Tensor>(t) : std::nullopt;
}
Tensor opt(const std::optional<Tensor>& t) { return t ? *t : Tensor(); }

// Note [Fused RNN layer]: the layer in public ops, step by step.
std::tuple<Tensor, Tensor, Tensor> rnn_layer_composite(const Tensor& x, const Tensor& hx,
                                                       const Tensor& cx, const Tensor& w_ih,
                                                       const Tensor& w_hh, const Tensor& b_ih,
                                                       const Tensor& b_hh, RnnMode mode,
                                                       bool reverse) {
  int64_t steps = x.size(0);
  Tensor gi = linear(x, w_ih, maybe(b_ih));
  Tensor h = hx, c = cx;
  std::vector<Tensor> outs(static_cast<size_t>(steps));
  for (int64_t k = 0; k < steps; ++k) {
    int64_t t = reverse ? steps - 1 - k : k;
    Tensor gh = linear(h, w_hh, maybe(b_hh));
    Tensor git = select(gi, 0, t);
    if (mode == RnnMode::LSTM) {
      auto g = chunk(git + gh, 4, -1);
      c = sigmoid(g[1]) * c + sigmoid(g[0]) * tanh(g[2]);
      h = sigmoid(g[3]) * tanh(c);
    } else if (mode == RnnMode::GRU) {
      auto a = chunk(git, 3, -1), b = chunk(gh, 3, -1);
      Tensor r = sigmoid(a[0] + b[0]), z = sigmoid(a[1] + b[1]);
      Tensor n = tanh(a[2] + r * b[2]);
      h = n + z * (h - n);
    } else {
      h = mode == RnnMode::RNN_TANH ? tanh(git + gh) : relu(git + gh);
    }
    outs[size_t(t)] = h;
  }
  Tensor out =
      steps ? stack(outs, 0)
            : zeros({0, hx.size(-2), hx.size(-1)}, TensorOptions(hx.dtype()).device(hx.device()));
  return {out, h, c};
}

// The gradients of the composite layer (create_graph): inputs are x, hx, cx, w_ih, w_hh, b_ih,
// b_hh; `g` the gradients of output, h_n and c_n.
variable_list composite_grads(const std::array<bool, 7>& need, const variable_list& in,
                              const variable_list& g, RnnMode mode, bool reverse) {
  auto [o, h, c] =
      rnn_layer_composite(in[0], in[1], in[2], in[3], in[4], in[5], in[6], mode, reverse);
  variable_list outs, grads, wrt;
  Tensor results[3] = {o, h, c};
  for (size_t i = 0; i < 3; ++i) {
    if (g[i].defined() && results[i].defined()) {
      outs.push_back(results[i]);
      grads.push_back(g[i]);
    }
  }
  std::vector<size_t> where;
  for (size_t i = 0; i < in.size(); ++i) {
    if (need[i] && in[i].defined()) {
      wrt.push_back(in[i]);
      where.push_back(i);
    }
  }
  variable_list r(in.size());
  if (outs.empty() || wrt.empty()) return r;
  auto got = autograd::grad(outs, wrt, grads, true, true, true);
  for (size_t j = 0; j < where.size(); ++j) r[where[j]] = got[j];
  return r;
}

// The backward of the fused layer: the fused kernels, or the composite when it is recorded.
variable_list rnn_layer_backward(const variable_list& in, const Tensor& output, const Tensor& gates,
                                 const Tensor& cells, const variable_list& g, int64_t mode,
                                 bool reverse, const std::array<bool, 7>& need) {
  bool recording = autograd::any_requires_grad(
      {&g[0], &g[1], &g[2], &in[0], &in[1], &in[2], &in[3], &in[4], &in[5], &in[6]});
  if (recording) return composite_grads(need, in, g, RnnMode(mode), reverse);
  return op::_rnn_layer_backward.call(in[0], in[1], in[2], in[3], in[4], output, gates, cells, g[0],
                                      g[1], g[2], mode, reverse, need);
}

}  // namespace

EMBER_DERIVATIVE_GROUPED(
    op::_rnn_layer, "RnnLayerBackward0", (input, hx, cx, w_ih, w_hh, b_ih, b_hh, mode, reverse),
    (output, h_n, c_n, gates, cells), (input, hx, cx, w_ih, w_hh, b_ih, b_hh),
    rnn_layer_backward(variable_list{input, hx, cx, w_ih, w_hh, b_ih, b_hh}, output, gates, cells,
                       variable_list{grad_output, grad_h_n, grad_c_n}, mode, reverse, need));

namespace {

// Whether the fused kernels cover these arguments (Note [Fused RNN layer]).
bool fusable(const Tensor& x, const Tensor& hx, const Tensor& cx, const Tensor& w_ih,
             const Tensor& w_hh, const Tensor& b_ih, const Tensor& b_hh, RnnMode mode) {
  ScalarType dt = x.dtype();
  if (dt != kFloat && dt != kDouble) return false;
  for (const Tensor* t : {&hx, &cx, &w_ih, &w_hh, &b_ih, &b_hh})
    if (t->defined() && (t->dtype() != dt || !t->device().is_cpu())) return false;
  if (!x.device().is_cpu() || x.dim() != 3 || hx.dim() != 2 || w_ih.dim() != 2 || w_hh.dim() != 2)
    return false;
  int64_t batch = x.size(1), hidden = w_hh.size(1), gates = gate_count(mode) * hidden;
  if (w_hh.size(0) != gates || w_ih.size(0) != gates || w_ih.size(1) != x.size(2) ||
      hx.size(0) != batch || hx.size(1) != hidden)
    return false;
  if (cx.defined() != (mode == RnnMode::LSTM)) return false;
  if (cx.defined() && (cx.dim() != 2 || cx.size(0) != batch || cx.size(1) != hidden)) return false;
  for (const Tensor* b : {&b_ih, &b_hh})
    if (b->defined() && (b->dim() != 1 || b->size(0) != gates)) return false;
  return true;
}

}  // namespace

RnnMode rnn_mode(std::string_view name) {
  if (name == "LSTM") return RnnMode::LSTM;
  if (name == "GRU") return RnnMode::GRU;
  if (name == "RNN_TANH") return RnnMode::RNN_TANH;
  EMBER_CHECK(name == "RNN_RELU", "rnn_layer: unknown mode '", name,
              "'; expected LSTM, GRU, RNN_TANH or RNN_RELU");
  return RnnMode::RNN_RELU;
}

std::tuple<Tensor, Tensor, Tensor> rnn_layer(const Tensor& input, const Tensor& hx,
                                             const std::optional<Tensor>& cx, const Tensor& w_ih,
                                             const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                                             const std::optional<Tensor>& b_hh, RnnMode mode,
                                             bool reverse) {
  Tensor c = opt(cx), bi = opt(b_ih), bh = opt(b_hh);
  if (!fusable(input, hx, c, w_ih, w_hh, bi, bh, mode))
    return rnn_layer_composite(input, hx, c, w_ih, w_hh, bi, bh, mode, reverse);
  auto [out, h_n, c_n, gates, cells] =
      op::_rnn_layer.call(input, hx, c, w_ih, w_hh, bi, bh, int64_t(mode), reverse);
  return {out, h_n, c_n};
}

}  // namespace ember
