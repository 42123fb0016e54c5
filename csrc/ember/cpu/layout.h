#pragma once
// Result layouts of the spatial kernels (conv, pooling, batch norm). See Note [Channels-last
// kernels].
//
// Note [Channels-last kernels]
// As in PyTorch, a convolution, pooling or batch norm over a channels-last input gives a
// channels-last result, and its backward a channels-last input gradient, so a network converted
// with `model.to(memory_format=channels_last)` stays channels-last end to end. ember's kernels
// compute in NCHW (their GEMM and window loops are written for it): they read a channels-last
// input through a contiguous copy and write the result back out in channels-last order. The
// layout rule lives here, in one place; a kernel written for NHWC can later skip both copies.
// The format is read from the strides (`suggest_memory_format`): a convolution is channels-last
// when its input or its weight is; a backward's input gradient takes the forward input's format
// where the kernel sees the input (conv, batch norm) and the format of the indices or the
// incoming gradient where it does not (max and average pooling).
#include <initializer_list>

#include "ember/core/memory_format.h"
#include "ember/core/tensor.h"

namespace ember::cpu {

/// ChannelsLast (4-d) or ChannelsLast3d (5-d) when any of `ts` (undefined ones skipped) has
/// strides that suggest it, else Contiguous.
MemoryFormat spatial_format(std::initializer_list<const Tensor*> ts);
/// `t` laid out in `format`: t itself when it already is (or format is Contiguous and t is
/// defined row-major), else a copy.
Tensor in_format(const Tensor& t, MemoryFormat format);

}  // namespace ember::cpu
