#pragma once
// How a loss reduces its per-element values: an argument type shared by the loss ops and their
// kernels (PyTorch keeps at::Reduction in ATen/core for the same reason).

namespace ember {

/// How a loss reduces its per-element values (the values are PyTorch's at::Reduction).
enum class Reduction { None = 0, Mean = 1, Sum = 2 };

}  // namespace ember
