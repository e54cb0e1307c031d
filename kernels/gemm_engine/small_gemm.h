// Small-matrix batched SGEMM (attention scores / context, einsum batch products):
// C_b = alpha * op(A_b) * op(B_b) + beta * C_b for b < batch, every operand read and
// written in place through its leading dimension and batch stride (0 broadcasts).
//
// Why a separate path: for tiny products (8 x 8 x 64, 24 of them) the packed engine
// spends as much time packing B (a 16 x 16 SIMD transpose per K block, half of it on
// zero columns) as multiplying, and its 14 x 32 tile is mostly empty. Here nothing is
// packed and the register tile is sized to the matrix:
//   op(B) = B (K x N rows):  a broadcast kernel, RB rows x (CV vectors of columns);
//                            each k loads one B row segment (masked at the N edge)
//                            and broadcasts A[i, k] (A or A^T, read in place).
//   op(B) = B^T, A not transposed, few rows (AVX-512): a dot kernel, TR rows of A x
//                            TC rows of B held as TR * TC vector accumulators along
//                            the contiguous K (masked K tail), folded by one
//                            transposing reduction into TR x TC sums per tile;
//                            otherwise B^T is transposed once per matrix (register
//                            transposes) and the broadcast kernel runs on it.
// A^T with B^T is not covered (neither operand contiguous along K).
#pragma once
#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"

namespace onnxmini {
namespace gemm {

// Computes `batch` products of args' shape; args.A / B / C are the first matrices.
// The caller has checked small_sgemm_fits(args).
using SmallSgemmFn = void (*)(const SgemmArgs& args, int64_t batch, const BatchStrides& strides);

// The register tile run() uses for args' shape: rows x cols of C, and whether it is the
// dot kernel's (B^T read in place) rather than the broadcast kernel's.
struct SmallTile {
  int rows = 0, cols = 0;
  bool dot = false;
};

struct SmallSgemm {
  SmallSgemmFn run;
  SmallTile (*tile)(const SgemmArgs& args);
};

// The cost rule: tiny enough that packing does not pay, measured against the packed
// engine on the Xeon (AVX-512 and AVX2 paths, docs/gemm.md "Small batched products"):
// N <= 64 (at most two panels of 2 vectors), K <= 512 (no K blocking), M <= 32, or
// M <= 64 unless B^T with K > 64 (transposing a long B^T per matrix then loses to the
// packed engine). No epilogue, and not A^T with B^T.
inline bool small_sgemm_fits(const SgemmArgs& g) {
  const bool e = g.epilogue.bias || g.epilogue.bias2 || g.epilogue.residual ||
                 g.epilogue.activation != Epilogue::Activation::None;
  if (e || (g.trans_a && g.trans_b) || g.M <= 0 || g.N <= 0 || g.K <= 0) return false;
  return g.N <= 64 && g.K <= 512 && (g.M <= 32 || (g.M <= 64 && (!g.trans_b || g.K <= 64)));
}

const SmallSgemm& small_sgemm_portable();
const SmallSgemm& small_sgemm_avx2();    // only call when cpu::hw_has_avx2_fma()
const SmallSgemm& small_sgemm_avx512();  // only call when cpu::hw_has_avx512()

}  // namespace gemm
}  // namespace onnxmini
