// Portable SGEMM micro-kernels (no SIMD flags; the compiler vectorises the
// fixed-size j loops with baseline SSE2): a 4 x 8 register tile.
//
// Layout: A sliver a[k * 4 + i], B sliver b[k * 8 + j], C row-major (ldc).
// 4 x 8 accumulators = 8 xmm registers, leaving room for B and broadcasts.
// kernels[m] handles m rows; columns >= n are computed on padding and not stored.
#include <cmath>
#include <utility>

#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/simd/erf_scalar.h"

namespace onnxmini {
namespace gemm {
namespace {

constexpr int MR = 4;
constexpr int NR = 8;

inline float epilogue(float v, const TileEpi& e, int i, int64_t j) {
  if (e.bias) v += e.per_row ? e.bias[i] : e.bias[j];
  if (e.bias2) v += e.bias2[j];
  if (e.residual) v += e.residual[i * e.res_ld + j];
  switch (e.act) {
    case TileEpi::kRelu: return v > 0 ? v : 0.0f;
    case TileEpi::kClip: return std::fmin(std::fmax(v, e.lo), e.hi);
    case TileEpi::kSigmoid: return 1.0f / (1.0f + std::exp(-v));
    case TileEpi::kHardSigmoid: return std::fmax(0.0f, std::fmin(1.0f, e.ha * v + e.hb));
    case TileEpi::kHardSwish: return v * std::fmax(0.0f, std::fmin(1.0f, e.ha * v + e.hb));
    case TileEpi::kSwish: return v / (1.0f + std::exp(-(e.sa * v)));
    case TileEpi::kGelu: return simd::gelu_erf_scalar(v);
    case TileEpi::kGeluTanh: return simd::gelu_tanh_scalar(v);
    case TileEpi::kPRelu: return v < 0 ? v * (e.per_row ? e.slope[i] : e.slope[j]) : v;
    default: return v;
  }
}

// kIndirect: B row k is the NR floats at b + boff[k] (implicit GEMM on a
// convolution's padded input, full tiles only); otherwise the sliver b[k * NR + j].
template <int M, bool kIndirect>
void kernel_body(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc, int64_t n,
                 float alpha, float beta, const TileEpi* epi) {
  float acc[M][NR] = {};
  for (int64_t k = 0; k < kc; ++k) {
    const float* bk = kIndirect ? b + boff[k] : b + k * NR;
    for (int i = 0; i < M; ++i) {
      const float av = a[i];
      for (int j = 0; j < NR; ++j) acc[i][j] += av * bk[j];
    }
    a += MR;
  }
  for (int i = 0; i < M; ++i) {
    float* cr = c + i * ldc;
    for (int64_t j = 0; j < n; ++j) {
      float v = alpha * acc[i][j];
      if (beta != 0.0f) v += beta * cr[j];  // beta == 0: C is write-only
      cr[j] = epi ? epilogue(v, *epi, i, j) : v;
    }
  }
}

template <int M>
void kernel(int64_t kc, const float* a, const float* b, float* c, int64_t ldc, int64_t n, float alpha, float beta,
            const TileEpi* epi) {
  kernel_body<M, false>(kc, a, b, nullptr, c, ldc, n, alpha, beta, epi);
}
template <int M>
void kernel_ib(int64_t kc, const float* a, const float* b, const int64_t* boff, float* c, int64_t ldc, int64_t n,
               float alpha, float beta, const TileEpi* epi) {
  kernel_body<M, true>(kc, a, b, boff, c, ldc, n, alpha, beta, epi);
}

template <int... Ms>
constexpr SgemmKernelSet make_set(std::integer_sequence<int, Ms...>) {
  return SgemmKernelSet{cpu::Isa::Portable, MR, NR, 4 * 32, 256, 2048, {nullptr, &kernel<Ms + 1>...}, nullptr, {nullptr, &kernel_ib<Ms + 1>...}, {}, {}, false, {}};
}

}  // namespace

const SgemmKernelSet& sgemm_kernels_portable() {
  static const SgemmKernelSet set = make_set(std::make_integer_sequence<int, MR>{});
  return set;
}

}  // namespace gemm
}  // namespace onnxmini
