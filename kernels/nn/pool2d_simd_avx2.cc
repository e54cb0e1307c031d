// The 2-D pool plane functions (average, max) compiled for AVX2 + FMA (see
// pool2d_simd_impl.h), and maxpool2d_rows' AVX2 traits (pool2d_max_rows_impl.h).
#include <immintrin.h>

#include "kernels/nn/pool2d_max_rows_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx2Rows {
  using Reg = __m256;
  static constexpr int V = 8;
  static Reg set1(float v) { return _mm256_set1_ps(v); }
  static Reg max(Reg v, Reg m) { return _mm256_max_ps(v, m); }  // v > m ? v : m: a NaN v keeps m
  // The lanes j of a register starting at input column c with 0 <= c + j < w (all ones /
  // zeros per lane), and whether that is every lane.
  struct Mask {
    __m256i lanes;
    bool all;
  };
  static Mask col_mask(int64_t c, int64_t w) {
    const __m256i col = _mm256_add_epi32(_mm256_set1_epi32(static_cast<int>(c)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256i in = _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(), col),
                                           _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(w)), col));
    return {in, c >= 0 && c + 8 <= w};
  }
  // p[j] where the mask has lane j, -inf elsewhere (vmaskmovps reads no masked-off lane).
  static Reg load(const float* p, const Mask& m) {
    if (m.all) return _mm256_loadu_ps(p);
    return _mm256_blendv_ps(set1(-__builtin_inff()), _mm256_maskload_ps(p, m.lanes), _mm256_castsi256_ps(m.lanes));
  }
  // Lanes k .. k + 7 of the pair hi:lo (k <= 8): lane j takes lo[j + k] or hi[j + k - 8].
  struct Shift {
    __m256i idx;
    __m256 from_hi;
  };
  static Shift make_shift(int k) {
    const __m256i j = _mm256_add_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), _mm256_set1_epi32(k));
    return {j, _mm256_castsi256_ps(_mm256_cmpgt_epi32(j, _mm256_set1_epi32(7)))};
  }
  // vpermps reads the index's low 3 bits: j and j - 8 pick the same lane.
  static Reg shift(Reg lo, Reg hi, const Shift& s) {
    return _mm256_blendv_ps(_mm256_permutevar8x32_ps(lo, s.idx), _mm256_permutevar8x32_ps(hi, s.idx), s.from_hi);
  }
  // Lanes 0, 2, .., 14 (even) / 1, 3, .., 15 (odd) of the pair hi:lo: shufps picks
  // them per 128-bit half (lo0 lo2 hi0 hi2 | lo4 lo6 hi4 hi6), vpermpd restores the order.
  static Reg even(Reg lo, Reg hi) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0x88)), 0xD8));
  }
  static Reg odd(Reg lo, Reg hi) {
    return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(_mm256_shuffle_ps(lo, hi, 0xDD)), 0xD8));
  }
  // n < 8 as 4 + 2 + 1 floats straight from the register (vmaskmovps stores are slow on AMD;
  // a copy through a stack tile, as before, waited on the store-to-load forwarding: 12% of
  // a 13x13 SPPF pool's time, AMD EPYC Zen 4).
  static void store_n(float* p, Reg v, int64_t n) {
    if (n == 8) return _mm256_storeu_ps(p, v);
    __m128 part = _mm256_castps256_ps128(v);
    if (n >= 4) {
      _mm_storeu_ps(p, part);
      part = _mm256_extractf128_ps(v, 1);
      p += 4, n -= 4;
    }
    if (n >= 2) {
      _mm_storel_pi(reinterpret_cast<__m64*>(p), part);
      part = _mm_movehl_ps(part, part);
      p += 2, n -= 2;
    }
    if (n) _mm_store_ss(p, part);
  }
};

}  // namespace

const Pool2dKernels& pool2d_kernels_avx2() {
  static const Pool2dKernels k{cpu::Isa::Avx2, pool_plane_dispatch<SumOp>, max_plane_rows_or_passes<Avx2Rows>,
                               Avx2Rows::V};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
