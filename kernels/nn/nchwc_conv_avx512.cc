// AVX-512 traits of NchwcConv's row kernels (nchwc_conv_impl.h): one zmm per block of 16
// channels. Dense rows hold 2 output blocks x up to 13 pixels (26 accumulators, 2 weight
// registers, 1 broadcast: 29 of 32 zmm; 13 and not 12 so that 13-, 26- and 52-pixel rows
// split into equal strips); the last three blocks of an odd OCb run 3 x 8
// (24 accumulators, 3 weights, 1 broadcast: 28 zmm), a lone block (OCb = 1) 1 x 16.
// Depthwise strips hold 16 pixels of one block.
// GCC 12 reports false -Wmaybe-uninitialized inside its own intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels/nn/nchwc_conv_impl.h"
#include "kernels/nn/nchwc_winograd_impl.h"
#include "kernels/gemm_engine/epilogue_avx512.h"
#include "kernels/simd/f32_kernels_impl.h"  // sigmoid_reg, gelu_erf_reg / gelu_tanh_reg
#include "kernels/simd/vec_avx512.h"
#include "kernels/simd/transpose16_avx512.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx512Block {
  using Reg = __m512;
  static constexpr int kRegVectors = 1;  // nchwc_partial_sums
  static constexpr int kRegisters = 32;  // zmm0-31 (nchwc_dense_strip's budget)
  static Reg zero() { return _mm512_setzero_ps(); }
  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, Reg v) { _mm512_storeu_ps(p, v); }
  static Reg fma(Reg a, Reg b, Reg c) { return _mm512_fmadd_ps(a, b, c); }
  static Reg add(Reg a, Reg b) { return _mm512_add_ps(a, b); }
  static Reg sub(Reg a, Reg b) { return _mm512_sub_ps(a, b); }
  static Reg mul(Reg a, Reg b) { return _mm512_mul_ps(a, b); }
  static Reg max(Reg a, Reg b) { return _mm512_max_ps(a, b); }
  static Reg min(Reg a, Reg b) { return _mm512_min_ps(a, b); }
  static Reg prelu(Reg v, Reg slope) {
    return _mm512_mask_mul_ps(v, _mm512_cmp_ps_mask(v, _mm512_setzero_ps(), _CMP_LT_OQ), v, slope);
  }
  static constexpr bool kExpActivations = true;
  // 1 / (1 + exp(-x)): the SGEMM epilogue's exp and one vdivps. kernels/simd's sigmoid_reg
  // (exp(-|x|), a reciprocal estimate + Newton step, a blend) measured slower inside these
  // strips, whose Swish epilogue runs once per output vector: ddddocr_det 31.8 -> 31.1 ms at 1
  // thread, 17.2 -> 16.7 ms at 2; the AVX2 path 60.4 -> 58.5 ms (AMD EPYC, 7-9 interleaved rounds).
  static Reg sigmoid(Reg v) {
    const Reg one = _mm512_set1_ps(1.0f);
    return _mm512_div_ps(one, _mm512_add_ps(one, gemm::exp_ps(_mm512_sub_ps(_mm512_setzero_ps(), v))));
  }
  static Reg gelu(Reg v) { return simd::gelu_erf_reg<simd::V512>(v); }
  static Reg gelu_tanh(Reg v) { return simd::gelu_tanh_reg<simd::V512>(v); }
};

// Reorders: 16 pixels of the block's 16 planes at a time, one 16 x 16 register transpose
// (kernels/simd/transpose16_avx512.h) between 16 row loads and 16 pixel stores. The padding
// channels load as zeros on the way in and are not stored on the way out; the last < 16
// pixels are masked loads / stores. (A gather per pixel on the way in and a scatter on the
// way out, before: 4.1x / 6.4x slower on ddddocr_det's reorders, AMD EPYC Zen 5.)
__mmask16 first_lanes(int64_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
constexpr int64_t kStreamBytes = int64_t{8} << 20;

void to_blocked_avx512(const float* x, int64_t planes, int64_t hw, float* y) {
  // A block far larger than the caches (a 3-channel 800 x 608 image is 31 MB blocked) goes
  // to memory with streaming stores: no read of each line before it is written
  // (that 31 MB block: 3.15 -> 0.45 ms, AMD EPYC Zen 5; the next layer reads it from memory
  // either way).
  const bool stream = hw * 16 * static_cast<int64_t>(sizeof(float)) > kStreamBytes &&
                      reinterpret_cast<uintptr_t>(y) % 64 == 0;
  __m512 r[16], t[16];
  for (int64_t p0 = 0; p0 < hw; p0 += 16) {
    const int64_t n = std::min<int64_t>(16, hw - p0);
    for (int l = 0; l < 16; ++l)
      r[l] = l >= planes ? _mm512_setzero_ps()
             : n == 16   ? _mm512_loadu_ps(x + l * hw + p0)
                         : _mm512_maskz_loadu_ps(first_lanes(n), x + l * hw + p0);
    simd::transpose16x16(r, t);
    if (stream) for (int64_t j = 0; j < n; ++j) _mm512_stream_ps(y + (p0 + j) * 16, t[j]);
    else for (int64_t j = 0; j < n; ++j) _mm512_storeu_ps(y + (p0 + j) * 16, t[j]);
  }
  if (stream) _mm_sfence();
}

void from_blocked_avx512(const float* x, int64_t planes, int64_t hw, float* y) {
  __m512 r[16], t[16];
  for (int64_t p0 = 0; p0 < hw; p0 += 16) {
    const int64_t n = std::min<int64_t>(16, hw - p0);
    for (int64_t j = 0; j < 16; ++j) r[j] = j < n ? _mm512_loadu_ps(x + (p0 + j) * 16) : _mm512_setzero_ps();
    simd::transpose16x16(r, t);
    for (int64_t l = 0; l < planes; ++l) {
      if (n == 16) _mm512_storeu_ps(y + l * hw + p0, t[l]);
      else _mm512_mask_storeu_ps(y + l * hw + p0, first_lanes(n), t[l]);
    }
  }
}

}  // namespace

const NchwcKernels& nchwc_kernels_avx512() {
  static const NchwcKernels k{cpu::Isa::Avx512, nchwc_dense_row<Avx512Block, 2, 13, 16, 8>,
                              nchwc_depthwise_row<Avx512Block, 16, 12>, 2, to_blocked_avx512, from_blocked_avx512, true, true,
                              nchwc_winograd_tiles<Avx512Block>};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
