// The V256 vector interface of f32_kernels_impl.h for AVX2 + FMA: 8 lanes,
// masks are vectors of all-ones lanes (vmaskmov loads/stores for tails,
// vblendv for selects).
// Include only from files compiled with the matching flags (*_avx2.cc); it
// sits in an anonymous namespace so each including object keeps its own copy.
#pragma once
#include <immintrin.h>

#include <cstdint>

namespace onnxmini {
namespace simd {
namespace {

struct V256 {
  using reg = __m256;
  using ireg = __m256i;
  using mask = __m256;
  static constexpr int W = 8;
  static constexpr int kLevels = 3;

  static reg set1(float v) { return _mm256_set1_ps(v); }
  static reg load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, reg v) { _mm256_storeu_ps(p, v); }
  static mask tail(int64_t n) {
    const __m256i lanes = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    const int k = n >= W ? W : static_cast<int>(n);
    return _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(k), lanes));
  }
  static reg load_fill(const float* p, mask m, reg fill) {
    return _mm256_blendv_ps(fill, _mm256_maskload_ps(p, _mm256_castps_si256(m)), m);
  }
  static void store_mask(float* p, mask m, reg v) { _mm256_maskstore_ps(p, _mm256_castps_si256(m), v); }

  static reg add(reg a, reg b) { return _mm256_add_ps(a, b); }
  static reg sub(reg a, reg b) { return _mm256_sub_ps(a, b); }
  static reg mul(reg a, reg b) { return _mm256_mul_ps(a, b); }
  static reg div(reg a, reg b) { return _mm256_div_ps(a, b); }
  static reg max(reg a, reg b) { return _mm256_max_ps(a, b); }
  static reg min(reg a, reg b) { return _mm256_min_ps(a, b); }
  static reg abs(reg a) { return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), a); }
  static reg sqrt(reg a) { return _mm256_sqrt_ps(a); }
  static reg fmadd(reg a, reg b, reg c) { return _mm256_fmadd_ps(a, b, c); }

  static mask gt(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_GT_OQ); }
  static mask ge(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_GE_OQ); }
  static mask lt(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_LT_OQ); }
  static mask le(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_LE_OQ); }
  static mask unord(reg a, reg b) { return _mm256_cmp_ps(a, b, _CMP_UNORD_Q); }
  static reg blend(mask m, reg t, reg f) { return _mm256_blendv_ps(f, t, m); }

  // level 0 swaps the 128-bit halves, 1 pairs, 2 neighbours.
  static reg swap(reg v, int level) {
    switch (level) {
      case 0: return _mm256_permute2f128_ps(v, v, 1);
      case 1: return _mm256_permute_ps(v, 0x4E);
      default: return _mm256_permute_ps(v, 0xB1);
    }
  }
  static mask upper_blocks(int level) {
    switch (level) {
      case 0: return _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, 0, 0, -1, -1, -1, -1));
      case 1: return _mm256_castsi256_ps(_mm256_setr_epi32(0, 0, -1, -1, 0, 0, -1, -1));
      default: return _mm256_castsi256_ps(_mm256_setr_epi32(0, -1, 0, -1, 0, -1, 0, -1));
    }
  }
  static bool all(mask m) { return _mm256_movemask_ps(m) == 0xFF; }
  static reg lane(reg v, int k) { return _mm256_permutevar8x32_ps(v, _mm256_set1_epi32(k)); }
  static float lane0(reg v) { return _mm256_cvtss_f32(v); }

  // 2^(n >> 1) (second == false) or 2^(n - (n >> 1)) for integral n in [-150, 128].
  // p * 2^n for integral n in [-150, 129], as two normal powers of two
  // 2^(n >> 1) * 2^(n - (n >> 1)), so subnormal and overflowing results round
  // like the exact product.
  static reg scale_pow2(reg p, reg n) { return _mm256_mul_ps(_mm256_mul_ps(p, pow2_half(n, false)), pow2_half(n, true)); }
  // p * 2^n when the product is a normal float and t = n + 1.5 * 2^23 (the
  // rounding sum n came from, n in t's low mantissa bits): n added to p's
  // exponent field, two integer ops instead of scale_pow2's nine.
  static reg scale_pow2_normal(reg p, reg /*n*/, reg t) {
    return _mm256_castsi256_ps(_mm256_add_epi32(_mm256_castps_si256(p), _mm256_slli_epi32(_mm256_castps_si256(t), 23)));
  }
  // scale_pow2_normal in the lanes of keep (an all-ones compare mask), 0 in the others.
  static reg scale_pow2_normal_or_zero(mask keep, reg p, reg n, reg t) { return _mm256_and_ps(keep, scale_pow2_normal(p, n, t)); }
  // 1 / d: 12-bit estimate refined by one Newton step (~2^-22 relative).
  static reg rcp(reg d) {
    const reg r = _mm256_rcp_ps(d);
    return _mm256_mul_ps(r, _mm256_fnmadd_ps(d, r, _mm256_set1_ps(2.0f)));
  }
  static reg pow2_half(reg n, bool second) {
    const __m256i ni = _mm256_cvtps_epi32(n), h = _mm256_srai_epi32(ni, 1);
    const __m256i k = second ? _mm256_sub_epi32(ni, h) : h;
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(k, _mm256_set1_epi32(127)), 23));
  }

  static ireg iset1(int v) { return _mm256_set1_epi32(v); }
  static ireg iblend(mask m, ireg t, ireg f) {
    return _mm256_castps_si256(_mm256_blendv_ps(_mm256_castsi256_ps(f), _mm256_castsi256_ps(t), m));
  }
  static ireg lane_times(int n) {
    return _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(n));
  }
  static reg gather(const float* base, ireg offs) { return _mm256_i32gather_ps(base, offs, 4); }
  static void store_i64(int64_t* out, ireg v) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_cvtepi32_epi64(_mm256_castsi256_si128(v)));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + 4), _mm256_cvtepi32_epi64(_mm256_extracti128_si256(v, 1)));
  }
};

}  // namespace
}  // namespace simd
}  // namespace onnxmini
