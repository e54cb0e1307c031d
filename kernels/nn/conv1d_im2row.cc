// conv1d_im2row_gemm: a 1-D Conv with few output positions per image as one
// transposed GEMM over the whole batch.
//
// Layout. The im2col GEMM computes, per image, Y[n] (M x P) = W (M x K) * col[n]
// (K x P), K = C * taps. With P = 1..16 output positions (silero's strided encoder
// layers: P = 1..5, batch 1..4) each image is one GEMM whose N = P columns fill a
// fraction of the micro-kernel's column tile, and im2col pays a per-row setup for
// K rows of P floats. Here the roles swap and the batch folds into the rows:
//   C (R x M) = rows (R x K) * W^T (K x M),  R = N * P,
// where row (n, p) of `rows` is the receptive field of output p of image n, laid
// out channel-major as a row of W (c * taps + t): x[n, c, p*s - pad + t*d], 0 in the
// padding. One GEMM with R rows and M columns in full-width vector tiles; W^T is
// packed once (constant filter, pack_im2row_filter). C is a scratch buffer, each
// image's P rows transposed into Y[n] (M x P) by transpose_with_epilogue, which
// applies bias, PRelu, Z and the activation per output channel while the rows are
// in L1. The rows matrix is R x K floats (the rule keeps it small).
#include "kernels/nn/conv1d_im2row.h"

#include <algorithm>
#include <cstring>

#include "kernels/nn/conv1x1_transposed.h"
#include "kernels/nn/conv_row.h"

namespace onnxmini {
namespace nn {

// Where it wins (Xeon AVX-512, and the AVX2 path on the same machine; 1 thread,
// interleaved; docs/performance.md "Small models: per-run costs"): silero's layers
// with 1..5 outputs per image, e.g. 128 -> 64 ch, 3 taps, stride 2 over 4 columns
// (P = 2) and 64 -> 64 over 2 columns (P = 1), batch 1 and 4, and the 256-tap
// stride-128 STFT front end (258 channels, P = 3 or 5). Few output channels leave
// W^T's column tiles mostly empty: the im2col GEMM keeps those. Stride-1 layers that
// conv1d_shifted takes stay there: it reads X in place and won on silero's 129 -> 128
// (P = 3: 5.3 vs 6.8 us; batch 4, P = 4: 19.7 vs 21.2 us) and 64 -> 128 over one
// column (2.4 vs 3.6 us).
constexpr int64_t kIm2rowMaxOutputs = 16;     // per image: the im2col GEMM's N
constexpr int64_t kIm2rowMinOutputChannels = 32;
constexpr int64_t kIm2rowMaxRowFloats = 64 * 1024;  // R * K: the rows matrix stays in L2

bool im2row_conv_wins(const ConvGeom& g) {
  if (g.win.rank != 1 || g.group != 1) return false;
  const int64_t P = g.win.out[0], K = g.C * g.win.kernel[0];
  // One tap: the 1x1 paths (the GEMM on X, conv1x1_gemv, conv1x1_transposed) need no copy.
  if (g.win.kernel[0] == 1 || (g.win.stride[0] == 1 && row_conv_wins(g))) return false;
  return P >= 1 && P <= kIm2rowMaxOutputs && g.M >= kIm2rowMinOutputChannels &&
         g.N * P * K <= kIm2rowMaxRowFloats;
}

bool im2row_conv_fits(const ConvGeom& g, const gemm::PackedB* wt, int64_t M, int64_t K) {
  return wt && g.win.rank == 1 && g.group == 1 && g.M == M && g.C * g.win.kernel[0] == K;
}

std::shared_ptr<gemm::PackedB> pack_im2row_filter(const gemm::GemmEngine& engine, const float* w, int64_t M,
                                                  int64_t K) {
  // op(B) = W^T: K x M, stored as W (M x K, row stride K), i.e. trans_b.
  return engine.pack_b(true, K, M, w, K);
}

namespace {

// rows (N*P x C*taps): row (n, p) = the taps of output p of image n, channel-major.
// The taps inside the row [t0, t1) are the same for every channel of one output.
void build_rows(const ConvGeom& g, const float* x, float* rows) {
  const Window& w = g.win;
  const int64_t L = w.in[0], P = w.out[0], taps = w.kernel[0], s = w.stride[0], d = w.dilation[0];
  const int64_t pb = w.pad_begin[0], K = g.C * taps;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t p = 0; p < P; ++p) {
      const int64_t first = p * s - pb;  // input column of tap 0
      // t in [t0, t1) <=> 0 <= first + t*d < L
      const int64_t t0 = first >= 0 ? 0 : std::min(taps, (-first + d - 1) / d);
      const int64_t t1 = first >= L ? t0 : std::max(t0, std::min(taps, (L - 1 - first) / d + 1));
      float* dst = rows + (n * P + p) * K;
      const float* src = x + n * g.C * L + first;
      for (int64_t c = 0; c < g.C; ++c, dst += taps, src += L) {
        std::fill(dst, dst + t0, 0.0f);
        if (d == 1) std::memcpy(dst + t0, src + t0, sizeof(float) * (t1 - t0));
        else
          for (int64_t t = t0; t < t1; ++t) dst[t] = src[t * d];
        std::fill(dst + t1, dst + taps, 0.0f);
      }
    }
}

}  // namespace

void conv1d_im2row(KernelContext& ctx, const ConvGeom& g, const float* x, const gemm::PackedB& wt,
                   const gemm::Epilogue& epi, float* y) {
  const int64_t P = g.win.out[0], K = g.C * g.win.kernel[0], R = g.N * P, M = g.M;
  Tensor rows_t = ctx.scratch(DType::Float32, {R, K});
  Tensor c_t = ctx.scratch(DType::Float32, {R, M});
  float* rows = rows_t.mutable_data<float>();
  float* c = c_t.mutable_data<float>();
  build_rows(g, x, rows);
  gemm::SgemmArgs a;
  a.M = R, a.K = K, a.A = rows, a.lda = K;
  a.trans_b = true, a.N = M, a.B = nullptr, a.ldb = K;  // B: the packed W^T
  a.C = c, a.ldc = M;
  ctx.gemm().sgemm_packed(a, wt, ctx.threads());
  for (int64_t n = 0; n < g.N; ++n) {
    gemm::Epilogue e = epi;
    e.bias_per_row = true;
    if (epi.residual) e.residual = epi.residual + n * M * P, e.residual_ld = P;
    transpose_with_epilogue(c + n * P * M, P, M, e, y + n * M * P, ctx.threads());
  }
}

}  // namespace nn
}  // namespace onnxmini
