#pragma once
// The cell a recurrent layer runs: an argument type shared by ops/rnn and its kernels.
#include <cstdint>

namespace ember {

/// The cell a recurrent layer runs; the gate order of each is PyTorch's.
enum class RnnMode : int64_t { LSTM, GRU, RNN_TANH, RNN_RELU };

}  // namespace ember
