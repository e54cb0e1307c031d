// The blocked channel layout NCHW16c (runtime/graph_layout_nchwc.h puts convolution
// chains into it at load time) and the per-ISA row kernels of NchwcConv.
//
// Layout. A tensor of logical shape [N, C, H, W] is stored as an ordinary float32
// tensor of shape [N, ceil(C/16), H, W, 16]: channel c of pixel (h, w) is at
// ((n * Cb + c / 16) * H + h) * W + w) * 16 + c % 16. The block is 16 on every ISA
// (AVX-512: one zmm per block, AVX2: two ymm, portable: loops of 16). Padding channels
// (C % 16 != 0) hold finite values and are never read as real data: the packed filters
// have zero weights for them.
//
// Packed filters (nchwc_pack_dense / nchwc_pack_depthwise, once at kernel creation):
//   dense      [OCb][ICb][KH][KW][16 ic][16 oc]  (the 16 output channels of one input
//              channel and tap are one vector, FMA'd with a broadcast input value)
//   depthwise  [Cb][KH][KW][16]
// Bias and PRelu slopes are padded to OCb * 16 floats (zeros past C).
//
// The row kernels (nchwc_conv_impl.h, instantiated per ISA by nchwc_conv.cc (portable),
// nchwc_conv_avx2.cc and nchwc_conv_avx512.cc) compute one output row of `nb` output
// blocks; callers take the table from nchwc_kernels_for(), which never picks a level
// above the hardware's.
#pragma once
#include <cstdint>
#include <vector>

#include "core/aligned_vector.h"
#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"

namespace onnxmini {
namespace nn {

inline constexpr int64_t kNchwcBlock = 16;
inline int64_t nchwc_blocks(int64_t c) { return (c + kNchwcBlock - 1) / kNchwcBlock; }

struct NchwcConvArgs {
  // Geometry: X [N, ICb, H, W, 16], Y [N, OCb, OH, OW, 16]; depthwise: ICb == OCb.
  int64_t N = 0, ICb = 0, OCb = 0, H = 0, W = 0, OH = 0, OW = 0;
  int64_t KH = 1, KW = 1, sh = 1, sw = 1, dh = 1, dw = 1, ph = 0, pw = 0;
  // Dense: the true input channels of the last input block (1..16). The packed filter is zero
  // on its padded channels, so they add nothing and the row kernels skip them (a 12-channel
  // layer would otherwise do 16/12 of the work).
  int ic_last = 16;
  const float* x = nullptr;
  const float* w = nullptr;     // packed (see above)
  const float* bias = nullptr;  // OCb * 16 floats, or null
  const float* z = nullptr;     // residual, Y's blocked shape, or null
  float* y = nullptr;
  // The activation, applied in registers before the store: Relu, Clip, HardSigmoid,
  // HardSwish, PRelu on every table; Sigmoid, Swish, Gelu and GeluTanh only where
  // NchwcKernels::exp_activations (AVX2, AVX-512), else the caller applies them on each
  // finished row.
  gemm::Epilogue::Activation act = gemm::Epilogue::Activation::None;
  float lo = 0, hi = 0;        // Clip
  float alpha = 0, beta = 0;   // HardSigmoid / HardSwish
  float swish_alpha = 1.0f;    // Swish: x * sigmoid(swish_alpha * x) (1.702: QuickGelu)
  const float* slope = nullptr;  // PRelu, OCb * 16 floats
  // After the activation: y * out_scale + out_shift (OCb * 16 floats each), or null.
  const float* out_scale = nullptr;
  const float* out_shift = nullptr;
  // Dense strips: prefetch the next strip's input pixels of each block while this strip
  // computes (set for large inputs: NchwcConv's kPrefetchInputBytes).
  bool prefetch_x = false;
};

// Output pixels [ow_begin, ow_end) of row oh of image n, output blocks [ob, ob + nb)
// (nb <= NchwcKernels::dense_nb).
using NchwcDenseRowFn = void (*)(const NchwcConvArgs& a, int64_t n, int64_t ob, int64_t nb, int64_t oh,
                                 int64_t ow_begin, int64_t ow_end);
// The same for channel block cb of a depthwise convolution (one input block per output block).
using NchwcDepthwiseRowFn = void (*)(const NchwcConvArgs& a, int64_t n, int64_t cb, int64_t oh, int64_t ow_begin,
                                     int64_t ow_end);

struct NchwcKernels;
// Winograd F(2x2, 3x3) (nchwc_winograd_impl.h): tiles [tx0, tx1) (at most 32) of tile row ty
// (output rows 2 ty and 2 ty + 1) of image n, every output block; u: nchwc_pack_winograd's
// filter; k: the table it belongs to (its dense_row runs the 16 GEMMs).
using NchwcWinogradFn = void (*)(const NchwcKernels& k, const NchwcConvArgs& a, const float* u, int64_t n,
                                 int64_t ty, int64_t tx0, int64_t tx1);

// One channel block of a reorder: `planes` (<= 16) NCHW planes of hw floats each, hw apart
// <-> hw x 16 blocked floats (to_blocked writes zeros in the padding channels).
using NchwcReorderFn = void (*)(const float* x, int64_t planes, int64_t hw, float* y);

struct NchwcKernels {
  cpu::Isa isa;
  NchwcDenseRowFn dense_row;
  NchwcDepthwiseRowFn depthwise_row;
  int dense_nb;  // output blocks one dense_row call holds in registers
  NchwcReorderFn to_blocked, from_blocked;
  // dense_row also takes nb == 3 (a layer's last three blocks when OCb is odd: one 3-block
  // strip instead of a 2-block and a 1-block one).
  bool dense_odd3 = false;
  // The row kernels apply Sigmoid, Swish, Gelu and GeluTanh in registers (kernels/simd's
  // vector formulas, the same as the row pass they replace).
  bool exp_activations = false;
  NchwcWinogradFn winograd = nullptr;
};

// The portable reorders (tiles of 64 pixels; the reference mode's).
void nchwc_to_blocked_portable(const float* x, int64_t planes, int64_t hw, float* y);
void nchwc_from_blocked_portable(const float* x, int64_t planes, int64_t hw, float* y);

const NchwcKernels& nchwc_kernels_portable();
const NchwcKernels& nchwc_kernels_avx2();
const NchwcKernels& nchwc_kernels_avx512();
// The table for `isa`, capped at what the hardware has.
const NchwcKernels& nchwc_kernels_for(cpu::Isa isa);
// The ISA NchwcConv uses: cpu::active_isa(), or the test override.
cpu::Isa nchwc_isa();
// Tests: run NchwcConv at `isa` (capped by the hardware); cpu::active_isa() restores.
void set_nchwc_isa_for_tests(cpu::Isa isa);

// Filter packing (layouts above). w: ONNX [M, C/group, KH, KW].
AlignedVector<float> nchwc_pack_dense(const float* w, int64_t M, int64_t C, int64_t KH, int64_t KW);
AlignedVector<float> nchwc_pack_depthwise(const float* w, int64_t C, int64_t KH, int64_t KW);
// Winograd F(2x2, 3x3): w [M, C, 3, 3] -> U = G g G^T per filter, [16][OCb][ICb][16 ic][16 oc].
AlignedVector<float> nchwc_pack_winograd(const float* w, int64_t M, int64_t C);

// NchwcConv's Winograd rule for a 3x3, stride-1, dilation-1 dense layer of C input and M output
// channels on `isa` (measured on the AMD EPYC Zen 5, kernels/nn.md "Winograd F(2x2, 3x3)"): it
// pays where these channels do and the output has at least kNchwcWinogradMinOutputs pixels.
// The channel part alone is what the layout pass (runtime/graph_layout_nchwc.cc) can know
// before shapes are; it ignores the test override below.
bool nchwc_winograd_channels_pay(int64_t C, int64_t M, cpu::Isa isa);
// The shape part, the same for both: a dense (group 1) 3x3 filter at stride 1 and dilation 1
// (strides / dilations as the attributes give them; empty means all 1).
bool nchwc_winograd_shape(int64_t KH, int64_t KW, int64_t group, const std::vector<int64_t>& strides,
                          const std::vector<int64_t>& dilations);
constexpr int64_t kNchwcWinogradMinOutputs = 64;

// Tests: -1 (default) lets NchwcConv's rule choose Winograd, 0 never, 1 on every layer it can
// run (3x3, stride 1, dilation 1, dense). Set before the session is created: a kernel packs
// the Winograd filter only where the rule's channel part or this override wants it.
void set_nchwc_winograd_for_tests(int mode);

}  // namespace nn
}  // namespace onnxmini
