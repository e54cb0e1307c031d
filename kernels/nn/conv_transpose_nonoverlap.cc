// conv_transpose_nonoverlap: ConvTranspose with kernel == stride (2x2 stride 2
// upsampling heads, 1x1 stride 1, ...), dilation 1, 1-D or 2-D, float32.
//
// Every output pixel receives at most one (input pixel, tap) product sum, so
// the col2im scatter-add of the general path (fill Y with the bias, write the
// whole col matrix, read it back and add it into Y) becomes a plain store.
//
// Layout and blocking. Per image n and group, col = W[g]^T X[n, g] has one row
// per (m, kh, kw) (M/group * KH * KW rows) and one column per input pixel
// (ih, iw). The input rows are cut into blocks so that a block's col (rows x
// block pixels floats) stays in L2 (~256 KiB); each block is one GEMM into a
// per-thread buffer, then written out while hot: row (m, kh, kw), input row ih
// -> output row ih * SH - pad_h + kh, column iw * SW - pad_w + kw, plus the
// bias. For a fully covered row (no crop) with KW = 2 the KW rows of a tap row
// are interleaved (a loop the compiler vectorises); other widths store strided.
// Output pixels no product reaches (output_padding, output_shape larger than
// the scattered extent) are filled with the bias first.
// Threads split the (image, group, row block) tasks; each GEMM is single-threaded.
#include <algorithm>
#include <vector>

#include "core/aligned_vector.h"
#include "core/thread_pool.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/nn/conv_transpose.h"
#include "kernels/nn/spatial.h"

namespace onnxmini {
namespace nn {
namespace {

// The per-thread col block (grown, never shrunk: no allocation per run once warmed up).
thread_local AlignedVector<float> t_col;

// One axis of the 2-D view (a 1-D layer is 2-D with a unit H axis).
struct Axis {
  int64_t in, k, pad, out;
};

// dst[iw * KW + kw] = src[kw * ld + iw] + b for iw < n: one fully covered output
// row. KW is a compile-time constant so the compiler can vectorise the interleave.
template <int KW>
void write_covered_row(const float* src, int64_t ld, int64_t n, float b, float* dst) {
  if constexpr (KW == 1) {
    for (int64_t i = 0; i < n; ++i) dst[i] = src[i] + b;
  } else if constexpr (KW == 2) {
    const float* s0 = src;
    const float* s1 = src + ld;
    for (int64_t i = 0; i < n; ++i) {
      dst[2 * i] = s0[i] + b;
      dst[2 * i + 1] = s1[i] + b;
    }
  } else {
    for (int kw = 0; kw < KW; ++kw)
      for (int64_t i = 0; i < n; ++i) dst[i * KW + kw] = src[kw * ld + i] + b;
  }
}

// The same with bounds: column iw * k - pad + kw kept where inside [0, out).
void write_cropped_row(const float* src, int64_t ld, const Axis& w, float b, float* dst) {
  for (int64_t kw = 0; kw < w.k; ++kw) {
    // iw with 0 <= iw * k - pad + kw < out
    const int64_t off = kw - w.pad;
    const int64_t lo = std::max<int64_t>(0, off >= 0 ? 0 : (-off + w.k - 1) / w.k);
    const int64_t hi = std::min<int64_t>(w.in, w.out - off <= 0 ? 0 : (w.out - off + w.k - 1) / w.k);
    for (int64_t iw = lo; iw < hi; ++iw) dst[iw * w.k + off] = src[kw * ld + iw] + b;
  }
}

}  // namespace

bool convt_nonoverlap_fits(const TGeom& g) {
  const size_t r = g.in.size();
  if (r < 1 || r > 2) return false;
  for (size_t d = 0; d < r; ++d)
    if (g.kernel[d] != g.stride[d] || g.dilation[d] != 1) return false;
  return true;
}

void convt_nonoverlap(KernelContext& ctx, const TGeom& g, const float* x, const float* w, const float* bias, float* y) {
  const bool two_d = g.in.size() == 2;
  const Axis ah{two_d ? g.in[0] : 1, two_d ? g.kernel[0] : 1, two_d ? g.pad_begin[0] : 0, two_d ? g.out[0] : 1};
  const Axis aw{g.in.back(), g.kernel.back(), g.pad_begin.back(), g.out.back()};
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const int64_t IP = ah.in * aw.in, KP = ah.k * aw.k, OP = ah.out * aw.out, rows = mg * KP;
  // Whether the scattered outputs tile Y exactly (no crop, no uncovered border).
  const bool cover_h = ah.pad == 0 && ah.out == ah.in * ah.k, cover_w = aw.pad == 0 && aw.out == aw.in * aw.k;
  if (!cover_h || !cover_w)
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t m = 0; m < g.M; ++m)
        std::fill(y + (n * g.M + m) * OP, y + (n * g.M + m + 1) * OP, bias ? bias[m] : 0.0f);
  if (IP == 0 || rows == 0 || g.N == 0) return;  // an empty input: the bias (or nothing) is the output
  // Input rows per block: the col block within ~256 KiB, and at least one block per thread.
  const int threads = ctx.threads() ? ctx.threads()->num_threads() : 1;
  int64_t block_rows = std::max<int64_t>(1, (64 << 10) / std::max<int64_t>(1, rows * aw.in));
  const int64_t per_image = g.N * g.group;
  if (per_image < threads) block_rows = std::min(block_rows, std::max<int64_t>(1, ah.in * per_image / threads));
  block_rows = std::min(block_rows, ah.in);
  const int64_t blocks = (ah.in + block_rows - 1) / block_rows;
  const gemm::GemmEngine& engine = ctx.gemm();
  parallel_for(ctx.threads(), per_image * blocks, 1, [&](int64_t t0, int64_t t1) {
    const size_t need = static_cast<size_t>(rows * block_rows * aw.in);
    if (t_col.size() < need) t_col.resize(need);
    float* col = t_col.data();
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t img_grp = t / blocks, n = img_grp / g.group, grp = img_grp % g.group;
      const int64_t ih0 = (t % blocks) * block_rows, nrows = std::min(block_rows, ah.in - ih0);
      const int64_t ld = nrows * aw.in;  // col's row length: this block's input pixels
      gemm::SgemmArgs a;
      a.trans_a = true, a.M = rows, a.N = ld, a.K = cg;
      a.A = w + grp * cg * rows, a.lda = rows;
      a.B = x + (n * g.C + grp * cg) * IP + ih0 * aw.in, a.ldb = IP;
      a.C = col, a.ldc = ld;
      engine.sgemm(a, nullptr);
      for (int64_t mm = 0; mm < mg; ++mm) {
        const int64_t m = grp * mg + mm;
        const float b = bias ? bias[m] : 0.0f;
        float* ym = y + (n * g.M + m) * OP;
        for (int64_t kh = 0; kh < ah.k; ++kh) {
          // col rows (m, kh, 0..KW-1), KW consecutive rows of ld floats
          const float* src = col + ((mm * ah.k + kh) * aw.k) * ld;
          for (int64_t r = 0; r < nrows; ++r, src += aw.in) {
            const int64_t oh = (ih0 + r) * ah.k - ah.pad + kh;
            if (oh < 0 || oh >= ah.out) continue;
            float* dst = ym + oh * aw.out;
            if (!cover_w) write_cropped_row(src, ld, aw, b, dst);
            else if (aw.k == 2) write_covered_row<2>(src, ld, aw.in, b, dst);
            else if (aw.k == 1) write_covered_row<1>(src, ld, aw.in, b, dst);
            else if (aw.k == 4) write_covered_row<4>(src, ld, aw.in, b, dst);
            else write_cropped_row(src, ld, aw, b, dst);  // other widths: strided stores, no crop
          }
        }
      }
    }
  });
}

}  // namespace nn
}  // namespace onnxmini
