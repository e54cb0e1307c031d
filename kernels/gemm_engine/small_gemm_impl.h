// The small-matrix SGEMM (small_gemm.h) written once over a vector interface V,
// instantiated by small_gemm_avx512.cc (16 lanes) and small_gemm_avx2.cc (8 lanes).
//
// V provides: reg, mask, W (lanes); zero(), set1(f), load(p), loadz(p, m) (masked,
// zero fill), store(p, v), store_mask(p, m, v), fmadd(a, b, c), mul(a, b), tail(n)
// (first min(n, W) lanes, n >= 1), transpose(in[W], out[W]); kDot (whether the ISA has
// the dot kernel at all); the broadcast tile
// heights RB1 / RB2 / RB4 (rows of C held for one / two / four vectors of columns; RB4 0:
// no four-vector panel); the dot tile
// TR x TC and store_tile(acc, c, ldc, rows, cols, alpha, beta), which folds each
// accumulator acc[r * TC + c] to its sum and writes C[r, c] = alpha * sum + beta * C[r, c]
// for r < rows, c < cols (kDot only); kReduceOps / kTransposeOps, their instruction
// counts for the cost rule.
//
// Layout and blocking (all operands in place, row-major with leading dimensions):
//   broadcast kernel (op(B) = B): C is cut into column panels of 2W (or W at the edge;
//     one panel of 4W rows of RB4 when N is exactly 4W and the ISA has the registers)
//     and row blocks of RB2 (RB1) rows; per k the panel's B row segment is loaded
//     once (masked past N) and A[i, k] broadcast for each row, so each k step is
//     CV loads + R broadcasts for R * CV FMAs; the accumulators stay in registers
//     for the whole K loop (K <= 512: no K blocking needed, A and B stay in L1/L2).
//   dot kernel (op(B) = B^T, A row-major): TR rows of A and TC rows of B are walked
//     together along K, W floats at a time (the K tail masked), into TR * TC
//     accumulators; one transposing reduction per tile folds them. Rows / columns
//     past M / N at the edges repeat the last valid one and are not stored.
//   B^T with more rows of A (dot_pays says no; always on ISAs without kDot): B is
//     transposed once per matrix into
//     a thread-local K x round_up(N, W) buffer (W x W register transposes), then the
//     broadcast kernel runs on it, so the transpose is shared by all M rows.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "kernels/gemm_engine/small_gemm.h"

namespace onnxmini {
namespace gemm {
namespace {

// 64-byte aligned (each B row segment the broadcast kernel loads is then one cache
// line, not two), grown on demand and kept for the thread's later calls.
struct TransposeBuffer {
  float* p = nullptr;
  size_t cap = 0;
  ~TransposeBuffer() { std::free(p); }
  float* get(size_t n) {
    if (n > cap) {
      std::free(p);
      const size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      p = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!p) throw std::bad_alloc();
      cap = bytes / sizeof(float);
    }
    return p;
  }
};

template <class V>
struct SmallGemm {
  using reg = typename V::reg;
  using mask = typename V::mask;
  static constexpr int W = V::W;

  // One R x (CV * W) tile of C: A row r at a + r * lda (TA: column r at a + r, row k at
  // a + k * lda), B row k at b + k * ldb.
  template <int R, int CV, bool TA, bool kFull>
  static void bcast_tile(int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                         const mask* mk, float alpha, float beta) {
    reg acc[R][CV];
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) acc[r][v] = V::zero();
    for (int64_t k = 0; k < K; ++k) {
      reg bv[CV];
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) bv[v] = kFull ? V::load(b + k * ldb + v * W) : V::loadz(b + k * ldb + v * W, mk[v]);
#pragma GCC unroll 16
      for (int r = 0; r < R; ++r) {
        const reg av = V::set1(TA ? a[k * lda + r] : a[r * lda + k]);
#pragma GCC unroll 4
        for (int v = 0; v < CV; ++v) acc[r][v] = V::fmadd(av, bv[v], acc[r][v]);
      }
    }
    const reg va = V::set1(alpha), vb = V::set1(beta);
#pragma GCC unroll 16
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int v = 0; v < CV; ++v) {
        float* cp = c + r * ldc + v * W;
        reg out = alpha == 1.0f ? acc[r][v] : V::mul(acc[r][v], va);  // alpha 1 (einsum, MatMul): no multiply
        if (beta != 0.0f) out = V::fmadd(kFull ? V::load(cp) : V::loadz(cp, mk[v]), vb, out);  // beta 0: write-only
        if (kFull) V::store(cp, out);
        else V::store_mask(cp, mk[v], out);
      }
  }

  // `rows` (1..R) rows through the tile instance of that height.
  template <int R, int CV, bool TA, bool kFull>
  static void bcast_rows(int rows, int64_t K, const float* a, int64_t lda, const float* b, int64_t ldb, float* c,
                         int64_t ldc, const mask* mk, float alpha, float beta) {
    if constexpr (R > 1) {
      if (rows < R) return bcast_rows<R - 1, CV, TA, kFull>(rows, K, a, lda, b, ldb, c, ldc, mk, alpha, beta);
    }
    bcast_tile<R, CV, TA, kFull>(K, a, lda, b, ldb, c, ldc, mk, alpha, beta);
  }

  // A panel of CV vectors of columns; kFull: all CV * W columns live, plain loads and
  // stores (masked ones cost an extra uop on the FMA ports of some cores).
  template <int CV, bool TA, bool kFull>
  static void bcast_panel(const SgemmArgs& g, const float* A, const float* B, float* C, const mask* mk) {
    constexpr int RB = CV == 4 ? V::RB4 : CV == 2 ? V::RB2 : V::RB1;
    for (int64_t i0 = 0; i0 < g.M; i0 += RB) {
      const int rows = static_cast<int>(std::min<int64_t>(RB, g.M - i0));
      bcast_rows<RB, CV, TA, kFull>(rows, g.K, TA ? A + i0 : A + i0 * g.lda, g.lda, B, g.ldb, C + i0 * g.ldc, g.ldc, mk,
                                    g.alpha, g.beta);
    }
  }

  template <bool TA>
  static void bcast_matrix(const SgemmArgs& g, const float* A, const float* B, float* C) {
    if constexpr (V::RB4 > 0) {
      if (g.N == 4 * W) {  // one panel of 4 vectors: each A broadcast feeds 4 FMAs
        const mask mk[4] = {V::tail(W), V::tail(W), V::tail(W), V::tail(W)};
        return bcast_panel<4, TA, true>(g, A, B, C, mk);
      }
    }
    for (int64_t j0 = 0; j0 < g.N; j0 += 2 * W) {
      const int64_t n = std::min<int64_t>(2 * W, g.N - j0);
      const mask mk[2] = {V::tail(n), V::tail(n > W ? n - W : 1)};
      if (n == 2 * W) bcast_panel<2, TA, true>(g, A, B + j0, C + j0, mk);
      else if (n > W) bcast_panel<2, TA, false>(g, A, B + j0, C + j0, mk);
      else if (n == W) bcast_panel<1, TA, true>(g, A, B + j0, C + j0, mk);
      else bcast_panel<1, TA, false>(g, A, B + j0, C + j0, mk);
    }
  }

  static void dot_matrix(const SgemmArgs& g, const float* A, const float* B, float* C) {
    constexpr int TR = V::TR, TC = V::TC;
    const int64_t kfull = g.K / W * W;
    const mask kt = V::tail(g.K > kfull ? g.K - kfull : 1);
    for (int64_t i0 = 0; i0 < g.M; i0 += TR) {
      const float* ar[TR];
      for (int r = 0; r < TR; ++r) ar[r] = A + std::min<int64_t>(i0 + r, g.M - 1) * g.lda;
      const int rows = static_cast<int>(std::min<int64_t>(TR, g.M - i0));
      for (int64_t j0 = 0; j0 < g.N; j0 += TC) {
        const float* br[TC];
        for (int c = 0; c < TC; ++c) br[c] = B + std::min<int64_t>(j0 + c, g.N - 1) * g.ldb;
        reg acc[TR * TC];
#pragma GCC unroll 16
        for (int t = 0; t < TR * TC; ++t) acc[t] = V::zero();
        for (int64_t k = 0; k < kfull; k += W) dot_step<false>(ar, br, k, kt, acc);
        if (kfull < g.K) dot_step<true>(ar, br, kfull, kt, acc);
        V::store_tile(acc, C + i0 * g.ldc + j0, g.ldc, rows, static_cast<int>(std::min<int64_t>(TC, g.N - j0)),
                      g.alpha, g.beta);
      }
    }
  }

  template <bool kTail>
  static inline void dot_step(const float* const* ar, const float* const* br, int64_t k, mask kt, reg* acc) {
    constexpr int TR = V::TR, TC = V::TC;
    reg av[TR];
#pragma GCC unroll 8
    for (int r = 0; r < TR; ++r) av[r] = kTail ? V::loadz(ar[r] + k, kt) : V::load(ar[r] + k);
#pragma GCC unroll 8
    for (int c = 0; c < TC; ++c) {
      const reg bv = kTail ? V::loadz(br[c] + k, kt) : V::load(br[c] + k);
#pragma GCC unroll 8
      for (int r = 0; r < TR; ++r) acc[r * TC + c] = V::fmadd(av[r], bv, acc[r * TC + c]);
    }
  }

  // dst[k * ldt + j] = src[j * ld + k] for j < n, k < K, through W x W register
  // transposes (rows past n load as zeros; ldt is n rounded up to W, so full stores fit).
  static void transpose(const float* src, int64_t ld, int64_t n, int64_t K, float* dst, int64_t ldt) {
    for (int64_t j0 = 0; j0 < n; j0 += W) {
      const int rows = static_cast<int>(std::min<int64_t>(W, n - j0));
      for (int64_t k0 = 0; k0 < K; k0 += W) {
        const int kn = static_cast<int>(std::min<int64_t>(W, K - k0));
        const mask m = V::tail(kn);
        reg in[W], out[W];
        for (int i = 0; i < W; ++i) in[i] = i < rows ? V::loadz(src + (j0 + i) * ld + k0, m) : V::zero();
        V::transpose(in, out);
        for (int k = 0; k < kn; ++k) V::store(dst + (k0 + k) * ldt + j0, out[k]);
      }
    }
  }

  // Rough instruction counts of the two B^T strategies: dot tiles pay a reduction per
  // TR x TC outputs; transposing B once pays W x W shuffles per block, then the
  // broadcast kernel reuses it for every row of A. Large M favours the transpose.
  static bool dot_pays(const SgemmArgs& g) {
    if constexpr (!V::kDot) {
      (void)g;
      return false;
    } else {
      return dot_cost(g) <= transpose_cost(g);
    }
  }
  static int64_t dot_cost(const SgemmArgs& g) {
    const int64_t chunks = (g.K + W - 1) / W;
    const int64_t tiles = ((g.M + V::TR - 1) / V::TR) * ((g.N + V::TC - 1) / V::TC);
    return tiles * (chunks * (V::TR * V::TC + V::TR + V::TC) + V::kReduceOps);
  }
  static int64_t transpose_cost(const SgemmArgs& g) {
    const int64_t chunks = (g.K + W - 1) / W;
    const int64_t cv = g.N > W ? 2 : 1, rb = cv == 2 ? V::RB2 : V::RB1;
    const int64_t panels = (g.N + 2 * W - 1) / (2 * W);
    const int64_t bcast = panels * g.K * (((g.M + rb - 1) / rb) * cv + g.M * (1 + cv));
    return ((g.N + W - 1) / W) * chunks * (V::kTransposeOps + 2 * W) + bcast;
  }

  static SmallTile tile(const SgemmArgs& g) {
    if constexpr (V::kDot) {
      if (g.trans_b && dot_pays(g)) return SmallTile{V::TR, V::TC, true};
    }
    if constexpr (V::RB4 > 0) {
      if (g.N == 4 * W) return SmallTile{V::RB4, 4 * W, false};
    }
    return g.N > W ? SmallTile{V::RB2, 2 * W, false} : SmallTile{V::RB1, W, false};
  }

  static void run(const SgemmArgs& g, int64_t batch, const BatchStrides& s) {
    const bool dot = g.trans_b && dot_pays(g);
    float* bt = nullptr;  // B^T transposed, K x ldt, when the broadcast kernel runs on it
    SgemmArgs gt = g;
    if (g.trans_b && !dot) {
      gt.trans_b = false;
      gt.ldb = (g.N + W - 1) / W * W;
      thread_local TransposeBuffer buffer;  // grows once, reused by later calls on this thread
      bt = buffer.get(static_cast<size_t>(g.K * gt.ldb));
    }
    for (int64_t b = 0; b < batch; ++b) {
      const float* A = g.A + b * s.a;
      const float* B = g.B + b * s.b;
      float* C = g.C + b * s.c;
      if constexpr (V::kDot) {
        if (dot) {
          dot_matrix(g, A, B, C);
          continue;
        }
      }
      if (bt) {
        if (b == 0 || s.b != 0) transpose(B, g.ldb, g.N, g.K, bt, gt.ldb);  // a broadcast B is transposed once
        bcast_matrix<false>(gt, A, bt, C);
      } else if (g.trans_a) {
        bcast_matrix<true>(g, A, B, C);
      } else {
        bcast_matrix<false>(g, A, B, C);
      }
    }
  }
};

}  // namespace
}  // namespace gemm
}  // namespace onnxmini
