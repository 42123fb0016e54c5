#pragma once
// bfloat16 GEMM and convolution through oneDNN (Note [oneDNN bf16]).
#include <memory>
#include <optional>

#include "ember/core/tensor.h"

namespace ember::cpu::onednn {

/// Whether oneDNN's bf16 primitives run here: ember was built with oneDNN and the CPU has
/// AVX-512 (oneDNN picks AMX, AVX512-BF16 or the AVX-512 emulation at run time).
bool bf16_available();

/// out (B, M, N) = beta * out + alpha * a (B, M, K) @ b (B, K, N), bfloat16 operands of any
/// strides, float32 accumulation. False when it did not run (the caller's loop does it).
bool gemm_bf16(const Tensor& out, const Tensor& a, const Tensor& b, float beta, float alpha);

/// y = conv2d(x, w) + bias, all bfloat16 and contiguous (NCHW / OIHW), y allocated. False when it
/// did not run.
bool conv2d_bf16(const Tensor& x, const Tensor& w, const std::optional<Tensor>& bias,
                 const Tensor& y, IntArrayRef stride, IntArrayRef padding, IntArrayRef dilation,
                 int64_t groups);

/// A float32 convolution pass; x, w, y are the convolution's input, weight and output roles.
enum class ConvPass {
  forward,      // y = conv(x, w) + bias
  input_grad,   // x = the input gradient from y (grad_output) and w
  weight_grad,  // w = the weight gradient from x and y (grad_output)
};

/// Whether float32 convolutions may run on oneDNN: built with it, an AVX-512 CPU, and not
/// switched off by EMBER_ONEDNN_CONV=0 in the environment (read on every call, so tests and
/// benchmarks run ember's own kernels in the same process).
bool conv_enabled();

/// One pass of a float32 convolution over contiguous NC(D)HW tensors (1 to 3 spatial dims), on
/// the calling thread only (Note [oneDNN float32 convolution]). False when it did not run.
/// `weight`, when given, is the weight already in the layout the pass wants (conv_f32_weight).
bool conv_f32(ConvPass pass, const Tensor& x, const Tensor& w, const Tensor& y,
              const std::optional<Tensor>& bias, IntArrayRef stride, IntArrayRef padding,
              IntArrayRef dilation, int64_t groups,
              const std::shared_ptr<const void>& weight = nullptr);

/// The weight of a forward or input-gradient pass over chunks shaped like x and y, reordered
/// once into the layout oneDNN's kernel wants, for every chunk of one call to share (opaque).
/// Null when no reorder is needed or oneDNN does not run the pass: each chunk then does its own.
std::shared_ptr<const void> conv_f32_weight(ConvPass pass, const Tensor& x, const Tensor& w,
                                            const Tensor& y, bool bias, IntArrayRef stride,
                                            IntArrayRef padding, IntArrayRef dilation,
                                            int64_t groups);

/// A static int8 convolution (quint8 activations, symmetric qint8 weights) as oneDNN runs it
/// (Note [oneDNN int8]): the geometry, the quantization parameters that the primitive bakes in,
/// and the per-output-channel weight scales (float32, length out channels).
struct QConvSpec {
  IntArrayRef input_sizes;   // N, C, H, W
  IntArrayRef weight_sizes;  // O, C/groups, kh, kw
  IntArrayRef stride, padding, dilation;
  int64_t groups = 1;
  double in_scale = 1, out_scale = 1;
  int64_t in_zp = 0, out_zp = 0;
  bool relu = false;
  const float* w_scales = nullptr;
};

/// The weight (int8 [O, C/groups, kh, kw], contiguous) reordered into the layout of the
/// primitive for `spec` (its zero-point compensation included): a 1-d int8 tensor, made once per
/// input shape and kept by the caller. Undefined when oneDNN does not run this convolution
/// (no oneDNN, no AVX512-VNNI, or only its reference implementation): the caller's own kernel
/// runs it.
Tensor qconv_pack(const Tensor& weight, const QConvSpec& spec);

/// y (uint8 [N, O, OH, OW], channels-last strides, allocated) = the convolution of x (uint8,
/// channels-last dense) with `packed`, made by qconv_pack for the same spec from `weight`;
/// bias float32 or null. False when it did not run.
bool qconv_run(const Tensor& x, const Tensor& packed, const Tensor& weight, const Tensor& y,
               const float* bias, const QConvSpec& spec);

}  // namespace ember::cpu::onednn
