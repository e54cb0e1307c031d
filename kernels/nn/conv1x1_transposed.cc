// conv1x1_transposed: a plain 1x1 Conv on a small image as the transposed product.
//
// Layout. Per image n and group g the 1x1 Conv is Y[n, g] (mg x P) = W[g] (mg x cg)
// * X[n, g] (cg x P), P = H*W. With P small (7x7, 10x10 images) that GEMM has
// N = P columns: the micro-kernel's 32-column tiles run a padded edge tile (49
// columns as 32 + 32) while the large mg rows only pick the row tiles. Here the
// roles swap:
//   C (P x mg) = X[n, g]^T (P x cg) * W[g]^T (cg x mg)
// M = P rows, N = mg columns in full-width tiles; X^T is op(A) with trans_a (X
// read in place by the A packing), W^T is op(B), packed once per group at session
// creation (pack_conv1x1_transposed, constant filters) or per call. C is a
// scratch buffer, transposed into Y in blocks of 16 output channels (16
// consecutive floats of each C row per step: every read a run, every written Y
// row stays in L1), and the Conv epilogue (bias / PRelu per output channel, Z,
// activation) runs on each Y row right after its block is written.
#include "kernels/nn/conv1x1_transposed.h"

#include <algorithm>

#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {

// Where the transposed product wins (Xeon AVX-512 and AVX2 paths, 1 thread, forced
// variants interleaved; docs/performance.md "1x1 Conv on small images and 1xK Conv"):
// the GEMM on X wastes the part of its last 32-column tile past P, so the transposed
// product won where that waste is large - P = 36 (256 ch) 1.38x, 40 (960 -> 120) 1.41x,
// 49 (512) 1.37x, 100 (512 -> 256) 1.14x, 120 (480) 1.14x, 169 (768 -> 384) 1.09x - and
// tied or lost at P = 64, 96, 128, 256 (whole tiles) and P = 196; with 64 input channels
// (64 -> 128 at 144, 128 at 8x8 / 13x13) the transpose pass costs more than it saves.
constexpr int64_t kTransposedMaxPixels = 192;
constexpr int64_t kTransposedMinInputChannels = 128;
constexpr int64_t kTransposedMinOutputChannels = 64;

bool conv1x1_transposed_wins(const ConvGeom& g) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group, P = g.win.out_size();
  return P > 1 && P <= kTransposedMaxPixels && P % 32 != 0 && cg >= kTransposedMinInputChannels &&
         mg >= kTransposedMinOutputChannels;
}

std::vector<std::shared_ptr<gemm::PackedB>> pack_conv1x1_transposed(const gemm::GemmEngine& engine, const float* w,
                                                                    int64_t M, int64_t cg, int64_t group) {
  std::vector<std::shared_ptr<gemm::PackedB>> out;
  const int64_t mg = M / group;
  // op(B) = W[g]^T: cg x mg, stored as W[g] (mg x cg, row stride cg), i.e. trans_b.
  for (int64_t grp = 0; grp < group; ++grp) out.push_back(engine.pack_b(true, cg, mg, w + grp * mg * cg, cg));
  return out;
}

void transpose_with_epilogue(const float* c, int64_t P, int64_t mg, const gemm::Epilogue& e, float* y,
                             ThreadPool* pool) {
  constexpr int64_t kBlock = 16;
  const int64_t blocks = (mg + kBlock - 1) / kBlock;
  auto run = [&](int64_t b0, int64_t b1) {
    for (int64_t b = b0; b < b1; ++b) {
      const int64_t m0 = b * kBlock, m1 = std::min(mg, m0 + kBlock);
      for (int64_t p = 0; p < P; ++p) {
        const float* src = c + p * mg;
        for (int64_t m = m0; m < m1; ++m) y[m * P + p] = src[m];
      }
      for (int64_t m = m0; m < m1; ++m) gemm::apply_epilogue(e, y + m * P, P, m, 0);
    }
  };
  // The cost rule decides (docs/threads.md): ~20 flops per element with an activation in
  // the epilogue (SiLU's sigmoid), a read and a write of each. A fixed 64 K-element bar kept
  // the 10x10 x 256-channel layers (25 600 elements, ~10 us with SiLU) on one thread while
  // their GEMM split: ~16 % of those nodes' 2-thread time was this serial pass.
  const int64_t elems = P * mg;
  parallel_for(pool, blocks, 1, ParallelCost{elems * 20, elems * 8, elems * 4}, run);
}

void conv1x1_transposed(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                        const std::vector<std::shared_ptr<gemm::PackedB>>& wt, const gemm::Epilogue& epi, float* y) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group, P = g.win.out_size();
  Tensor ct = ctx.scratch(DType::Float32, {P, mg});
  float* c = ct.mutable_data<float>();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      gemm::SgemmArgs a;
      a.trans_a = true, a.M = P, a.K = cg, a.A = x + (n * g.C + grp * cg) * P, a.lda = P;
      a.trans_b = true, a.N = mg, a.B = w + grp * mg * cg, a.ldb = cg;
      a.C = c, a.ldc = mg;
      if (!wt.empty()) ctx.gemm().sgemm_packed(a, *wt[grp], ctx.threads());
      else ctx.gemm().sgemm(a, ctx.threads());
      const int64_t block = (n * g.M + grp * mg) * P;  // this image and group's rows of Y (and Z)
      gemm::Epilogue e = epi;
      e.bias_per_row = true;
      if (epi.bias) e.bias = epi.bias + grp * mg;
      if (epi.prelu_slope) e.prelu_slope = epi.prelu_slope + grp * mg;
      if (epi.residual) e.residual = epi.residual + block, e.residual_ld = P;
      transpose_with_epilogue(c, P, mg, e, y + block, ctx.threads());
    }
}

}  // namespace nn
}  // namespace onnxmini
