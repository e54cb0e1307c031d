// Internal interface between the builtin SGEMM driver (gemm_builtin.cc) and its
// register-blocked micro-kernels (sgemm_kernel_{avx512,avx2,portable}.cc).
//
// Packed formats (written by the driver, read by the kernels):
//   A sliver: MR rows x kc, stored k-major: a[k * MR + i], rows >= m zero/unused.
//   B sliver: kc x NR columns, stored k-major: b[k * NR + j], columns >= n zero.
// A kernel instance kernels[m] (1 <= m <= MR) reads m rows of its A sliver, the
// whole B sliver, and writes the m x n tile at c (row stride ldc), n <= NR:
//   c = alpha * acc + beta * c     (beta == 0: c is not read)
// then, when epi != nullptr (last K block), bias + activation (TileEpi).
#pragma once
#include <cstdint>

#include "core/cpu_features.h"
#include "kernels/gemm_engine/gemm.h"

namespace onnxmini {
namespace gemm {
class GemmEngine;

// Epilogue for one tile; bias/slope already offset to the tile's first row
// (per_row) or first column, bias2 to the tile's first column, residual to the
// tile's top-left element.
struct TileEpi {
  enum Act { kNone = 0, kRelu, kClip, kSigmoid, kPRelu, kHardSigmoid, kHardSwish, kSwish, kGelu, kGeluTanh };
  const float* bias = nullptr;
  const float* bias2 = nullptr;  // per column, after bias
  const float* residual = nullptr;  // row i, column j at residual[i * res_ld + j]; after the biases
  int64_t res_ld = 0;
  const float* slope = nullptr;
  bool per_row = false;
  int act = kNone;
  float lo = 0, hi = 0;
  float ha = 0, hb = 0;  // HardSigmoid / HardSwish alpha, beta
  float sa = 1.0f;       // Swish: v * sigmoid(sa * v)
};

// The TileEpi of a whole call (bias / slope not yet offset to a tile).
inline TileEpi base_epi(const Epilogue& e) {
  TileEpi t;
  t.bias = e.bias;
  t.bias2 = e.bias2;
  t.residual = e.residual;
  t.res_ld = e.residual_ld;
  t.slope = e.prelu_slope;
  t.per_row = e.bias_per_row;
  t.lo = e.clip_min;
  t.hi = e.clip_max;
  t.ha = e.hard_alpha;
  t.hb = e.hard_beta;
  t.sa = e.swish_alpha;
  switch (e.activation) {
    case Epilogue::Activation::None: t.act = TileEpi::kNone; break;
    case Epilogue::Activation::Relu: t.act = TileEpi::kRelu; break;
    case Epilogue::Activation::Clip: t.act = TileEpi::kClip; break;
    case Epilogue::Activation::Sigmoid: t.act = TileEpi::kSigmoid; break;
    case Epilogue::Activation::PRelu: t.act = TileEpi::kPRelu; break;
    case Epilogue::Activation::HardSigmoid: t.act = TileEpi::kHardSigmoid; break;
    case Epilogue::Activation::HardSwish: t.act = TileEpi::kHardSwish; break;
    case Epilogue::Activation::Swish: t.act = TileEpi::kSwish; break;
    case Epilogue::Activation::Gelu: t.act = TileEpi::kGelu; break;
    case Epilogue::Activation::GeluTanh: t.act = TileEpi::kGeluTanh; break;
  }
  return t;
}

using SgemmMicroKernel = void (*)(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n,
                                  float alpha, float beta, const TileEpi* epi);

// The same tile with A read in place: row i of the tile is a + i * lda, k-th
// element a[i * lda + k] (row-major op(A)); B is a packed sliver; any n <= NR.
using SgemmARowsKernel = void (*)(int64_t kc, const float* a, int64_t lda, const float* b, float* c, int64_t ldc,
                                  int64_t n, float alpha, float beta, const TileEpi* epi);

// The same tile with B read in place: row k of the tile is the NR floats at
// b + boff[k] (implicit GEMM, e.g. a convolution reading its padded input).
// Full tiles only (n == NR) unless the set has ib_any_n; otherwise the driver
// packs edge tiles into a sliver.
using SgemmIndirectKernel = void (*)(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c,
                                     int64_t ldc, int64_t n, float alpha, float beta, const TileEpi* epi);

constexpr int kMaxMR = 16;

// Transposing pack: dst[k * stride + i] = src[i * ld + k] for i < rows, k < kc;
// lanes [rows, lanes) of each k group are written as zero (rows <= lanes <= 16).
using PackTransposed = void (*)(const float* src, int64_t ld, int rows, int64_t kc, float* dst, int stride, int lanes);

struct SgemmKernelSet {
  cpu::Isa isa;
  int mr, nr;           // register tile
  int64_t mc, kc, nc;   // cache blocks (multiples of mr / nr)
  SgemmMicroKernel kernels[kMaxMR + 1];  // kernels[m] handles m rows, 1..mr
  PackTransposed pack_t;  // SIMD transposing pack, or nullptr for the scalar one
  SgemmIndirectKernel kernels_ib[kMaxMR + 1];  // kernels_ib[m]: m rows, B read in place
  // Optional (null when the ISA has none): tiles of at most NR / 2 columns at half the
  // cost, and in-place B for them.
  SgemmMicroKernel kernels_half[kMaxMR + 1];
  SgemmIndirectKernel kernels_ib_half[kMaxMR + 1];
  bool ib_any_n;  // kernels_ib(_half) mask their loads: any n up to the width, no packing of edges
  // Optional: kernels_arows[m], A read in place (skinny GEMMs, N <= NR, see gemm_builtin.cc).
  SgemmARowsKernel kernels_arows[kMaxMR + 1];
  // Optional: one row of A against row_panel_count consecutive full packed panels
  // (n = row_panel_count * nr), the panels read side by side: [1, K] x [K, N] products.
  SgemmMicroKernel row_panels = nullptr;
  int row_panel_count = 0;
};

const SgemmKernelSet& sgemm_kernels_portable();
const SgemmKernelSet& sgemm_kernels_avx2();    // only call when cpu::hw_has_avx2_fma()
const SgemmKernelSet& sgemm_kernels_avx512();  // only call when cpu::hw_has_avx512()

// The kernel set for an ISA level (capped by what the hardware has).
const SgemmKernelSet& sgemm_kernels_for(cpu::Isa isa);

// The builtin engine pinned to one ISA path (tests, benchmarks). builtin_engine()
// uses cpu::active_isa().
const GemmEngine& builtin_engine_for(cpu::Isa isa);
const GemmEngine& builtin_engine();

}  // namespace gemm
}  // namespace onnxmini
