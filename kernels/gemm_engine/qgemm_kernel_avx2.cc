// AVX2 int8 micro-kernel: a 4 x 16 tile of int32 sums (4 rows x 2 ymm).
//
// Layout (qgemm_kernel.h): per k group of 4, one 32-bit broadcast of A per row and one ymm
// of B per 8 columns (4 k bytes per column). vpmaddubsw multiplies u8 A by s8 B and adds
// adjacent pairs into int16 with saturation: 255 * 127 * 2 = 64770 does not fit. Exact
// split: A = (A & 0x7f) + (A & 0x80). With the low 7 bits a pair is at most
// 127 * 127 * 2 = 32258 and at least 127 * -128 * 2 = -32512; with the high bit (0 or 128)
// at most 128 * 127 * 2 = 32512 and at least 128 * -128 * 2 = -32768: both fit int16, so
// neither vpmaddubsw saturates. Each half goes through vpmaddwd by ones (pairs of pairs ->
// int32) before the two are added, so no int16 sum of the halves is ever formed.
// Registers: 8 accumulators + 2 B + 2 A halves + ones + 2 temporaries = 15 of 16.
// AVX-VNNI (the VEX vpdpbusd of CPUs with avx_vnni, compiled for that target per function):
// a 6 x 16 tile, 12 accumulators + 2 B + 1 broadcast, exact like the AVX-512 VNNI kernel.
#include <immintrin.h>

#include <cstring>

#include "kernels/gemm_engine/qgemm_kernel.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr int MR = 4, NR = 16;

void kernel_avx2(int64_t kgroups, const uint8_t* a, const int8_t* b, int32_t* c) {
  const __m256i ones = _mm256_set1_epi16(1);
  const __m256i low7 = _mm256_set1_epi8(0x7f);
  const __m256i high = _mm256_set1_epi8(static_cast<char>(0x80));
  __m256i acc0[MR], acc1[MR];
  for (int i = 0; i < MR; ++i) acc0[i] = acc1[i] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kgroups; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * NR * 4));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * NR * 4 + 32));
#pragma GCC unroll 4
    for (int i = 0; i < MR; ++i) {
      int32_t a4;
      std::memcpy(&a4, a + g * MR * 4 + i * 4, 4);
      const __m256i av = _mm256_set1_epi32(a4);
      const __m256i lo = _mm256_and_si256(av, low7), hi = _mm256_and_si256(av, high);
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, b0), ones));
      acc0[i] = _mm256_add_epi32(acc0[i], _mm256_madd_epi16(_mm256_maddubs_epi16(hi, b0), ones));
      acc1[i] = _mm256_add_epi32(acc1[i], _mm256_madd_epi16(_mm256_maddubs_epi16(lo, b1), ones));
      acc1[i] = _mm256_add_epi32(acc1[i], _mm256_madd_epi16(_mm256_maddubs_epi16(hi, b1), ones));
    }
  }
  for (int i = 0; i < MR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * NR), acc0[i]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * NR + 8), acc1[i]);
  }
}

constexpr int kVnniMR = 6;

__attribute__((target("avx2,avxvnni"))) void kernel_avx_vnni(int64_t kgroups, const uint8_t* a, const int8_t* b,
                                                             int32_t* c) {
  __m256i acc0[kVnniMR], acc1[kVnniMR];
  for (int i = 0; i < kVnniMR; ++i) acc0[i] = acc1[i] = _mm256_setzero_si256();
  for (int64_t g = 0; g < kgroups; ++g) {
    const __m256i b0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * NR * 4));
    const __m256i b1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b + g * NR * 4 + 32));
#pragma GCC unroll 6
    for (int i = 0; i < kVnniMR; ++i) {
      int32_t a4;
      std::memcpy(&a4, a + g * kVnniMR * 4 + i * 4, 4);
      const __m256i av = _mm256_set1_epi32(a4);
      acc0[i] = _mm256_dpbusd_avx_epi32(acc0[i], av, b0);
      acc1[i] = _mm256_dpbusd_avx_epi32(acc1[i], av, b1);
    }
  }
  for (int i = 0; i < kVnniMR; ++i) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * NR), acc0[i]);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(c + i * NR + 8), acc1[i]);
  }
}

}  // namespace

const QgemmKernelSet& qgemm_kernels_avx_vnni() {
  static const QgemmKernelSet ks{QIsa::AvxVnni, kVnniMR, NR, 126, kernel_avx_vnni};
  return ks;
}

const QgemmKernelSet& qgemm_kernels_avx2() {
  static const QgemmKernelSet ks{QIsa::Avx2, MR, NR, 128, kernel_avx2};
  return ks;
}

}  // namespace gemm
}  // namespace onnxmini
