// AVX-512 int8 micro-kernels, both on the layout of qgemm_kernel.h (k groups of 4 bytes).
//
// VNNI (avx512_vnni, compiled for that target per function): a 12 x 32 tile, 12 rows x 2 zmm
// = 24 accumulators + 2 B + 1 broadcast of the 32 zmm. Per k group: 2 loads of B, 12
// broadcasts of 4 A bytes, 24 vpdpbusd. vpdpbusd sums four u8 * s8 products into int32
// without any intermediate int16 rounding or saturation: exact.
// BW (AVX-512BW without VNNI): an 8 x 32 tile with the exact split vpmaddubsw scheme of the
// AVX2 kernel (qgemm_kernel_avx2.cc explains why neither half saturates), 16 accumulators.
#include <immintrin.h>

#include <cstring>

#include "kernels/gemm_engine/qgemm_kernel.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr int NR = 32;
constexpr int kVnniMR = 12, kBwMR = 8;

inline int32_t load4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

__attribute__((target("avx512f,avx512bw,avx512vnni"))) void kernel_vnni(int64_t kgroups, const uint8_t* a,
                                                                         const int8_t* b, int32_t* c) {
  constexpr int MR = kVnniMR;
  __m512i acc0[MR], acc1[MR];
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_si512();
  for (int64_t g = 0; g < kgroups; ++g) {
    const __m512i b0 = _mm512_loadu_si512(b + g * NR * 4);
    const __m512i b1 = _mm512_loadu_si512(b + g * NR * 4 + 64);
    _mm_prefetch(reinterpret_cast<const char*>(b + (g + 8) * NR * 4), _MM_HINT_T0);
#pragma GCC unroll 12
    for (int i = 0; i < MR; ++i) {
      const __m512i av = _mm512_set1_epi32(load4(a + g * MR * 4 + i * 4));
      acc0[i] = _mm512_dpbusd_epi32(acc0[i], av, b0);
      acc1[i] = _mm512_dpbusd_epi32(acc1[i], av, b1);
    }
  }
#pragma GCC unroll 12
  for (int i = 0; i < MR; ++i) {
    _mm512_storeu_si512(c + i * NR, acc0[i]);
    _mm512_storeu_si512(c + i * NR + 16, acc1[i]);
  }
}

void kernel_bw(int64_t kgroups, const uint8_t* a, const int8_t* b, int32_t* c) {
  constexpr int MR = kBwMR;
  const __m512i ones = _mm512_set1_epi16(1);
  const __m512i low7 = _mm512_set1_epi8(0x7f);
  const __m512i high = _mm512_set1_epi8(static_cast<char>(0x80));
  __m512i acc0[MR], acc1[MR];
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm512_setzero_si512();
  for (int64_t g = 0; g < kgroups; ++g) {
    const __m512i b0 = _mm512_loadu_si512(b + g * NR * 4);
    const __m512i b1 = _mm512_loadu_si512(b + g * NR * 4 + 64);
#pragma GCC unroll 8
    for (int i = 0; i < MR; ++i) {
      const __m512i av = _mm512_set1_epi32(load4(a + g * MR * 4 + i * 4));
      const __m512i lo = _mm512_and_si512(av, low7), hi = _mm512_and_si512(av, high);
      acc0[i] = _mm512_add_epi32(acc0[i], _mm512_madd_epi16(_mm512_maddubs_epi16(lo, b0), ones));
      acc0[i] = _mm512_add_epi32(acc0[i], _mm512_madd_epi16(_mm512_maddubs_epi16(hi, b0), ones));
      acc1[i] = _mm512_add_epi32(acc1[i], _mm512_madd_epi16(_mm512_maddubs_epi16(lo, b1), ones));
      acc1[i] = _mm512_add_epi32(acc1[i], _mm512_madd_epi16(_mm512_maddubs_epi16(hi, b1), ones));
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < MR; ++i) {
    _mm512_storeu_si512(c + i * NR, acc0[i]);
    _mm512_storeu_si512(c + i * NR + 16, acc1[i]);
  }
}

}  // namespace

const QgemmKernelSet& qgemm_kernels_avx512vnni() {
  static const QgemmKernelSet ks{QIsa::Avx512vnni, kVnniMR, NR, 120, kernel_vnni};
  return ks;
}

const QgemmKernelSet& qgemm_kernels_avx512bw() {
  static const QgemmKernelSet ks{QIsa::Avx512bw, kBwMR, NR, 128, kernel_bw};
  return ks;
}

}  // namespace gemm
}  // namespace onnxmini
