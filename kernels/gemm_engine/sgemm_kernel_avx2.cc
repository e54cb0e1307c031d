// AVX2+FMA SGEMM micro-kernels: a 6 x 16 register tile.
//
// Layout: A sliver a[k * 6 + i] (broadcast), B sliver b[k * 16 + j] (two ymm
// loads per k), C row-major with stride ldc. Registers: 6 rows x 2 ymm = 12
// accumulators + 2 B vectors + 1 broadcast = 15 of the 16 ymm registers; 12
// independent FMA chains cover 2 pipes x 4-cycle latency.
// kernels[m] is the loop for m rows (M edge). For the N edge (n < 16) the
// finished tile goes through a small stack buffer, because vmaskmovps stores
// are slow on several cores; the arithmetic stays vectorised.
// Alpha/beta, bias and activation are applied in registers before the store.
//
// Skinny GEMMs (N <= 16, A not transposed; gemm_builtin.cc run_skinny): the
// AVX2 twin of the AVX-512 A-in-place kernel. Row i of A is read in place at
// a + i * lda (6 sequential row streams, one scalar broadcast per row and k),
// so nothing packs A; B is the usual packed sliver. With n <= 8 only the
// first ymm of each row is computed (6 accumulators, half the FMAs), as in
// kernels_half for the packed path's N-edge tiles and kernels_ib_half for an
// implicit GEMM's (B read in place with masked loads, ib_any_n).
#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "kernels/gemm_engine/epilogue_avx2.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/simd/transpose8_avx2.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr int MR = 6;
constexpr int NR = 16;

// Bias (+ residual) + activation for row i, columns [j0, j0 + 8); bias/slope rows are
// readable for those 8 columns (the caller pads partial tiles); the residual row
// (C-shaped, not padded) is read for its first `valid` columns only.
// Always inlined: out of line, GCC spilled the tile's accumulators around each call.
inline __attribute__((always_inline)) __m256 epilogue(__m256 v, const TileEpi& e, int i, int j0, int valid,
                                                      const float* bias_cols, const float* bias2_cols,
                                                      const float* slope_cols) {
  if (e.bias) v = _mm256_add_ps(v, e.per_row ? _mm256_set1_ps(e.bias[i]) : _mm256_loadu_ps(bias_cols));
  if (e.bias2) v = _mm256_add_ps(v, _mm256_loadu_ps(bias2_cols));
  if (e.residual) v = _mm256_add_ps(v, load8_first(e.residual + i * e.res_ld + j0, valid));
  const __m256 slope = e.act != TileEpi::kPRelu ? _mm256_setzero_ps()
                       : e.per_row             ? _mm256_set1_ps(e.slope[i])
                                               : _mm256_loadu_ps(slope_cols);
  return activate8_ps(v, e, slope);
}

// Per-column epilogue vectors of a partial tile (n < NR) go through a zero-padded
// copy so the two 8-wide loads stay inside readable memory.
inline const float* pad_columns(const float* cols, int64_t n, bool full, float* pad) {
  if (!cols || full) return cols;
  std::memset(pad, 0, NR * sizeof(float));
  std::memcpy(pad, cols, n * sizeof(float));
  return pad;
}

// kIndirect: B row k is the NR floats at b + boff[k] (implicit GEMM straight
// from a convolution's padded input: unaligned loads; kMasked: vmaskmovps loads
// of the tile's n columns only, so an edge tile n < NR reads nothing past its
// run and needs no packed copy); otherwise the packed sliver b[k * NR + j].
// H = 2 computes both ymm of a row, H = 1 only the first (n <= 8).
// kARows: A row i read in place at a + i * lda (skinny GEMMs), else the packed
// sliver a[k * MR + i].
// kFull: the caller knows n == NR, so the epilogue loads bias / slope columns and stores C
// directly, with no padded copies (the partial-tile path's out-of-line copies made GCC spill
// all 12 accumulators around them on every tile: with K = 16 a tile is 96 FMA cycles).
template <int M, bool kIndirect, int H = 2, bool kARows = false, bool kMasked = false, bool kFull = false>
inline void kernel_body(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc,
                        int64_t n, float alpha, float beta, const TileEpi* epi, int64_t lda = 0) {
  const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
  const __m256i m0 = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
  const __m256i m1 = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n) - 8), lane);
  __m256 acc0[M], acc1[M];
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i) {
    acc0[i] = _mm256_setzero_ps();
    acc1[i] = _mm256_setzero_ps();
    _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc), _MM_HINT_T0);
    if (H == 2) _mm_prefetch(reinterpret_cast<const char*>(c + i * ldc + 15), _MM_HINT_T0);
  }
  int64_t k = 0;
  // One to three rows: 2 to 6 FMA chains, too few to cover the FMA latency (an RNN step's
  // [1, H] x [H, 4H] ran at half the FMA rate): odd k go to a second accumulator set.
  // Four rows would need 16 accumulators + 4 B vectors, more than the 16 ymm: the spills
  // made [4, 512] x [512, 1024] 39 -> 64 us (AMD EPYC, AVX2 path), while 3 rows gained 1.15x.
  constexpr bool kSplitK = M <= 3 && !kIndirect;
  if constexpr (kSplitK) {
    constexpr int64_t astep = kARows ? 1 : MR;
    __m256 odd0[M], odd1[M];
#pragma GCC unroll 3
    for (int i = 0; i < M; ++i) odd0[i] = odd1[i] = _mm256_setzero_ps();
    for (; k + 1 < kc; k += 2) {
      const __m256 b0 = _mm256_load_ps(b), b2 = _mm256_load_ps(b + NR);
      const __m256 b1 = H == 2 ? _mm256_load_ps(b + 8) : b0, b3 = H == 2 ? _mm256_load_ps(b + NR + 8) : b2;
      _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 3
      for (int i = 0; i < M; ++i) {
        const float* ai = kARows ? a + i * lda : a + i;
        const __m256 av = _mm256_broadcast_ss(ai), av2 = _mm256_broadcast_ss(ai + astep);
        acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
        odd0[i] = _mm256_fmadd_ps(av2, b2, odd0[i]);
        if (H == 2) {
          acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
          odd1[i] = _mm256_fmadd_ps(av2, b3, odd1[i]);
        }
      }
      a += 2 * astep;
      b += 2 * NR;
    }
#pragma GCC unroll 3
    for (int i = 0; i < M; ++i) {
      acc0[i] = _mm256_add_ps(acc0[i], odd0[i]);
      if (H == 2) acc1[i] = _mm256_add_ps(acc1[i], odd1[i]);
    }
  }
  for (; k < kc; ++k) {
    const float* bk = kIndirect ? b + boff[k] : b;
    __m256 b0 = !kIndirect ? _mm256_load_ps(bk) : kMasked ? _mm256_maskload_ps(bk, m0) : _mm256_loadu_ps(bk);
    __m256 b1 = b0;
    if (H == 2)
      b1 = !kIndirect ? _mm256_load_ps(bk + 8) : kMasked ? _mm256_maskload_ps(bk + 8, m1) : _mm256_loadu_ps(bk + 8);
    if (!kIndirect) _mm_prefetch(reinterpret_cast<const char*>(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      __m256 av = _mm256_broadcast_ss(kARows ? a + i * lda : a + i);
      acc0[i] = _mm256_fmadd_ps(av, b0, acc0[i]);
      if (H == 2) acc1[i] = _mm256_fmadd_ps(av, b1, acc1[i]);
    }
    a += kARows ? 1 : MR;
    if (!kIndirect) b += NR;
  }
  if constexpr (kFull) {
    const bool scale = alpha != 1.0f;
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
    for (int i = 0; i < M; ++i) {
      float* cr = c + i * ldc;
      __m256 r0 = scale ? _mm256_mul_ps(acc0[i], va) : acc0[i], r1 = scale ? _mm256_mul_ps(acc1[i], va) : acc1[i];
      if (beta != 0.0f) {  // beta == 0: C is write-only
        r0 = _mm256_fmadd_ps(_mm256_loadu_ps(cr), vb, r0);
        r1 = _mm256_fmadd_ps(_mm256_loadu_ps(cr + 8), vb, r1);
      }
      if (epi) {
        const float* bias = epi->per_row ? nullptr : epi->bias;
        const float* slope = epi->per_row ? nullptr : epi->slope;
        r0 = epilogue(r0, *epi, i, 0, 8, bias, epi->bias2, slope);
        r1 = epilogue(r1, *epi, i, 8, 8, bias ? bias + 8 : nullptr, epi->bias2 ? epi->bias2 + 8 : nullptr,
                      slope ? slope + 8 : nullptr);
      }
      _mm256_storeu_ps(cr, r0);
      _mm256_storeu_ps(cr + 8, r1);
    }
    return;
  }
  // Partial tiles: C, bias and slope columns go through padded local copies.
  const bool full = n == NR;
  alignas(32) float tile[M][NR];
  alignas(32) float bias_pad[NR], bias2_pad[NR], slope_pad[NR];
  const float* bias_cols = nullptr;
  const float* slope_cols = nullptr;
  const float* bias2_cols = epi ? pad_columns(epi->bias2, n, full, bias2_pad) : nullptr;
  if (epi && !epi->per_row) {
    bias_cols = pad_columns(epi->bias, n, full, bias_pad);
    slope_cols = pad_columns(epi->slope, n, full, slope_pad);
  }
  const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#pragma GCC unroll 8
  for (int i = 0; i < M; ++i) {
    float* cr = full ? c + i * ldc : tile[i];
    if (!full && beta != 0.0f) std::memcpy(tile[i], c + i * ldc, n * sizeof(float));
    __m256 r0 = _mm256_mul_ps(acc0[i], va), r1 = _mm256_mul_ps(acc1[i], va);
    if (beta != 0.0f) {  // beta == 0: C is write-only
      r0 = _mm256_fmadd_ps(_mm256_loadu_ps(cr), vb, r0);
      if (H == 2) r1 = _mm256_fmadd_ps(_mm256_loadu_ps(cr + 8), vb, r1);
    }
    if (epi) {
      const int valid0 = n >= 8 ? 8 : static_cast<int>(n), valid1 = n >= NR ? 8 : n > 8 ? static_cast<int>(n - 8) : 0;
      r0 = epilogue(r0, *epi, i, 0, valid0, bias_cols, bias2_cols, slope_cols);
      if (H == 2)
        r1 = epilogue(r1, *epi, i, 8, valid1, bias_cols ? bias_cols + 8 : nullptr,
                      bias2_cols ? bias2_cols + 8 : nullptr, slope_cols ? slope_cols + 8 : nullptr);
    }
    _mm256_storeu_ps(cr, r0);
    if (H == 2) _mm256_storeu_ps(cr + 8, r1);
    if (!full) std::memcpy(c + i * ldc, tile[i], n * sizeof(float));
  }
}

template <int M>
void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n, float alpha, float beta,
            const TileEpi* epi) {
  if (n == NR) kernel_body<M, false, 2, false, false, true>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi);
  else kernel_body<M, false>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi);
}
template <int M>
void kernel_ib(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc, int64_t n,
               float alpha, float beta, const TileEpi* epi) {
  if (n == NR) kernel_body<M, true, 2, false, false, true>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
  else kernel_body<M, true, 2, false, true>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
}
template <int M>
void kernel_ib_half(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc, int64_t n,
                    float alpha, float beta, const TileEpi* epi) {
  kernel_body<M, true, 1, false, true>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
}

// n (1..8) floats of v to p; 8 with one store, 6 (the A sliver's rows) as 4 + 2.
inline void store_first(float* p, __m256 v, int n) {
  if (n == 8) return _mm256_storeu_ps(p, v);
  if (n == 6) {
    _mm_storeu_ps(p, _mm256_castps256_ps128(v));
    return _mm_storel_pi(reinterpret_cast<__m64*>(p + 4), _mm256_extractf128_ps(v, 1));
  }
  alignas(32) float tmp[8];
  _mm256_store_ps(tmp, v);
  std::memcpy(p, tmp, n * sizeof(float));
}

// Transposing pack, the AVX2 twin of the AVX-512 one (A stored M x K into
// 6-row slivers, lanes = 6; B stored N x K into 16-column slivers, lanes = 16):
// dst[k * stride + i] = src[i * ld + k]. Blocks of 8 source rows x 8 k are
// loaded (rows >= `rows` as zeros, k past kc masked off, so nothing past the
// rows' ends is read), transposed in registers (simd/transpose8_avx2.h), and
// each k column's share of the `lanes` is stored.
void pack_transposed(const float* src, int64_t ld, int rows, int64_t kc, float* dst, int stride, int lanes) {
  for (int r0 = 0; r0 < lanes; r0 += 8) {
    const int width = std::min(8, lanes - r0);
    for (int64_t k0 = 0; k0 < kc; k0 += 8) {
      const int kn = static_cast<int>(kc - k0 < 8 ? kc - k0 : 8);
      const __m256i kmask = _mm256_cmpgt_epi32(_mm256_set1_epi32(kn), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
      __m256 r[8], t[8];
      for (int i = 0; i < 8; ++i) {
        const float* row = src + (r0 + i) * ld + k0;
        r[i] = r0 + i >= rows ? _mm256_setzero_ps() : kn == 8 ? _mm256_loadu_ps(row) : _mm256_maskload_ps(row, kmask);
      }
      simd::transpose8x8(r, t);  // t[k]: rows r0..r0+7 at column k0 + k
      for (int k = 0; k < kn; ++k) store_first(dst + (k0 + k) * stride + r0, t[k], width);
    }
  }
}

// Tiles of at most 8 columns (N edges, e.g. the last 4 or 8 columns of an
// implicit-GEMM output row of 20, 40 or 52): one ymm per row, half the FMAs.
template <int M>
void kernel_half(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n, float alpha,
                 float beta, const TileEpi* epi) {
  kernel_body<M, false, 1>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi);
}

template <int M>
void kernel_arows(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc, int64_t n,
                  float alpha, float beta, const TileEpi* epi) {
  if (n * 2 <= NR) kernel_body<M, false, 1, true>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi, lda);
  else if (n == NR) kernel_body<M, false, 2, true, false, true>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi, lda);
  else kernel_body<M, false, 2, true>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi, lda);
}

template <int... Ms>
constexpr SgemmKernelSet make_set(std::integer_sequence<int, Ms...>) {
  return SgemmKernelSet{cpu::Isa::Avx2, MR, NR, 6 * 48, 256, 4096, {nullptr, &kernel<Ms + 1>...}, &pack_transposed, {nullptr, &kernel_ib<Ms + 1>...},
                        {nullptr, &kernel_half<Ms + 1>...}, {nullptr, &kernel_ib_half<Ms + 1>...}, true,
                        {nullptr, &kernel_arows<Ms + 1>...}};
}

}  // namespace

const SgemmKernelSet& sgemm_kernels_avx2() {
  static const SgemmKernelSet set = make_set(std::make_integer_sequence<int, MR>{});
  return set;
}

}  // namespace gemm
}  // namespace onnxmini
