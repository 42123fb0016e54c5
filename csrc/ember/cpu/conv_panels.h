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

// Note [Padded panels]
// On AVX2 CPUs im2col_panels' masked row copies are not available (AVX2's masked stores are
// slow on AMD's cores), and a column matrix written out by im2col is 9 times a 3x3 conv's input:
// for the Fashion-MNIST CNN's 32 -> 64 conv at 14 x 14, 1.8 MB per chunk, beyond a Zen 3 core's
// 512 KB L2, written and read back to pack it. At unit strides the column matrix need not be
// stored: with the input copied into zero-bordered planes PW = W + pw floats wide (a row's
// right border is the next row's left one; OW wide where padding past the kernel's reach makes
// the output row wider), output (oh, ow) at column oh * PW + ow reads tap (ki, kj) at that column
// plus ki * dh * PW + kj * dw, so every row of a panel is one contiguous run of the plane per
// image. The PW - OW columns past each output row are computed and dropped (1/14 more
// multiply-adds at 14 x 14). Each output is the same FMA chain over (c, ki, kj) as im2col's (the
// zeros are the same zeros), so the bits do not change.
struct PaddedPlanes {
  int64_t pw;     // the padded row: W + the left padding, or OW if wider
  int64_t plane;  // floats per padded plane, the reads past its last row's outputs included
  int64_t cols;   // GEMM columns per image: OH rows of pw
};

/// The planes for g, or pw == 0 where this layout does not apply (strides other than 1, more
/// dropped columns than a quarter of the outputs).
PaddedPlanes padded_planes(const WindowGeom& g);

/// Copies `count` images (C, H, W), image_stride apart, into buf (count * C * plane floats) as
/// zero-bordered planes.
void pad_images(const float* x, int64_t count, int64_t image_stride, const WindowGeom& g,
                const PaddedPlanes& pp, float* buf);

/// Packs the column matrix of the images pad_images wrote into buf, from channel c0 on, as
/// im2col_panels does for theirs. Needs has_sgemm().
PackB padded_panels(const float* buf, int64_t c0, const WindowGeom& g, const PaddedPlanes& pp);

/// True where im2col_panels packs: its masked row copies are AVX-512's (an AVX2 CPU's forward
/// at unit strides packs from padded planes, Note [Padded panels]; the rest stores im2col's).
bool has_conv_panels();

}  // namespace ember::cpu
