// AVX-512 SGEMM micro-kernels: a 14 x 32 register tile.
//
// Layout: A sliver a[k * 14 + i] (broadcast one float per row), B sliver
// b[k * 32 + j] (two zmm loads per k), C row-major with stride ldc.
// Registers: 14 rows x 2 zmm = 28 accumulators + 2 B vectors + 1 broadcast
// = 31 of the 32 zmm registers. Per k step: 28 FMAs against 2 loads + 14
// broadcasts, so the two FMA pipes (4-cycle latency, 8 FMAs in flight needed)
// stay busy with 28 independent chains.
// kernels[m] is the same loop instantiated for m rows (edge tiles in M skip
// the missing rows instead of multiplying zeros); the N edge (n < 32) uses
// masked loads/stores, so there is no scalar tail anywhere.
// The epilogue (alpha/beta, bias, activation) runs on the accumulators before
// the single store of each C element.
// GCC 12 reports a false -Wmaybe-uninitialized inside its own masked-intrinsic headers.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <utility>

#include "kernels/gemm_engine/epilogue_avx512.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/simd/transpose16_avx512.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr int MR = 14;
constexpr int NR = 32;

// Both cache lines of packed B's k-row 32 k ahead, into L2 (a prefetch never faults, so
// running past the end of B is harmless). A GEMM whose B streams from memory (ddddocr_ocr's
// [20, 1024] x [1024, 8210], 34 MB of weights read once per run) had only the hardware
// prefetchers in front of it with one line 8 k ahead into L1: 4.78 -> 3.34 ms, the model
// 1.13x (AMD EPYC Zen 4, 1 thread; 64 or 128 k ahead measured the same, one line 64 k
// ahead half the gain). Shapes whose B is in cache, and six more zoo models, 0.99-1.01x.
inline void prefetch_b_row(const float* b) {
  _mm_prefetch(reinterpret_cast<const char*>(b + 32 * NR), _MM_HINT_T1);
  _mm_prefetch(reinterpret_cast<const char*>(b + 32 * NR + 16), _MM_HINT_T1);
}

// kIndirect: B row k is read in place at b + boff[k] (implicit GEMM straight
// from a convolution's padded input: unaligned loads, masked to the tile's n
// columns so nothing past the run is touched); otherwise the packed sliver
// b[k * NR + j]. H = 2 computes the full 32-column tile, H = 1 only its first
// 16 columns (n <= 16: edge tiles, N = 8 GEMMs, a 112-wide output row's last
// 16 columns) with half the FMAs and registers.
// kARows: A is read in place, row i at a + i * lda (row-major op(A), no packing:
// skinny GEMMs with N <= 32, where packing A would cost as much as the FMAs).
template <int M, bool kIndirect, int H, bool kMasked = true, bool kARows = false>
inline void kernel_body(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc,
                        int64_t n, float alpha, float beta, const TileEpi* epi, int64_t lda = 0) {
  const __mmask16 m0 = n >= 16 ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
  const __mmask16 m1 = n >= 32 ? __mmask16(0xFFFF) : n > 16 ? __mmask16((1u << (n - 16)) - 1) : __mmask16(0);
  __m512 acc0[M], acc1[M];
#pragma GCC unroll 16
  for (int i = 0; i < M; ++i) {
    acc0[i] = _mm512_setzero_ps();
    if (H == 2) acc1[i] = _mm512_setzero_ps();
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    if (H == 2) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 31), _MM_HINT_T0);
  }
  int64_t k = 0;
  // One or two rows: 2 or 4 FMA chains, too few to cover the FMA latency (an RNN step's
  // [1, H] x [H, 4H]): odd k go to a second accumulator set. Three and four rows measured
  // neutral here (0.99-1.01x on [3..4, 512] x [512, 1024], AMD EPYC).
  constexpr bool kSplitK = M <= 2 && !kIndirect;
  if constexpr (kSplitK) {
    constexpr int64_t astep = kARows ? 1 : MR;
    __m512 odd0[M], odd1[M];
#pragma GCC unroll 2
    for (int i = 0; i < M; ++i) odd0[i] = odd1[i] = _mm512_setzero_ps();
    for (; k + 1 < kc; k += 2) {
      const __m512 b0 = _mm512_load_ps(b), b2 = _mm512_load_ps(b + NR);
      const __m512 b1 = H == 2 ? _mm512_load_ps(b + 16) : b0, b3 = H == 2 ? _mm512_load_ps(b + NR + 16) : b2;
      prefetch_b_row(b);
#pragma GCC unroll 2
      for (int i = 0; i < M; ++i) {
        const float* ai = kARows ? a + i * lda : a + i;
        const __m512 av = _mm512_set1_ps(ai[0]), av2 = _mm512_set1_ps(ai[astep]);
        acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
        odd0[i] = _mm512_fmadd_ps(av2, b2, odd0[i]);
        if (H == 2) {
          acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
          odd1[i] = _mm512_fmadd_ps(av2, b3, odd1[i]);
        }
      }
      a += 2 * astep;
      b += 2 * NR;
    }
#pragma GCC unroll 2
    for (int i = 0; i < M; ++i) {
      acc0[i] = _mm512_add_ps(acc0[i], odd0[i]);
      if (H == 2) acc1[i] = _mm512_add_ps(acc1[i], odd1[i]);
    }
  }
  for (; k < kc; ++k) {
    const float* bk = kIndirect ? b + boff[k] : b;
    const __m512 b0 = !kIndirect ? _mm512_load_ps(bk) : kMasked ? _mm512_maskz_loadu_ps(m0, bk) : _mm512_loadu_ps(bk);
    __m512 b1 = b0;
    if (H == 2)
      b1 = !kIndirect ? _mm512_load_ps(bk + 16) : kMasked ? _mm512_maskz_loadu_ps(m1, bk + 16) : _mm512_loadu_ps(bk + 16);
    if (!kIndirect) prefetch_b_row(b);
#pragma GCC unroll 16
    for (int i = 0; i < M; ++i) {
      __m512 av = _mm512_set1_ps(kARows ? a[i * lda] : a[i]);
      acc0[i] = _mm512_fmadd_ps(av, b0, acc0[i]);
      if (H == 2) acc1[i] = _mm512_fmadd_ps(av, b1, acc1[i]);
    }
    a += kARows ? 1 : MR;
    if (!kIndirect) b += NR;
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 16
  for (int i = 0; i < M; ++i) {
    float* cr = c + i * ldc;
    __m512 r0 = _mm512_mul_ps(acc0[i], va);
    if (beta != 0.0f) r0 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m0, cr), vb, r0);  // beta == 0: C is write-only
    if (epi) r0 = epilogue_ps(r0, *epi, i, 0, m0);
    _mm512_mask_storeu_ps(cr, m0, r0);
    if (H == 2) {
      __m512 r1 = _mm512_mul_ps(acc1[i], va);
      if (beta != 0.0f) r1 = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(m1, cr + 16), vb, r1);
      if (epi) r1 = epilogue_ps(r1, *epi, i, 16, m1);
      _mm512_mask_storeu_ps(cr + 16, m1, r1);
    }
  }
}

// One row of A against P consecutive full packed panels of B (P * 32 columns; panel p
// at b + p * kc * 32, as PackedB and pack_b lay them out), the P panels read side by side
// instead of one after the other. A [1, K] x [K, N] product (an RNN step, a classifier
// head at batch 1) reads each B float once for one FMA, so its speed is the rate B comes
// in from L2 / L3: on an AMD EPYC Zen 4, [1, 256] x [256, 1024] prepacked took 16.0 us one
// panel at a time (kernel<1>), 13.9 us two panels at a time, 12.7 us with four or eight
// (82 GB/s). Why one 128-byte-per-k stream is slower was not isolated: removing
// kernel<1>'s software prefetch changed nothing, and AVX2's one-panel kernel (64 bytes
// per k) already reads at the four-stream rate, so AVX2 has no twin. The sums are
// kernel<1>'s, bit for bit (even k and odd k in two accumulator sets, added, then an odd
// last k), so a column's result does not depend on which kernel a thread split gave it.
constexpr int kRowPanels = 4;
void kernel_row_panels(int64_t kc, const float* a, const float* b, float* c, int64_t, int64_t, float alpha,
                       float beta, const TileEpi* epi) {
  constexpr int P = kRowPanels;
  __m512 acc[2 * P], odd[2 * P];
#pragma GCC unroll 8
  for (int j = 0; j < 2 * P; ++j) acc[j] = odd[j] = _mm512_setzero_ps();
  const int64_t ps = kc * NR;
  int64_t k = 0;
  for (; k + 1 < kc; k += 2) {
    const __m512 av = _mm512_set1_ps(a[k * MR]), av2 = _mm512_set1_ps(a[(k + 1) * MR]);
    const float* bk = b + k * NR;
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      const float* bp = bk + p * ps;
      acc[2 * p] = _mm512_fmadd_ps(av, _mm512_load_ps(bp), acc[2 * p]);
      acc[2 * p + 1] = _mm512_fmadd_ps(av, _mm512_load_ps(bp + 16), acc[2 * p + 1]);
      odd[2 * p] = _mm512_fmadd_ps(av2, _mm512_load_ps(bp + NR), odd[2 * p]);
      odd[2 * p + 1] = _mm512_fmadd_ps(av2, _mm512_load_ps(bp + NR + 16), odd[2 * p + 1]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < 2 * P; ++j) acc[j] = _mm512_add_ps(acc[j], odd[j]);
  if (k < kc) {
    const __m512 av = _mm512_set1_ps(a[k * MR]);
    const float* bk = b + k * NR;
#pragma GCC unroll 4
    for (int p = 0; p < P; ++p) {
      acc[2 * p] = _mm512_fmadd_ps(av, _mm512_load_ps(bk + p * ps), acc[2 * p]);
      acc[2 * p + 1] = _mm512_fmadd_ps(av, _mm512_load_ps(bk + p * ps + 16), acc[2 * p + 1]);
    }
  }
  const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int j = 0; j < 2 * P; ++j) {
    __m512 r = _mm512_mul_ps(acc[j], va);
    if (beta != 0.0f) r = _mm512_fmadd_ps(_mm512_loadu_ps(c + 16 * j), vb, r);  // beta == 0: C is write-only
    if (epi) r = epilogue_ps(r, *epi, 0, 16 * j, __mmask16(0xFFFF));
    _mm512_storeu_ps(c + 16 * j, r);
  }
}

// Transposing pack (A stored M x K, or B stored N x K): 16 source rows x 16 k
// are loaded (rows >= `rows` and k past the end as zeros), transposed in
// registers (unpack 32-bit pairs, shuffle 64-bit pairs, then two rounds of
// 128-bit block shuffles), and each k column is stored as `lanes` floats.
void pack_transposed(const float* src, int64_t ld, int rows, int64_t kc, float* dst, int stride, int lanes) {
  const __mmask16 store_mask = static_cast<__mmask16>((1u << lanes) - 1);
  for (int64_t k0 = 0; k0 < kc; k0 += 16) {
    const int kn = static_cast<int>(kc - k0 < 16 ? kc - k0 : 16);
    const __mmask16 load_mask = static_cast<__mmask16>((1u << kn) - 1);
    __m512 r[16], t[16];
    for (int i = 0; i < 16; ++i)
      r[i] = i < rows ? _mm512_maskz_loadu_ps(load_mask, src + i * ld + k0) : _mm512_setzero_ps();
    simd::transpose16x16(r, t);  // t[k]: column k0 + k
    for (int k = 0; k < kn; ++k) _mm512_mask_storeu_ps(dst + (k0 + k) * stride, store_mask, t[k]);
  }
}

// kernels[m]: n <= 32 from a packed sliver; half[m]: n <= 16; ib / ib_half[m]:
// the same reading B in place (any n up to the width, masked).
template <int M>
void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n, float alpha, float beta,
            const TileEpi* epi) {
  kernel_body<M, false, 2>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi);
}
template <int M>
void kernel_half(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n, float alpha,
                 float beta, const TileEpi* epi) {
  kernel_body<M, false, 1>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi);
}
template <int M>
void kernel_ib(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc, int64_t n,
               float alpha, float beta, const TileEpi* epi) {
  if (n == NR) kernel_body<M, true, 2, false>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
  else kernel_body<M, true, 2>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
}
template <int M>
void kernel_ib_half(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc, int64_t n,
                    float alpha, float beta, const TileEpi* epi) {
  kernel_body<M, true, 1>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
}

template <int M>
void kernel_arows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int64_t n,
                  float alpha, float beta, const TileEpi* epi) {
  if (n * 2 <= NR) kernel_body<M, false, 1, true, true>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi, lda);
  else kernel_body<M, false, 2, true, true>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi, lda);
}

template <int... Ms>
constexpr SgemmKernelSet make_set(std::integer_sequence<int, Ms...>) {
  return SgemmKernelSet{cpu::Isa::Avx512, MR, NR, 14 * 8, 512, 4096, {nullptr, &kernel<Ms + 1>...}, &pack_transposed, {nullptr, &kernel_ib<Ms + 1>...},
                        {nullptr, &kernel_half<Ms + 1>...}, {nullptr, &kernel_ib_half<Ms + 1>...}, true,
                        {nullptr, &kernel_arows<Ms + 1>...}, &kernel_row_panels, kRowPanels};
}

}  // namespace

const SgemmKernelSet& sgemm_kernels_avx512() {
  static const SgemmKernelSet set = make_set(std::make_integer_sequence<int, MR>{});
  return set;
}

}  // namespace gemm
}  // namespace onnxmini
