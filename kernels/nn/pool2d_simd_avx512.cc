// The 2-D pool plane functions (average, max) compiled for AVX-512 (F/BW/DQ/VL) (see
// pool2d_simd_impl.h), and maxpool2d_rows' AVX-512 traits (pool2d_max_rows_impl.h).
// GCC 12 reports false -Wmaybe-uninitialized / -Wuninitialized inside its own intrinsic
// headers (their _mm512_undefined_* operands).
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#include <immintrin.h>

#include "kernels/nn/pool2d_max_rows_impl.h"

namespace onnxmini {
namespace nn {
namespace {

struct Avx512Rows {
  using Reg = __m512;
  static constexpr int V = 16;
  static Reg set1(float v) { return _mm512_set1_ps(v); }
  static Reg max(Reg v, Reg m) { return _mm512_max_ps(v, m); }  // v > m ? v : m: a NaN v keeps m
  // The lanes j of a register starting at input column c with 0 <= c + j < w.
  using Mask = __mmask16;
  static Mask col_mask(int64_t c, int64_t w) {
    const int64_t first = c < 0 ? -c : 0, last = w - c;  // valid lanes [first, last)
    if (first >= 16 || last <= 0) return 0;
    const uint32_t upto = last >= 16 ? 0xFFFFu : (1u << last) - 1u;
    return static_cast<Mask>(upto & (0xFFFFu << first));
  }
  // p[j] where the mask has lane j, -inf elsewhere (masked-off lanes are not read).
  static Reg load(const float* p, Mask m) {
    return m == 0xFFFF ? _mm512_loadu_ps(p) : _mm512_mask_loadu_ps(set1(-__builtin_inff()), m, p);
  }
  // Lanes k .. k + 15 of the pair hi:lo, as a vpermt2ps index (lanes >= 16 pick hi).
  using Shift = __m512i;
  static Shift make_shift(int k) {
    return _mm512_add_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15), _mm512_set1_epi32(k));
  }
  static Reg shift(Reg lo, Reg hi, Shift s) { return _mm512_permutex2var_ps(lo, s, hi); }
  // Lanes 0, 2, .., 30 (even) / 1, 3, .., 31 (odd) of the pair hi:lo.
  static Reg even(Reg lo, Reg hi) {
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), hi);
  }
  static Reg odd(Reg lo, Reg hi) {
    return _mm512_permutex2var_ps(lo, _mm512_setr_epi32(1, 3, 5, 7, 9, 11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), hi);
  }
  static void store_n(float* p, Reg v, int64_t n) {
    if (n == 16) _mm512_storeu_ps(p, v);
    else _mm512_mask_storeu_ps(p, static_cast<__mmask16>((1u << n) - 1u), v);
  }
};

}  // namespace

const Pool2dKernels& pool2d_kernels_avx512() {
  static const Pool2dKernels k{cpu::Isa::Avx512, pool_plane_dispatch<SumOp>, max_plane_rows_or_passes<Avx512Rows>,
                               Avx512Rows::V};
  return k;
}

}  // namespace nn
}  // namespace onnxmini
