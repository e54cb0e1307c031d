// Builtin engine: packed, cache-blocked SGEMM in the GotoBLAS/BLIS structure.
//
//   for jc in N step NC          B panel  KC x NC  -> packed, lives in L3/L2
//     for pc in K step KC        (one pass over K per jc; C accumulates)
//       pack B[pc:pc+KC, jc:jc+NC] into NR-wide slivers   (b[k*NR + j])
//       for ic in M step MC      A block  MC x KC  -> packed, lives in L2
//         pack A[ic:ic+MC, pc:pc+KC] into MR-tall slivers (a[k*MR + i])
//         for jr in NC step NR   B sliver KC x NR stays in L1 ...
//           for ir in MC step MR ... while A slivers stream from L2
//             micro-kernel: MR x NR tile of C in registers, K loop of kc
//
// Block sizes (per ISA, in the kernel files; see docs/gemm.md for measurements).
// This machine (AMD EPYC Zen 5): 48 KiB L1d, 1 MiB L2 per core, 32 MiB L3.
//   AVX-512: MR x NR = 14 x 32 (28 zmm accumulators). KC = 512: a B sliver is
//            512*32*4 = 64 KiB, so it streams from L2 rather than sitting in
//            L1; measured, KC = 512 beat 256 (half the C load/store passes) and
//            Zen 5's L2 easily feeds 128 B + 56 B per 14-cycle k step.
//            MC = 112: A block 112*512*4 = 224 KiB, a quarter of L2.
//            NC = 4096: B panel 8 MiB, in L3.
//   AVX2:    6 x 16, KC = 256 (16 KiB B sliver in L1), MC = 288, NC = 4096
//            (insensitive: the AVX2 path runs at its FMA peak).
//   portable: 4 x 8, KC = 256, MC = 128, NC = 2048.
// Small A (M*K <= 128K floats, e.g. conv weights) is packed once for all K and
// shared by the threads; B panels are then 256 columns (KC x 256 in L2).
// The first K block applies beta (beta == 0: C is never read); later blocks
// accumulate with beta = 1; the last applies the epilogue inside the kernel.
//
// Threads: C is cut into a few rectangles aligned to MR/NR along its longer
// side; each task packs its own A and B, so every C element is computed by the
// same instruction sequence whatever the thread count (bit-identical results).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/gemm_engine/gemm.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/gemm_engine/small_gemm.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace gemm {
bool has_epilogue(const Epilogue& e);

namespace {

// ---- aligned scratch, one per thread and use, grown on demand ----
struct Scratch {
  float* p = nullptr;
  size_t cap = 0;
  ~Scratch() { std::free(p); }
  float* get(size_t n) {
    if (n > cap) {
      std::free(p);
      size_t bytes = (n * sizeof(float) + 63) / 64 * 64;
      p = static_cast<float*>(std::aligned_alloc(64, bytes));
      if (!p) throw std::bad_alloc();
      cap = bytes / sizeof(float);
    }
    return p;
  }
};
thread_local Scratch t_pack_a, t_pack_b;

int64_t round_up(int64_t x, int64_t m) { return (x + m - 1) / m * m; }

// ---- packing ----

// A sliver of at most this many rows (an RNN step's one-row A) is packed by the scalar loop:
// the SIMD transpose moves whole 16 x 16 blocks, mostly zeros then.
constexpr int kScalarPackRows = 2;

// A block rows [i0, i0+mc), cols [p0, p0+kc) of op(A) into MR-tall slivers,
// k-major: dst[s*kc*MR + k*MR + i]. Rows past mc in the last sliver are never read.
// R floats from each of kc rows of src (row stride ld) to dst (row stride stride).
template <int R>
void copy_rows(const float* src, int64_t ld, int64_t kc, float* dst, int64_t stride) {
  for (int64_t k = 0; k < kc; ++k) std::memcpy(dst + k * stride, src + k * ld, R * sizeof(float));
}

void pack_a(const SgemmKernelSet& ks, const SgemmArgs& g, int64_t i0, int64_t mc, int64_t p0, int64_t kc, float* dst) {
  const int mr = ks.mr;
  for (int64_t s = 0; s < mc; s += mr) {
    const int rows = static_cast<int>(std::min<int64_t>(mr, mc - s));
    float* d = dst + s * kc;
    if (g.trans_a) {  // A stored K x M: each k gives `rows` contiguous floats
      const float* src = g.A + p0 * g.lda + i0 + s;
      switch (rows) {  // full slivers (the kernel sets' MR: 14, 6, 4) as fixed-size copies, not a memcpy call per row
        case 14: copy_rows<14>(src, g.lda, kc, d, mr); break;
        case 6: copy_rows<6>(src, g.lda, kc, d, mr); break;
        case 4: copy_rows<4>(src, g.lda, kc, d, mr); break;
        default:
          for (int64_t k = 0; k < kc; ++k) std::memcpy(d + k * mr, src + k * g.lda, rows * sizeof(float));
      }
    } else if (ks.pack_t && rows > kScalarPackRows) {  // A stored M x K: a transpose, SIMD when the ISA has one
      ks.pack_t(g.A + (i0 + s) * g.lda + p0, g.lda, rows, kc, d, mr, mr);
    } else {  // scalar transpose in k-chunks, keeping both sides in cache
      const float* src = g.A + (i0 + s) * g.lda + p0;
      for (int64_t k0 = 0; k0 < kc; k0 += 16) {
        const int64_t k1 = std::min<int64_t>(kc, k0 + 16);
        for (int64_t i = 0; i < rows; ++i) {
          const float* r = src + i * g.lda;
          for (int64_t k = k0; k < k1; ++k) d[k * mr + i] = r[k];
        }
      }
    }
  }
}

// B block rows [p0, p0+kc), cols [j0, j0+nc) of op(B) into NR-wide slivers,
// k-major: dst[s*kc*NR + k*NR + j]; columns past nc are zero.
void pack_b(const SgemmKernelSet& ks, bool trans_b, const float* B, int64_t ldb, int64_t p0, int64_t kc, int64_t j0,
            int64_t nc, float* dst) {
  const int nr = ks.nr;
  for (int64_t s = 0; s < nc; s += nr) {
    const int64_t cols = std::min<int64_t>(nr, nc - s);
    float* d = dst + s * kc;
    if (!trans_b) {  // B stored K x N: each k gives `cols` contiguous floats
      const float* src = B + p0 * ldb + j0 + s;
      // Full slivers (the kernel sets' NR: 32, 16) as fixed-size copies: a memcpy call per
      // 64-byte row was 12% of a 16 -> 32 1x1 Conv on 160x160 (AVX2 path, AMD EPYC Zen 4).
      if (cols == nr && nr == 32) copy_rows<32>(src, ldb, kc, d, nr);
      else if (cols == nr && nr == 16) copy_rows<16>(src, ldb, kc, d, nr);
      else
        for (int64_t k = 0; k < kc; ++k) {
          std::memcpy(d + k * nr, src + k * ldb, cols * sizeof(float));
          if (cols < nr) std::memset(d + k * nr + cols, 0, (nr - cols) * sizeof(float));
        }
    } else if (ks.pack_t && nr % 16 == 0) {  // B stored N x K: SIMD transpose, 16 columns at a time
      for (int h = 0; h < nr; h += 16) {
        const int rows = static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(16, cols - h)));
        ks.pack_t(B + (j0 + s + h) * ldb + p0, ldb, rows, kc, d + h, nr, 16);
      }
    } else {  // scalar transpose in k-chunks
      const float* src = B + (j0 + s) * ldb + p0;
      if (cols < nr)
        for (int64_t k = 0; k < kc; ++k) std::memset(d + k * nr + cols, 0, (nr - cols) * sizeof(float));
      for (int64_t k0 = 0; k0 < kc; k0 += 16) {
        const int64_t k1 = std::min<int64_t>(kc, k0 + 16);
        for (int64_t j = 0; j < cols; ++j) {
          const float* r = src + j * ldb;
          for (int64_t k = k0; k < k1; ++k) d[k * nr + j] = r[k];
        }
      }
    }
  }
}

// ---- prepacked B: the whole K x N in the engine's panel format ----
// For each K block pc (size kc = min(KC, K - pc)): Npad/NR slivers of kc x NR,
// block base = pc * Npad. A column range starting at a multiple of NR is a
// contiguous run of slivers, exactly what the driver would have packed.
class BuiltinPackedB : public PackedB {
 public:
  BuiltinPackedB(const SgemmKernelSet& ks, bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb)
      : ks_(ks), K_(K), N_(N), npad_(round_up(N, ks.nr)) {
    data_ = static_cast<float*>(std::aligned_alloc(64, round_up(std::max<int64_t>(1, K * npad_) * 4, 64)));
    if (!data_) throw std::bad_alloc();
    for (int64_t pc = 0; pc < K; pc += ks.kc)
      pack_b(ks, trans_b, B, ldb, pc, std::min(ks.kc, K - pc), 0, N, data_ + pc * npad_);
  }
  ~BuiltinPackedB() override { std::free(data_); }
  int64_t K() const override { return K_; }
  int64_t N() const override { return N_; }
  const float* panel(int64_t pc, int64_t kc, int64_t jc) const { return data_ + pc * npad_ + jc * kc; }
  const SgemmKernelSet& ks_;

 private:
  int64_t K_, N_, npad_;
  float* data_ = nullptr;
};

// ---- the blocked loop nest over one rectangle of C ----

// The epilogue of the tile whose top-left element is C[row, col], built in `out`.
const TileEpi* tile_epi(const TileEpi& e0, int64_t row, int64_t col, TileEpi& out) {
  out = e0;
  const int64_t off = out.per_row ? row : col;
  if (out.bias) out.bias += off;
  if (out.slope) out.slope += off;
  if (out.bias2) out.bias2 += col;
  if (out.residual) out.residual += row * out.res_ld + col;
  return &out;
}

// A fully packed once (small A, shared by all tasks): for each K block pc,
// the MR slivers of all M rows, block base = pc * round_up(M, MR).
struct ALayout {
  const float* data = nullptr;
  int64_t mpad = 0;
};

// C[m0:m1, n0:n1] with the loop nest above. With `pa`, A comes prepacked
// (m0 a multiple of MR) and B panels are `nc` wide; otherwise nc = NC.
void gemm_rect(const SgemmKernelSet& ks, const SgemmArgs& g, const BuiltinPackedB* pb, const ALayout* pa,
               int64_t m0, int64_t m1, int64_t n0, int64_t n1, int64_t nc_block, bool last_block_first = false) {
  const bool epi_on = has_epilogue(g.epilogue);
  const TileEpi epi0 = base_epi(g.epilogue);
  const int mr = ks.mr, nr = ks.nr;
  const int64_t mc_block = ks.mc;
  float* abuf = pa ? nullptr : t_pack_a.get(static_cast<size_t>(std::min(ks.mc, round_up(m1 - m0, mr)) * ks.kc));
  float* bbuf = pb ? nullptr : t_pack_b.get(static_cast<size_t>(std::min(nc_block, round_up(n1 - n0, nr)) * ks.kc));
  const int64_t blocks = (n1 - n0 + nc_block - 1) / nc_block;
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t jc = n0 + (last_block_first ? blocks - 1 - b : b) * nc_block;
    const int64_t nc = std::min(nc_block, n1 - jc);
    for (int64_t pc = 0; pc < g.K; pc += ks.kc) {
      const int64_t kc = std::min(ks.kc, g.K - pc);
      const float beta = pc == 0 ? g.beta : 1.0f;
      const bool last = pc + kc >= g.K;
      const float* bp = pb ? pb->panel(pc, kc, jc) : bbuf;
      if (!pb) pack_b(ks, g.trans_b, g.B, g.ldb, pc, kc, jc, nc, bbuf);
      for (int64_t ic = m0; ic < m1; ic += mc_block) {
        const int64_t mc = std::min(mc_block, m1 - ic);
        const float* ap = pa ? pa->data + pc * pa->mpad + ic * kc : abuf;  // sliver of row ic
        if (!pa) pack_a(ks, g, ic, mc, pc, kc, abuf);
        // A one-row block takes row_panels over P full panels at once where it can (sgemm_kernel.h).
        const int64_t span = mc == 1 && ks.row_panels ? ks.row_panel_count * nr : 0;
        for (int64_t jr = 0; jr < nc;) {
          const bool panels = span > 0 && jr + span <= nc;
          const int64_t n = panels ? span : std::min<int64_t>(nr, nc - jr);
          const float* bs = bp + jr * kc;
          for (int64_t ir = 0; ir < mc; ir += mr) {
            const int m = static_cast<int>(std::min<int64_t>(mr, mc - ir));
            const int64_t row = ic + ir, col = jc + jr;
            TileEpi te;
            const TileEpi* tep = last && epi_on ? tile_epi(epi0, row, col, te) : nullptr;
            const SgemmMicroKernel kern = panels                                  ? ks.row_panels
                                          : n * 2 <= nr && ks.kernels_half[m] ? ks.kernels_half[m]
                                                                              : ks.kernels[m];
            kern(kc, ap + ir * kc, bs, g.C + row * g.ldc + col, g.ldc, n, g.alpha, beta, tep);
          }
          jr += panels ? span : nr;
        }
      }
    }
  }
}

// K == 0: C = beta * C, then the epilogue.
void scale_only(const SgemmArgs& g) {
  for (int64_t i = 0; i < g.M; ++i) {
    float* c = g.C + i * g.ldc;
    if (g.beta == 0) std::fill(c, c + g.N, 0.0f);
    else if (g.beta != 1) for (int64_t j = 0; j < g.N; ++j) c[j] *= g.beta;
    if (has_epilogue(g.epilogue)) apply_epilogue(g.epilogue, c, g.N, i, 0);
  }
}

int threads_of(ThreadPool* pool) { return pool ? pool->num_threads() : 1; }

// Threads pay off above 1 MFLOP; below, the hand-off costs more than it saves. (It was
// 2 * 128^3 = 4.2 MFLOP, from before the pool's spinning hand-off; re-measured on the AMD EPYC,
// AVX-512, 2 threads, 5 interleaved rounds: 40 x 120 x 360 14.5 -> 9.0 us, 32 x 128 x 128
// 5.0 -> 3.7 us; thresholds of 0.5 and 0.25 MFLOP changed no sweep shape further.)
// Except when B is large for its FLOPs (M small: an RNN step's [1, H] x [H, 4H] product,
// 1 MB of weights for 0.5 MFLOP): the product then streams B from L3 or memory, and split
// over N each core reads only its share, which the pool's thread-affine shares keep in that
// core's L2 from one call to the next (g2p_id_lstm_encoder: docs/performance.md "AMD EPYC").
constexpr double kParallelFlops = 1.0e6;
constexpr int64_t kParallelBBytes = 512 * 1024;
bool go_parallel(ThreadPool* pool, int64_t M, int64_t N, int64_t K) {
  return threads_of(pool) > 1 && sgemm_threads_pay(M, N, K);
}

// One thread streaming a B about the size of L2 (an RNN step's [1, H] x [H, 4H], 1 MiB at
// H = 256) call after call: in the same order each time, every panel has left the cache by
// the time it comes round again (LRU against a cyclic scan: no hits at all). Every other
// call on the thread walks the column blocks last to first, so it starts on the blocks the
// previous call read last, still in L2.
bool alternate_b_order(const SgemmArgs& g) {
  if (g.K * g.N * 4 < kParallelBBytes) return false;
  thread_local bool flip = false;
  flip = !flip;
  return flip;
}

// A at most this many floats (512 KiB, half of L2) is packed once up front and
// shared; B panels are then kResidentNC wide (KC x 256 floats, in L2) and C is
// split over N only. Typical for convolutions (M = Cout, K = Cin*kh*kw).
constexpr int64_t kResidentA = 128 * 1024;
constexpr int64_t kResidentNC = 256;

// Skinny GEMM (N <= NR, A not transposed, an A-in-place kernel): C is one
// column of tiles, so packing A (a transpose of every MR x KC block) would cost
// as much as the FMAs; the kernel broadcasts A straight from its rows instead
// (MR row streams, each read sequentially), B is one packed sliver per K block
// (prepacked, or packed once here), and threads split M in MR-row units.
// Typical: KMeans distances (N = clusters), classifier heads, N = 1 regressions.
// Tall GEMMs with a few column panels (N <= kInPlacePanels * NR, M of several
// row tiles) take the same path, panel after panel for each row tile: each A tile
// (MR rows x KC) is then read from L1 once per panel instead of transposed into a
// packed copy first (magika's [2048, 257] x [257, 64]).
constexpr int64_t kInPlacePanels = 4;
bool a_in_place(const SgemmKernelSet& ks, const SgemmArgs& g) {
  if (g.trans_a || !ks.kernels_arows[1]) return false;
  return g.N <= ks.nr || (g.N <= kInPlacePanels * ks.nr && g.M >= 4 * ks.mr);
}

void run_skinny(const SgemmKernelSet& ks, const SgemmArgs& g, const BuiltinPackedB* pb, ThreadPool* pool) {
  const int64_t npad = round_up(g.N, ks.nr);
  const float* bpack = nullptr;
  if (!pb) {
    float* buf = t_pack_b.get(static_cast<size_t>(g.K * npad));
    for (int64_t pc = 0; pc < g.K; pc += ks.kc)
      pack_b(ks, g.trans_b, g.B, g.ldb, pc, std::min(ks.kc, g.K - pc), 0, g.N, buf + pc * npad);
    bpack = buf;
  }
  const bool epi_on = has_epilogue(g.epilogue);
  const TileEpi epi0 = base_epi(g.epilogue);
  auto rows = [&](int64_t m0, int64_t m1) {
    for (int64_t pc = 0; pc < g.K; pc += ks.kc) {
      const int64_t kc = std::min(ks.kc, g.K - pc);
      const float beta = pc == 0 ? g.beta : 1.0f;
      const bool last = pc + kc >= g.K;
      for (int64_t i = m0; i < m1; i += ks.mr) {
        const int m = static_cast<int>(std::min<int64_t>(ks.mr, m1 - i));
        for (int64_t jc = 0; jc < g.N; jc += ks.nr) {
          const float* b = pb ? pb->panel(pc, kc, jc) : bpack + pc * npad + jc * kc;
          TileEpi te;
          const TileEpi* tep = last && epi_on ? tile_epi(epi0, i, jc, te) : nullptr;
          ks.kernels_arows[m](kc, g.A + i * g.lda + pc, g.lda, b, g.C + i * g.ldc + jc, g.ldc,
                              std::min<int64_t>(ks.nr, g.N - jc), g.alpha, beta, tep);
        }
      }
    }
  };
  const int64_t units = (g.M + ks.mr - 1) / ks.mr;
  const bool parallel = go_parallel(pool, g.M, g.N, g.K);
  if (!parallel) return rows(0, g.M);
  // About 4 tasks per thread; each covers whole MR-row units, so results do not depend on the split.
  const int64_t per = std::max<int64_t>(1, units / (4 * threads_of(pool))) * ks.mr;
  parallel_for(pool, (g.M + per - 1) / per, 1, [&](int64_t b, int64_t e) {
    for (int64_t x = b; x < e; ++x) rows(x * per, std::min(g.M, (x + 1) * per));
  });
}

// Runs the GEMM: small A -> shared packed A + tasks over N; otherwise C is
// split into rectangles along its longer side (units of MR rows or NR columns),
// about two per thread, each packing its own A and B.
void run(const SgemmKernelSet& ks, const SgemmArgs& g, const BuiltinPackedB* pb, ThreadPool* pool,
         const ALayout* prepacked_a = nullptr) {
  if (g.M <= 0 || g.N <= 0) return;
  if (g.K <= 0) return scale_only(g);
  if (!prepacked_a && a_in_place(ks, g)) return run_skinny(ks, g, pb, pool);
  const int t = threads_of(pool);
  const bool parallel = go_parallel(pool, g.M, g.N, g.K);
  if (prepacked_a || (g.M * g.K <= kResidentA && g.N > ks.nr)) {
    ALayout pa;
    if (prepacked_a) {
      pa = *prepacked_a;
    } else {
      pa.mpad = round_up(g.M, ks.mr);
      float* buf = t_pack_a.get(static_cast<size_t>(pa.mpad * g.K));
      // Packed in (K block, MR sliver) units, split over the threads when the product is:
      // packed by the caller alone, A was the serial part of every such call (ppocr_v4_rec's
      // 1x3 Conv taps, 40 x 960 A per 2.3 MFLOP tap: as long as the split FMAs at 2 threads).
      const int64_t slivers = pa.mpad / ks.mr, kblocks = (g.K + ks.kc - 1) / ks.kc;
      auto pack_units = [&](int64_t u0, int64_t u1) {
        for (int64_t u = u0; u < u1; ++u) {
          const int64_t pc = u / slivers * ks.kc, r = u % slivers * ks.mr;
          const int64_t kc = std::min(ks.kc, g.K - pc);
          pack_a(ks, g, r, std::min<int64_t>(ks.mr, g.M - r), pc, kc, buf + pc * pa.mpad + r * kc);
        }
      };
      if (parallel) parallel_for(pool, slivers * kblocks, 1, pack_units);
      else pack_units(0, slivers * kblocks);
      pa.data = buf;
    }
    if (!parallel) return gemm_rect(ks, g, pb, &pa, 0, g.M, 0, g.N, kResidentNC, alternate_b_order(g));
    const int64_t units = (g.N + ks.nr - 1) / ks.nr;
    const int64_t per = std::max<int64_t>(1, units / (4 * t)) * ks.nr;
    const int64_t tasks = (g.N + per - 1) / per;
    parallel_for(pool, tasks, 1, [&](int64_t b, int64_t e) {
      for (int64_t x = b; x < e; ++x) gemm_rect(ks, g, pb, &pa, 0, g.M, x * per, std::min(g.N, (x + 1) * per), kResidentNC);
    });
    return;
  }
  if (!parallel) return gemm_rect(ks, g, pb, nullptr, 0, g.M, 0, g.N, ks.nc);
  // Splitting N keeps B panels disjoint; prefer it unless M is clearly the longer side.
  // Prepacked B needs N splits at multiples of NR, which the unit below guarantees.
  const bool split_n = g.N >= g.M || g.M < 2 * ks.mr;
  const int64_t unit = split_n ? ks.nr : ks.mr;
  const int64_t len = split_n ? g.N : g.M;
  const int64_t units = (len + unit - 1) / unit;
  const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(units, 2 * t));
  const int64_t per = (units + parts - 1) / parts * unit;
  const int64_t tasks = (len + per - 1) / per;
  parallel_for(pool, tasks, 1, [&](int64_t b, int64_t e) {
    for (int64_t x = b; x < e; ++x) {
      const int64_t lo = x * per, hi = std::min(len, lo + per);
      if (split_n) gemm_rect(ks, g, pb, nullptr, 0, g.M, lo, hi, ks.nc);
      else gemm_rect(ks, g, pb, nullptr, lo, hi, 0, g.N, ks.nc);
    }
  });
}

// ---- prepacked A: op(A) for all K in the resident layout above ----
class BuiltinPackedA : public gemm::PackedA {
 public:
  BuiltinPackedA(const SgemmKernelSet& ks, bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda)
      : ks_(ks), M_(M), K_(K) {
    layout_.mpad = round_up(std::max<int64_t>(M, 1), ks.mr);
    data_ = static_cast<float*>(std::aligned_alloc(64, round_up(std::max<int64_t>(1, layout_.mpad * K) * 4, 64)));
    if (!data_) throw std::bad_alloc();
    SgemmArgs g;
    g.trans_a = trans_a, g.A = A, g.lda = lda, g.M = M, g.K = K;
    for (int64_t pc = 0; pc < K; pc += ks.kc) pack_a(ks, g, 0, M, pc, std::min(ks.kc, K - pc), data_ + pc * layout_.mpad);
    layout_.data = data_;
  }
  ~BuiltinPackedA() override { std::free(data_); }
  int64_t M() const override { return M_; }
  int64_t K() const override { return K_; }
  const ALayout& layout() const { return layout_; }
  const SgemmKernelSet& ks_;

 private:
  int64_t M_, K_;
  ALayout layout_;
  float* data_ = nullptr;
};

// ---- implicit GEMM: B read in place (convolution on a padded input) ----
// C is cut into column tiles of NR along each of the b.rows runs; a tile never
// crosses a run, so its B row k is the NR contiguous floats at
// base + k_offset[k] + r * row_stride + w0 and the micro-kernel loads them
// directly (kernels_ib), with no im2col matrix and no B packing. Edge tiles
// (n < NR) use the masked in-place kernels when the ISA has them (AVX-512:
// half-width for n <= 16, so a 112-wide row is 3 x 32 + 16 with no waste);
// otherwise they are packed into one zero-padded sliver for the normal kernel.
// Threads take whole groups of tiles, so results do not depend on the thread count.
void run_implicit(const SgemmKernelSet& ks, const SgemmArgs& g, const ALayout& pa, const ImplicitB& ib,
                  ThreadPool* pool) {
  const int64_t N = ib.rows * ib.row_len;
  if (g.M <= 0 || N <= 0) return;
  const int nr = ks.nr, mr = ks.mr;
  const bool epi_on = has_epilogue(g.epilogue);
  const TileEpi epi0 = base_epi(g.epilogue);
  const int64_t per_row = (ib.row_len + nr - 1) / nr;
  const int64_t tiles = ib.rows * per_row;
  const bool parallel = go_parallel(pool, g.M, N, g.K);
  // Tiles go in groups of kGroup: for each K block and MR-row sliver of A, the
  // group's tiles run back to back, so the A sliver (MR x KC, 28 KiB) stays in
  // L1 while the group's input windows come from L2.
  constexpr int64_t kGroup = 4;
  parallel_for(parallel ? pool : nullptr, (tiles + kGroup - 1) / kGroup, 1, [&](int64_t g0, int64_t g1) {
    float* edge = t_pack_b.get(static_cast<size_t>(ks.kc * nr * kGroup));
    for (int64_t grp = g0; grp < g1; ++grp) {
      const int64_t ta = grp * kGroup, tb = std::min(tiles, ta + kGroup);
      for (int64_t pc = 0; pc < g.K; pc += ks.kc) {
        const int64_t kc = std::min(ks.kc, g.K - pc);
        const float beta = pc == 0 ? g.beta : 1.0f;
        const bool last = pc + kc >= g.K;
        // Edge tiles without in-place kernels: pack their B once per K block.
        for (int64_t t = ta; t < tb; ++t) {
          const int64_t w0 = (t % per_row) * nr, n = std::min<int64_t>(nr, ib.row_len - w0);
          if (n == nr || ks.ib_any_n) continue;
          const float* bbase = ib.base + (t / per_row) * ib.row_stride + w0;
          float* e = edge + (t - ta) * ks.kc * nr;
          for (int64_t k = 0; k < kc; ++k) {
            std::memcpy(e + k * nr, bbase + ib.k_offset[pc + k], n * sizeof(float));
            std::memset(e + k * nr + n, 0, (nr - n) * sizeof(float));
          }
        }
        for (int64_t ic = 0; ic < g.M; ic += mr) {
          const int m = static_cast<int>(std::min<int64_t>(mr, g.M - ic));
          const float* a = pa.data + pc * pa.mpad + ic * kc;
          for (int64_t t = ta; t < tb; ++t) {
            const int64_t r = t / per_row, w0 = (t % per_row) * nr;
            const int64_t n = std::min<int64_t>(nr, ib.row_len - w0);
            const int64_t col = r * ib.row_len + w0;
            const bool in_place = n == nr || ks.ib_any_n;
            const bool half = n * 2 <= nr && ks.kernels_half[1] != nullptr;
            TileEpi te;
            const TileEpi* tep = last && epi_on ? tile_epi(epi0, ic, col, te) : nullptr;
            float* c = g.C + ic * g.ldc + col;
            if (in_place)
              (half ? ks.kernels_ib_half[m] : ks.kernels_ib[m])(kc, a, ib.base + r * ib.row_stride + w0,
                                                                 ib.k_offset + pc, c, g.ldc, n, g.alpha, beta, tep);
            else
              (half ? ks.kernels_half[m] : ks.kernels[m])(kc, a, edge + (t - ta) * ks.kc * nr, c, g.ldc, n, g.alpha,
                                                          beta, tep);
          }
        }
      }
    }
  });
}

// ---- double: a plain cache-blocked loop (not the focus) ----
// B block (256 x 512) is copied row-major into a scratch buffer; each row of C
// accumulates c[j] += a_ik * b[k][j] over it, a loop the compiler vectorises.
void dgemm_blocked(const DgemmArgs& g, ThreadPool* pool) {
  if (g.M <= 0 || g.N <= 0) return;
  constexpr int64_t KB = 256, NB = 512;
  parallel_for(pool, g.M, 16, [&](int64_t i0, int64_t i1) {
    std::vector<double> bblk(static_cast<size_t>(KB * NB));
    for (int64_t i = i0; i < i1; ++i) {
      double* c = g.C + i * g.ldc;
      if (g.beta == 0) std::fill(c, c + g.N, 0.0);
      else if (g.beta != 1) for (int64_t j = 0; j < g.N; ++j) c[j] *= g.beta;
    }
    for (int64_t j0 = 0; j0 < g.N; j0 += NB) {
      const int64_t nb = std::min(NB, g.N - j0);
      for (int64_t k0 = 0; k0 < g.K; k0 += KB) {
        const int64_t kb = std::min(KB, g.K - k0);
        for (int64_t k = 0; k < kb; ++k)
          for (int64_t j = 0; j < nb; ++j)
            bblk[k * nb + j] = g.trans_b ? g.B[(j0 + j) * g.ldb + k0 + k] : g.B[(k0 + k) * g.ldb + j0 + j];
        for (int64_t i = i0; i < i1; ++i) {
          double* c = g.C + i * g.ldc + j0;
          for (int64_t k = 0; k < kb; ++k) {
            const double av = g.alpha * (g.trans_a ? g.A[(k0 + k) * g.lda + i] : g.A[i * g.lda + k0 + k]);
            const double* b = &bblk[k * nb];
            for (int64_t j = 0; j < nb; ++j) c[j] += av * b[j];
          }
        }
      }
    }
  });
}

// The small-matrix routines of an ISA (small_gemm_{avx512,avx2,portable}.cc).
const SmallSgemm& small_for(cpu::Isa isa) {
  switch (isa) {
    case cpu::Isa::Avx512: return small_sgemm_avx512();
    case cpu::Isa::Avx2: return small_sgemm_avx2();
    default: return small_sgemm_portable();
  }
}

class BuiltinEngine : public GemmEngine {
 public:
  explicit BuiltinEngine(const SgemmKernelSet& ks) : ks_(ks), small_(small_for(ks.isa)) {}
  const char* name() const override { return "builtin"; }
  // Mirrors run()'s first decisions (keep the two in step).
  SgemmPath sgemm_path(const SgemmArgs& g, bool prepacked_b) const override {
    SgemmPath p;
    p.isa = cpu::isa_name(ks_.isa);
    p.mr = ks_.mr, p.nr = ks_.nr, p.mc = ks_.mc, p.kc = ks_.kc, p.nc = ks_.nc;
    if (g.M <= 0 || g.N <= 0 || g.K <= 0) p.route = SgemmRoute::Empty;
    else if (!g.trans_a && g.N <= ks_.nr && ks_.kernels_arows[1]) p.route = SgemmRoute::Skinny;
    else p.route = prepacked_b ? SgemmRoute::Prepacked : SgemmRoute::Packed;
    return p;
  }
  void sgemm(const SgemmArgs& a, ThreadPool* pool) const override { run(ks_, a, nullptr, pool); }
  void dgemm(const DgemmArgs& a, ThreadPool* pool) const override { dgemm_blocked(a, pool); }

  SgemmPath sgemm_batched_path(const SgemmArgs& g) const override {
    SgemmPath p = sgemm_path(g, false);
    if (p.route != SgemmRoute::Empty && small_sgemm_fits(g)) {
      p.route = SgemmRoute::Small;
      const SmallTile t = small_.tile(g);
      p.mr = t.rows, p.nr = t.cols, p.small_dot = t.dot;
      p.mc = p.kc = p.nc = 0;
    }
    return p;
  }

  // Tiny matrices (small_sgemm_fits): the small-matrix routine, tasks of whole
  // matrices worth at least ~128K flops each. Other small matrices: one whole GEMM
  // per task across the batch; large ones parallelise inside each GEMM instead.
  void sgemm_batched(const SgemmArgs& args, int64_t batch, const BatchStrides& s, ThreadPool* pool) const override {
    const double flops = 2.0 * args.M * args.N * args.K;
    if (batch > 0 && small_sgemm_fits(args)) {
      const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(131072.0 / flops));
      if (threads_of(pool) <= 1 || batch <= grain) return small_.run(args, batch, s);
      parallel_for(pool, batch, grain, [&](int64_t b0, int64_t b1) {
        SgemmArgs a = args;
        a.A = args.A + b0 * s.a;
        a.B = args.B + b0 * s.b;
        a.C = args.C + b0 * s.c;
        small_.run(a, b1 - b0, s);
      });
      return;
    }
    if (threads_of(pool) <= 1 || batch < 2 || flops > 2.0 * 192 * 192 * 192)
      return GemmEngine::sgemm_batched(args, batch, s, pool);
    parallel_for(pool, batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        SgemmArgs a = args;
        a.A = args.A + b * s.a;
        a.B = args.B + b * s.b;
        a.C = args.C + b * s.c;
        run(ks_, a, nullptr, nullptr);
      }
    });
  }

  std::shared_ptr<PackedB> pack_b(bool trans_b, int64_t K, int64_t N, const float* B, int64_t ldb) const override {
    return std::make_shared<BuiltinPackedB>(ks_, trans_b, K, N, B, ldb);
  }
  void sgemm_packed(const SgemmArgs& args, const PackedB& packed, ThreadPool* pool) const override {
    const auto* p = dynamic_cast<const BuiltinPackedB*>(&packed);
    if (!p) return GemmEngine::sgemm_packed(args, packed, pool);  // packed by another engine
    run(p->ks_, args, p, pool);
  }

  std::shared_ptr<gemm::PackedA> pack_a(bool trans_a, int64_t M, int64_t K, const float* A, int64_t lda) const override {
    return std::make_shared<BuiltinPackedA>(ks_, trans_a, M, K, A, lda);
  }
  void sgemm_packed_a(const SgemmArgs& args, const gemm::PackedA& packed, ThreadPool* pool) const override {
    const auto* p = dynamic_cast<const BuiltinPackedA*>(&packed);
    if (!p || &p->ks_ != &ks_) return GemmEngine::sgemm_packed_a(args, packed, pool);
    run(ks_, args, nullptr, pool, &p->layout());
  }
  void sgemm_implicit(const SgemmArgs& args, const gemm::PackedA* packed, const ImplicitB& b,
                      ThreadPool* pool) const override {
    const auto* p = dynamic_cast<const BuiltinPackedA*>(packed);
    if (packed && (!p || &p->ks_ != &ks_)) return GemmEngine::sgemm_implicit(args, packed, b, pool);
    if (p) return run_implicit(ks_, args, p->layout(), b, pool);
    if (args.K <= 0) return GemmEngine::sgemm_implicit(args, nullptr, b, pool);
    BuiltinPackedA local(ks_, args.trans_a, args.M, args.K, args.A, args.lda);
    run_implicit(ks_, args, local.layout(), b, pool);
  }

 private:
  const SgemmKernelSet& ks_;
  const SmallSgemm& small_;
};

}  // namespace

bool sgemm_threads_pay(int64_t M, int64_t N, int64_t K) {
  return 2.0 * M * N * K > kParallelFlops || K * N * 4 >= kParallelBBytes;
}

const SgemmKernelSet& sgemm_kernels_for(cpu::Isa isa) {
  if (isa == cpu::Isa::Avx512 && cpu::hw_has_avx512()) return sgemm_kernels_avx512();
  if (isa != cpu::Isa::Portable && cpu::hw_has_avx2_fma()) return sgemm_kernels_avx2();
  return sgemm_kernels_portable();
}

const GemmEngine& builtin_engine_for(cpu::Isa isa) {
  static const BuiltinEngine portable(sgemm_kernels_for(cpu::Isa::Portable));
  static const BuiltinEngine avx2(sgemm_kernels_for(cpu::Isa::Avx2));
  static const BuiltinEngine avx512(sgemm_kernels_for(cpu::Isa::Avx512));
  switch (isa) {
    case cpu::Isa::Avx512: return avx512;
    case cpu::Isa::Avx2: return avx2;
    default: return portable;
  }
}

const GemmEngine& builtin_engine() { return builtin_engine_for(cpu::active_isa()); }

}  // namespace gemm
}  // namespace onnxmini
