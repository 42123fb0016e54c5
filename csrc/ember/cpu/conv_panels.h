#pragma once
// A convolution's column matrix computed panel by panel inside sgemm (Note [Conv panels]).
#include "ember/cpu/im2col.h"
#include "ember/cpu/sgemm.h"

namespace ember::cpu {

// Note [Conv panels]
// The forward GEMM's right operand is im2col of the input: a 3x3 kernel makes it 9 times the
// input's size, far beyond L2 (3.6 MB per image of 128 x 28 x 28), so writing it out and reading
// it back to pack it cost more memory traffic than the GEMM's arithmetic took time: 3x3 convs at
// ResNet shapes ran at ~60% of the FMA peak on 2 threads, behind torch. Instead sgemm asks for
// each packed panel (up to 256 rows x 64 columns) and im2col_panels writes it straight from the
// input, which stays in cache: with unit horizontal stride each run of output columns in one
// image row is a masked vector copy of an input row, the masks zeroing the padding.

/// Packs the column matrix of `count` images side by side, image s at x + s * image_stride,
/// each (C, H, W) in g's geometry, using the channels from c0 on: column s * OH * OW + l of row
/// (c, ki, kj) is image s's input under output pixel l and tap (ki, kj) of channel c0 + c.
/// Needs has_conv_panels().
PackB im2col_panels(const float* x, int64_t image_stride, int64_t c0, const WindowGeom& g);

/// True where im2col_panels packs: its masked row copies are AVX-512's (an AVX2 CPU's convs
/// write im2col's column matrix out and multiply it with sgemm).
bool has_conv_panels();

}  // namespace ember::cpu
