// Shared pieces of the Conv kernel (conv.cc) and its implicit-GEMM path
// (conv_implicit.cc).
#pragma once
#include <memory>
#include <vector>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/kernel.h"
#include "kernels/nn/spatial.h"

namespace onnxmini {
class ThreadPool;
namespace nn {

struct ConvGeom {
  int64_t N, C, M, group;
  Window win;
};

// A per-input-channel affine map applied to X before the convolution:
// x'[c] = x[c] * scale[c] + shift[c] (a BatchNormalization folded in front of
// the Conv by the graph fusion pass). The zero padding is not transformed, as
// in the unfused graph where the Conv pads BatchNormalization's output.
struct InputAffine {
  const float* scale = nullptr;
  const float* shift = nullptr;
  explicit operator bool() const { return scale != nullptr; }
};

// The zero-padded copy of X that conv2d_implicit and conv2d_lanes read in
// place. Per channel: sw column-parity planes of Hp rows x Wq columns; plane q
// row hp column t holds padded-input pixel (hp, q + sw * t), i.e. input pixel
// (hp - pad_top, q + sw * t - pad_left), 0 outside the input. Output column
// ow under tap column offset kw * dw reads plane (kw * dw) % sw at
// t = ow + (kw * dw) / sw, so consecutive output columns are consecutive floats
// whatever the stride.
struct PaddedLayout {
  int64_t Hp, Wq, sw;
  int64_t plane() const { return Hp * Wq; }
  int64_t channel() const { return sw * Hp * Wq; }
};
PaddedLayout padded_layout(const Window& win);

// Channels [c0, c0 + channels) of one image (xg points at channel c0) into xp
// (channels * L.channel() floats), applying the input affine (indexed by the
// absolute channel c0 + c) to real pixels only; parallel over channels.
void pad_input(const Window& win, const PaddedLayout& L, const float* xg, int64_t c0, int64_t channels,
               const InputAffine& affine, float* xp, ThreadPool* pool);

// True when conv2d_implicit handles the geometry: 1-D or 2-D and not a 1x1 kernel
// without padding (that one is a plain GEMM on X or on a subsample).
bool implicit_conv_applies(const ConvGeom& g);

// Implicit-GEMM 2-D convolution, float32. Per image and group, X is copied once
// into a zero-padded buffer (split into `stride_w` column-parity planes so that
// every output row reads contiguous input), then
//   Y[n, g] (M/g x OH*OW) = W[g] (M/g x C/g*KH*KW) * B
// where B's row k = (c, kh, kw) is read in place from the padded buffer through
// an offset table (gemm::ImplicitB); no im2col matrix is built.
// `packed` holds one prepacked filter per group (may be empty: W packed per call).
// `epi` carries the bias / activation of output channel 0 of the whole Conv;
// its per-channel arrays are offset per group here, and its residual (a fused Z
// laid out as Y, residual_ld = OH*OW) per image and group.
// 1-D windows run as 2-D ones with input height 1 (lift_to_2d).
Window lift_to_2d(const Window& w);
void conv2d_implicit(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                     const std::vector<std::shared_ptr<gemm::PackedA>>& packed, const gemm::Epilogue& epi,
                     const InputAffine& affine, float* y);

}  // namespace nn
}  // namespace onnxmini
