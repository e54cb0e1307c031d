// The ISA-independent part of conv2d_lanes: where each output row's taps live
// (X in place, a padded copy, or per-task padded edge rows), the task split
// over (channel group, output row) and the strip buffer. The register tiles,
// the transposing store and the stride-2 pad are the ISA's (Kernel below):
// conv_lanes_avx512.cc and conv_lanes_avx2.cc each instantiate lanes_drive.
//
// Include only from those *_avx2.cc / *_avx512.cc files. Everything here is
// in an anonymous namespace so that each one gets its own copy, compiled with
// its own flags: a shared inline function could otherwise be merged by the
// linker into the AVX-512 copy and run on an AVX2-only CPU.
#pragma once
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/gemm_engine/sgemm_kernel.h"
#include "kernels/nn/conv_lanes.h"

namespace onnxmini {
namespace nn {
namespace {

// Where the taps of one image live: x[base + koff[k] + oh * rs + ow * cs].
struct InputView {
  const float* base;
  std::vector<int64_t> koff;
  int64_t rs, cs;
};

InputView input_view(const ConvGeom& g, bool padded, const PaddedLayout& L) {
  const Window& win = g.win;
  const int64_t KH = win.kernel[0], KW = win.kernel[1], W = win.in[1];
  InputView v;
  v.base = nullptr;
  v.koff.resize(static_cast<size_t>(g.C * KH * KW));
  for (int64_t c = 0; c < g.C; ++c)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t row = kh * win.dilation[0], col = kw * win.dilation[1];
        v.koff[(c * KH + kh) * KW + kw] = padded ? c * L.channel() + (col % L.sw) * L.plane() + row * L.Wq + col / L.sw
                                                 : (c * win.in[0] + row) * W + col;
      }
  v.rs = win.stride[0] * (padded ? L.Wq : W);
  v.cs = padded ? 1 : win.stride[1];
  return v;
}

// Output columns [ow0, ow1) of a row read tap k of column ow at
// base[off + koff[k] + ow * cs].
struct Segment {
  int64_t ow0, ow1;
  const float* base;
  int64_t off;
  const int64_t* koff;
  int64_t cs;
};

// Kernel provides:
//   static constexpr int kNC;  output columns of the widest tile
//   static void row_task(const ConvGeom&, const LanesFilter&, const Segment*, int nsegs,
//                        const gemm::TileEpi&, int64_t grp, int64_t oh, float* t, float* y);
//     one output row `oh` of channel group `grp` (kLanesGroup channels) for one image,
//     via the strip t[ow][width] (64-byte aligned, (OW + kNC) * kLanesGroup floats);
//   static void pad(const Window&, const PaddedLayout&, const float* xg, int64_t channels,
//                   const InputAffine&, float* xp, ThreadPool*);  the whole padded copy.
template <class Kernel>
void lanes_drive(KernelContext& ctx, const ConvGeom& g, const float* x, const LanesFilter& f,
                 const gemm::Epilogue& epi, const InputAffine& affine, float* y) {
  constexpr int kNC = Kernel::kNC;
  const Window& win = g.win;
  const int64_t OH = win.out[0], OW = win.out[1], P = OH * OW, IP = win.in_size();
  bool padded = static_cast<bool>(affine);
  for (size_t d = 0; d < 2; ++d) padded = padded || win.pad_begin[d] != 0 || win.pad_end[d] != 0;
  const PaddedLayout L = padded_layout(win);
  InputView in = input_view(g, padded, L);
  const bool direct = padded && !affine && !lanes_pad_copy_forced();
  Tensor xp_t;
  if (padded && !direct) xp_t = ctx.scratch(DType::Float32, {g.C * L.channel()});
  // A fused residual Z is laid out as Y (NCHW) while the tile holds channels in its
  // lanes: the tile epilogue then adds only the bias, and Z + the activation go on each
  // output row right after row_task's transposing store has written it (still in L1).
  gemm::Epilogue tile_part = epi, row_part;
  if (epi.residual) {
    tile_part.residual = nullptr, tile_part.prelu_slope = nullptr;
    tile_part.activation = gemm::Epilogue::Activation::None;
    row_part = epi;
    row_part.bias = nullptr, row_part.bias2 = nullptr;
    row_part.bias_per_row = true;  // PRelu slope by output channel (the row index below)
    row_part.residual_ld = P;
  }
  gemm::TileEpi epi0 = gemm::base_epi(tile_part);
  epi0.per_row = false;  // lanes are channels: the bias is a vector
  const int64_t groups = (g.M + kLanesGroup - 1) / kLanesGroup;
  const double task_flops = 2.0 * std::min<int64_t>(g.M, kLanesGroup) * OW * f.C * f.KH * f.KW;
  const int64_t grain = std::max<int64_t>(1, static_cast<int64_t>(2e6 / std::max(task_flops, 1.0)));
  // Padded without an input affine: no copy of the image. Output rows and
  // columns whose taps all lie inside X read it in place (column stride
  // stride_w); the edge columns of a row (at least a full tile's worth, so
  // that no 1-column tile runs there) and the rows touching the top / bottom
  // padding read a per-task copy eb[c][r][Wp] of the R input rows they need,
  // padded, filled only over the columns the edge tiles read.
  const int64_t H = win.in[0], W = win.in[1], pt = win.pad_begin[0], pl = win.pad_begin[1];
  const int64_t KH = f.KH, KW = f.KW, sh = win.stride[0], sw = win.stride[1];
  const int64_t R = (KH - 1) * win.dilation[0] + 1, span_w = (KW - 1) * win.dilation[1] + 1;
  const int64_t Wp = W + pl + win.pad_end[1];
  auto first_inside = [](int64_t pad, int64_t s) { return (pad + s - 1) / s; };
  // Output index o is inside when o * s - pad >= 0 and o * s - pad + span - 1 <= n - 1.
  auto end_inside = [](int64_t n, int64_t pad, int64_t span, int64_t s, int64_t out) {
    const int64_t num = n - span + pad;
    return num < 0 ? int64_t{0} : std::min(out, num / s + 1);
  };
  const int64_t oh_lo = first_inside(pt, sh), oh_hi = std::max(oh_lo, end_inside(H, pt, R, sh, OH));
  const int64_t ow_lo = first_inside(pl, sw), ow_hi = std::max(ow_lo, end_inside(W, pl, span_w, sw, OW));
  const int64_t e_lo = ow_lo > 0 ? std::max(ow_lo, std::min<int64_t>(kNC, OW)) : 0;
  const int64_t e_hi = ow_hi < OW ? std::min(ow_hi, OW - std::min<int64_t>(kNC, OW)) : OW;
  std::vector<int64_t> kx, kedge;
  if (direct) {
    kx.resize(static_cast<size_t>(f.C * KH * KW)), kedge.resize(kx.size());
    for (int64_t c = 0; c < f.C; ++c)
      for (int64_t kh = 0; kh < KH; ++kh)
        for (int64_t kw = 0; kw < KW; ++kw) {
          const int64_t k = (c * KH + kh) * KW + kw, row = kh * win.dilation[0], col = kw * win.dilation[1];
          kx[k] = c * IP + row * W + col;
          kedge[k] = (c * R + row) * Wp + col;
        }
  }
  for (int64_t n = 0; n < g.N; ++n) {
    const float* xn = x + n * g.C * IP;
    if (direct) {
      in.base = xn;
    } else if (padded) {
      Kernel::pad(win, L, xn, g.C, affine, xp_t.mutable_data<float>(), ctx.threads());
      in.base = xp_t.data<float>();
    } else {
      in.base = xn;
    }
    float* yn = y + n * g.M * P;
    gemm::Epilogue row_n = row_part;
    if (epi.residual) row_n.residual = epi.residual + n * g.M * P;
    // Output row oh of channel group grp: the tiles, then (with a residual) Z + activation.
    auto run_row = [&](const Segment* segs, int nsegs, int64_t grp, int64_t oh, float* t) {
      Kernel::row_task(g, f, segs, nsegs, epi0, grp, oh, t, yn);
      if (!epi.residual) return;
      const int64_t m1 = std::min(g.M, (grp + 1) * kLanesGroup);
      for (int64_t m = grp * kLanesGroup; m < m1; ++m) gemm::apply_epilogue(row_n, yn + m * P + oh * OW, OW, m, oh * OW);
    };
    parallel_for(ctx.threads(), groups * OH, grain, [&](int64_t t0, int64_t t1) {
      // The strip buffer, 64-byte aligned; one per chunk of tasks.
      std::unique_ptr<float, decltype(&std::free)> t(
          static_cast<float*>(std::aligned_alloc(64, static_cast<size_t>((OW + kNC) * kLanesGroup * 4))), &std::free);
      if (!direct) {
        for (int64_t task = t0; task < t1; ++task) {
          const int64_t oh = task % OH;
          const Segment sg{0, OW, in.base, oh * in.rs, in.koff.data(), in.cs};
          run_row(&sg, 1, task / OH, oh, t.get());
        }
        return;
      }
      std::vector<float> eb(static_cast<size_t>(f.C * R * Wp));  // edge rows, padded, plain layout
      for (int64_t task = t0; task < t1; ++task) {
        const int64_t oh = task % OH, hp0 = oh * win.stride[0];
        const bool edge_row = oh < oh_lo || oh >= oh_hi || e_lo >= e_hi;
        // Padded columns [p0, p1) of rows hp0 .. hp0 + R - 1 into eb.
        auto fill = [&](int64_t p0, int64_t p1) {
          for (int64_t c = 0; c < f.C; ++c)
            for (int64_t r = 0; r < R; ++r) {
              const int64_t ih = hp0 + r - pt;
              float* dst = eb.data() + (c * R + r) * Wp;
              if (ih < 0 || ih >= H) {
                std::memset(dst + p0, 0, sizeof(float) * (p1 - p0));
                continue;
              }
              const float* src = xn + c * IP + ih * W;
              for (int64_t p = p0; p < p1; ++p) dst[p] = p - pl >= 0 && p - pl < W ? src[p - pl] : 0.0f;
            }
        };
        if (edge_row) {
          fill(0, Wp);
          const Segment sg{0, OW, eb.data(), 0, kedge.data(), win.stride[1]};
          run_row(&sg, 1, task / OH, oh, t.get());
          continue;
        }
        Segment sgs[3];
        int ns = 0;
        if (e_lo > 0) {
          fill(0, std::min(Wp, (e_lo - 1) * win.stride[1] + span_w));
          sgs[ns++] = Segment{0, e_lo, eb.data(), 0, kedge.data(), win.stride[1]};
        }
        sgs[ns++] = Segment{e_lo, e_hi, xn, (hp0 - pt) * W - pl, kx.data(), win.stride[1]};
        if (e_hi < OW) {
          fill(e_hi * win.stride[1], std::min(Wp, (OW - 1) * win.stride[1] + span_w));
          sgs[ns++] = Segment{e_hi, OW, eb.data(), 0, kedge.data(), win.stride[1]};
        }
        run_row(sgs, ns, task / OH, oh, t.get());
      }
    });
  }
}

}  // namespace
}  // namespace nn
}  // namespace onnxmini
