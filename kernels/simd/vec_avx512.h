// The V512 vector interface of f32_kernels_impl.h for AVX-512: 16 lanes, __mmask16 masks for tails.
// Include only from files compiled with the matching flags (*_avx512.cc); it
// sits in an anonymous namespace so each including object keeps its own copy.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace onnxmini {
namespace simd {
namespace {

struct V512 {
  using reg = __m512;
  using ireg = __m512i;
  using mask = __mmask16;
  static constexpr int W = 16;
  static constexpr int kLevels = 4;

  static reg set1(float v) { return _mm512_set1_ps(v); }
  static reg load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, reg v) { _mm512_storeu_ps(p, v); }
  static mask tail(int64_t n) { return n >= W ? mask(0xFFFF) : mask((1u << n) - 1u); }
  static reg load_fill(const float* p, mask m, reg fill) { return _mm512_mask_loadu_ps(fill, m, p); }
  static void store_mask(float* p, mask m, reg v) { _mm512_mask_storeu_ps(p, m, v); }

  static reg add(reg a, reg b) { return _mm512_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm512_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm512_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm512_div_ps(a, b); }
  static reg max(reg a, reg b) { return _mm512_max_ps(a, b); }
  static reg min(reg a, reg b) { return _mm512_min_ps(a, b); }
  static reg abs(reg a) { return _mm512_abs_ps(a); }
  static reg sqrt(reg a) { return _mm512_sqrt_ps(a); }
  static reg fmadd(reg a, reg b, reg c) { return _mm512_fmadd_ps(a, b, c); }

  static mask gt(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ); }
  static mask ge(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ); }
  static mask lt(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LT_OQ); }
  static mask le(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_LE_OQ); }
  static mask unord(reg a, reg b) { return _mm512_cmp_ps_mask(a, b, _CMP_UNORD_Q); }
  static reg blend(mask m, reg t, reg f) { return _mm512_mask_blend_ps(m, f, t); }

  // level 0 swaps the 256-bit halves, 1 the 128-bit quarters, 2 pairs, 3 neighbours.
  static reg swap(reg v, int level) {
    switch (level) {
      case 0: return _mm512_shuffle_f32x4(v, v, 0x4E);
      case 1: return _mm512_shuffle_f32x4(v, v, 0xB1);
      case 2: return _mm512_permute_ps(v, 0x4E);
      default: return _mm512_permute_ps(v, 0xB1);
    }
  }
  static mask upper_blocks(int level) {
    static constexpr mask kMasks[4] = {0xFF00, 0xF0F0, 0xCCCC, 0xAAAA};
    return kMasks[level];
  }
  static bool all(mask m) { return m == 0xFFFF; }
  static reg lane(reg v, int k) { return _mm512_permutexvar_ps(_mm512_set1_epi32(k), v); }
  static float lane0(reg v) { return _mm512_cvtss_f32(v); }

  // p * 2^n for integral n: vscalefps, one instruction that also rounds
  // subnormal results and overflows to inf like the exact product.
  static reg scale_pow2(reg p, reg n) { return _mm512_scalef_ps(p, n); }
  static reg scale_pow2_normal(reg p, reg n, reg /*t*/) { return _mm512_scalef_ps(p, n); }
  // scale_pow2_normal in the lanes of keep, 0 in the others (zero-masked: no blend).
  static reg scale_pow2_normal_or_zero(mask keep, reg p, reg n, reg /*t*/) { return _mm512_maskz_scalef_ps(keep, p, n); }
  // 1 / d: 14-bit estimate refined by one Newton step (~2^-23 relative), instead
  // of vdivps, whose zmm throughput (one per ~8-16 cycles) would bound Sigmoid.
  static reg rcp(reg d) {
    const reg r = _mm512_rcp14_ps(d);
    return _mm512_mul_ps(r, _mm512_fnmadd_ps(d, r, _mm512_set1_ps(2.0f)));
  }

  static ireg iset1(int v) { return _mm512_set1_epi32(v); }
  static ireg iblend(mask m, ireg t, ireg f) { return _mm512_mask_blend_epi32(m, f, t); }
  static ireg lane_times(int n) {
    return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(n));
  }
  static reg gather(const float* base, ireg offs) { return _mm512_i32gather_ps(offs, base, 4); }
  static void store_i64(int64_t* out, ireg v) {
    _mm512_storeu_si512(out, _mm512_cvtepi32_epi64(_mm512_castsi512_si256(v)));
    _mm512_storeu_si512(out + 8, _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(v, 1)));
  }
};

}  // namespace
}  // namespace simd
}  // namespace onnxmini
