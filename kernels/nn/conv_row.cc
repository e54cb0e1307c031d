// conv1d_shifted_gemm: a 1-D Conv with stride 1 (and 1xK / Kx1 ones, which
// drop_unit_axes makes 1-D) as one GEMM per kernel tap, transposed.
//
// Layout. Output column o under tap k reads input column o + k * dilation -
// pad_begin, so tap k's operand is X's rows shifted by k * dilation - pad_begin: a
// cg x P block with row stride W, read in place; the output columns whose input
// column falls in the padding are left out of that tap's GEMM (its rows of C). With
// a fused input affine, X is first copied into a zero-padded row buffer xp (cg x
// Wp, Wp = pad_begin + W + pad_end) with the affine applied, and the taps read xp. The taps accumulate in the transposed orientation
//   C (P x mg) = sum_k xp_k^T (P x cg) * W[g][:, :, k]^T (cg x mg)      (beta = 1 after tap 0)
// because the output length P is the small side (ppocr_v4_rec's 1x3 layer: 40
// columns, 60 filters): the micro-kernel's 32-wide column tiles then run over the
// filters and its 14-row tiles over P, where the other orientation (the implicit
// GEMM) left most of a column tile empty. W's taps are packed once per layer as B
// panels (RowFilter); op(A) is xp_k with trans_a, packed by the GEMM per call.
// C (a scratch) is transposed into Y in blocks of 16 output channels with the
// Conv epilogue applied per Y row (conv1x1_transposed.h: transpose_with_epilogue).
#include "kernels/nn/conv_row.h"

#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/nn/conv1x1_transposed.h"

namespace onnxmini {
namespace nn {

std::shared_ptr<const RowFilter> pack_row_filter(const gemm::GemmEngine& engine, const float* w, int64_t M,
                                                 int64_t cg, int64_t taps, int64_t group) {
  auto f = std::make_shared<RowFilter>();
  f->M = M, f->cg = cg, f->taps = taps, f->group = group;
  const int64_t mg = M / group;
  std::vector<float> tap(static_cast<size_t>(mg * cg));  // W[g][:, :, k] as mg x cg
  for (int64_t grp = 0; grp < group; ++grp)
    for (int64_t k = 0; k < taps; ++k) {
      const float* wg = w + grp * mg * cg * taps;
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t c = 0; c < cg; ++c) tap[m * cg + c] = wg[(m * cg + c) * taps + k];
      f->packed.push_back(engine.pack_b(true, cg, mg, tap.data(), cg));  // op(B) = tap^T
    }
  return f;
}

// Measured against conv1d_implicit_gemm and conv1d_im2col (Xeon AVX-512, 1 thread,
// forced variants interleaved, load ~11 on 2 cores; docs/performance.md "1x1 Conv on
// small images and 1xK Conv"): ppocr_v4_rec's 960 -> 60 1x3 over 40 columns im2col
// 262, implicit 168, shifted 119 us; silero's 129 -> 128 over 4 columns, batch 4, im2col
// 65 -> 26 us; 128 ch over 16 columns 25 -> 18 us; 256 ch 5 taps over 200 columns
// implicit 869 -> 791 us. Longer rows lost (128 ch over 400 columns 232 -> 261 us,
// magika's 256 -> 512 5x1 over 512 rows 8.3 -> 11.6 ms), as did 64 channels over
// 100 columns (24 -> 26 us): there the implicit GEMM's column tiles are full.
constexpr int64_t kRowMaxOutputsFewChannels = 64;
constexpr int64_t kRowMaxOutputs = 256;
constexpr int64_t kRowManyChannels = 128;

bool row_conv_wins(const ConvGeom& g) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group, P = g.win.out[0];
  if (g.win.kernel[0] < 2 || mg < 32 || cg < 32) return false;
  return P <= kRowMaxOutputsFewChannels || (P <= kRowMaxOutputs && cg >= kRowManyChannels);
}

bool row_conv_fits(const ConvGeom& g, const RowFilter* f) {
  return f && g.win.rank == 1 && g.win.stride[0] == 1 && f->M == g.M && f->group == g.group &&
         f->cg == g.C / g.group && f->taps == g.win.kernel[0];
}

void conv1d_shifted(KernelContext& ctx, const ConvGeom& g, const float* x, const RowFilter& f,
                    const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  const Window win = lift_to_2d(g.win);  // pad_input's layout: one row, stride 1, so Wq = Wp
  const int64_t cg = g.C / g.group, mg = g.M / g.group, P = g.win.out[0], IP = g.win.in[0];
  const int64_t pb = g.win.pad_begin[0], dil = g.win.dilation[0];
  const PaddedLayout L = padded_layout(win);
  // Without an input affine the taps read X itself: tap k covers the output columns
  // whose input column o + k * dil - pb lies inside the row, and C starts at 0 (the
  // padding's contribution). With one, X goes through the padded copy.
  const bool in_place = !affine;
  Tensor xp_t = in_place ? Tensor() : ctx.scratch(DType::Float32, {cg * L.channel()});
  Tensor c_t = ctx.scratch(DType::Float32, {P, mg});
  float *xp = in_place ? nullptr : xp_t.mutable_data<float>(), *c = c_t.mutable_data<float>();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const float* xg = x + (n * g.C + grp * cg) * IP;
      if (in_place) std::fill(c, c + P * mg, 0.0f);
      else pad_input(win, L, xg, grp * cg, cg, affine, xp, ctx.threads());
      for (int64_t k = 0; k < f.taps; ++k) {
        gemm::SgemmArgs a;
        a.trans_a = true, a.K = cg, a.N = mg, a.ldc = mg;
        if (in_place) {
          const int64_t shift = k * dil - pb;  // input column of output column 0
          const int64_t o0 = std::clamp<int64_t>(-shift, 0, P), o1 = std::clamp<int64_t>(IP - shift, o0, P);
          if (o1 == o0) continue;
          a.M = o1 - o0, a.A = xg + o0 + shift, a.lda = IP, a.C = c + o0 * mg, a.beta = 1.0f;
        } else {
          a.M = P, a.A = xp + k * dil, a.lda = L.Wq, a.C = c, a.beta = k == 0 ? 0.0f : 1.0f;
        }
        ctx.gemm().sgemm_packed(a, *f.packed[grp * f.taps + k], ctx.threads());
      }
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
