#pragma once
// One recurrent layer (one direction) over a whole sequence, as one op. See Note [Fused RNN layer].
#include <optional>
#include <string_view>
#include <tuple>

#include "ember/core/rnn_mode.h"
#include "ember/core/tensor.h"

namespace ember {

/// The mode named "LSTM", "GRU", "RNN_TANH" or "RNN_RELU".
RnnMode rnn_mode(std::string_view name);

/// Runs one layer direction over a sequence-first input (T, B, I) from state hx (B, H) (and cx
/// for LSTM); `reverse` walks the steps from last to first. Returns (output (T, B, H), h_n, c_n),
/// c_n undefined unless mode is LSTM.
std::tuple<Tensor, Tensor, Tensor> rnn_layer(const Tensor& input, const Tensor& hx,
                                             const std::optional<Tensor>& cx, const Tensor& w_ih,
                                             const Tensor& w_hh, const std::optional<Tensor>& b_ih,
                                             const std::optional<Tensor>& b_hh, RnnMode mode,
                                             bool reverse);

}  // namespace ember
