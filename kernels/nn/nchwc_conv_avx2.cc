// AVX2 + FMA traits of NchwcConv's row kernels (nchwc_conv_impl.h): a block of 16
// channels is two ymm. Dense rows hold 1 output block x 6 pixels (12 ymm accumulators,
// 2 weight registers, 1 broadcast: 15 of 16); depthwise strips 6 pixels of one block.
#include <immintrin.h>

#include "kernels/nn/nchwc_conv_impl.h"
#include "kernels/nn/nchwc_winograd_impl.h"
#include "kernels/gemm_engine/epilogue_avx2.h"
#include "kernels/simd/f32_kernels_impl.h"  // sigmoid_reg, gelu_erf_reg / gelu_tanh_reg
#include "kernels/simd/vec_avx2.h"
#include "kernels/simd/transpose8_avx2.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx2Block {
  struct Reg {
    __m256 lo, hi;
  };
  static constexpr int kRegVectors = 2;  // nchwc_partial_sums counts ymm, not blocks
  static constexpr int kRegisters = 16;  // ymm0-15 (nchwc_dense_strip's budget)
  static Reg zero() { return {_mm256_setzero_ps(), _mm256_setzero_ps()}; }
  static Reg set1(float v) {
    const __m256 b = _mm256_set1_ps(v);
    return {b, b};
  }
  static Reg load(const float* p) { return {_mm256_loadu_ps(p), _mm256_loadu_ps(p + 8)}; }
  static void store(float* p, Reg v) {
    _mm256_storeu_ps(p, v.lo);
    _mm256_storeu_ps(p + 8, v.hi);
  }
  static Reg fma(Reg a, Reg b, Reg c) { return {_mm256_fmadd_ps(a.lo, b.lo, c.lo), _mm256_fmadd_ps(a.hi, b.hi, c.hi)}; }
  static Reg add(Reg a, Reg b) { return {_mm256_add_ps(a.lo, b.lo), _mm256_add_ps(a.hi, b.hi)}; }
  static Reg sub(Reg a, Reg b) { return {_mm256_sub_ps(a.lo, b.lo), _mm256_sub_ps(a.hi, b.hi)}; }
  static Reg mul(Reg a, Reg b) { return {_mm256_mul_ps(a.lo, b.lo), _mm256_mul_ps(a.hi, b.hi)}; }
  static Reg max(Reg a, Reg b) { return {_mm256_max_ps(a.lo, b.lo), _mm256_max_ps(a.hi, b.hi)}; }
  static Reg min(Reg a, Reg b) { return {_mm256_min_ps(a.lo, b.lo), _mm256_min_ps(a.hi, b.hi)}; }
  static __m256 prelu8(__m256 v, __m256 s) {
    return _mm256_blendv_ps(v, _mm256_mul_ps(v, s), _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
  }
  static Reg prelu(Reg v, Reg s) { return {prelu8(v.lo, s.lo), prelu8(v.hi, s.hi)}; }
  static constexpr bool kExpActivations = true;
  static Reg sigmoid(Reg v) { return {sigmoid8(v.lo), sigmoid8(v.hi)}; }
  // 1 / (1 + exp(-x)) with vdivps (see nchwc_conv_avx512.cc's sigmoid).
  static __m256 sigmoid8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, gemm::exp8_ps(_mm256_sub_ps(_mm256_setzero_ps(), x))));
  }
  static Reg gelu(Reg v) { return {simd::gelu_erf_reg<simd::V256>(v.lo), simd::gelu_erf_reg<simd::V256>(v.hi)}; }
  static Reg gelu_tanh(Reg v) { return {simd::gelu_tanh_reg<simd::V256>(v.lo), simd::gelu_tanh_reg<simd::V256>(v.hi)}; }
};

// Reorders: 8 pixels at a time, each half (channels 0-7, 8-15) of the block one 8 x 8
// register transpose (kernels/simd/transpose8_avx2.h) between 8 row loads and 8 half-pixel
// stores; padding channels load as zeros and are not stored back. The last < 8 pixels go
// through a stack tile (vmaskmovps is slow on AMD). (Before: two gathers per pixel on the way
// in and the portable loops on the way out.)
void to_blocked_avx2(const float* x, int64_t planes, int64_t hw, float* y) {
  __m256 r[8], t[8];
  alignas(32) float tile[16][8];
  for (int64_t p0 = 0; p0 < hw; p0 += 8) {
    const int64_t n = std::min<int64_t>(8, hw - p0);
    if (n < 8)
      for (int l = 0; l < 16; ++l)
        for (int j = 0; j < 8; ++j) tile[l][j] = l < planes && j < n ? x[l * hw + p0 + j] : 0.0f;
    for (int h = 0; h < 2; ++h) {
      for (int i = 0; i < 8; ++i) {
        const int l = 8 * h + i;
        r[i] = l >= planes ? _mm256_setzero_ps() : n == 8 ? _mm256_loadu_ps(x + l * hw + p0) : _mm256_load_ps(tile[l]);
      }
      simd::transpose8x8(r, t);
      for (int64_t j = 0; j < n; ++j) _mm256_storeu_ps(y + (p0 + j) * 16 + 8 * h, t[j]);
    }
  }
}

void from_blocked_avx2(const float* x, int64_t planes, int64_t hw, float* y) {
  __m256 r[8], t[8];
  alignas(32) float tile[8];
  for (int64_t p0 = 0; p0 < hw; p0 += 8) {
    const int64_t n = std::min<int64_t>(8, hw - p0);
    for (int h = 0; h < 2 && 8 * h < planes; ++h) {
      for (int64_t j = 0; j < 8; ++j) r[j] = j < n ? _mm256_loadu_ps(x + (p0 + j) * 16 + 8 * h) : _mm256_setzero_ps();
      simd::transpose8x8(r, t);
      for (int64_t i = 0; i < 8 && 8 * h + i < planes; ++i) {
        float* dst = y + (8 * h + i) * hw + p0;
        if (n == 8) {
          _mm256_storeu_ps(dst, t[i]);
        } else {
          _mm256_store_ps(tile, t[i]);
          for (int64_t j = 0; j < n; ++j) dst[j] = tile[j];
        }
      }
    }
  }
}

}  // namespace

const NchwcKernels& nchwc_kernels_avx2() {
  static const NchwcKernels k{cpu::Isa::Avx2, nchwc_dense_row<Avx2Block, 1, 6, 6>, nchwc_depthwise_row<Avx2Block, 6>,
                              1, to_blocked_avx2, from_blocked_avx2, false, true, nchwc_winograd_tiles<Avx2Block>};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
