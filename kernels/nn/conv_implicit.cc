// Implicit-GEMM 2-D convolution (float32): the GEMM reads its B operand
// straight from a zero-padded copy of the input instead of an im2col matrix.
// 1-D convolutions (and 1xK / Kx1 ones, which drop_unit_axes makes 1-D) run as
// the 2-D case with one input row: lift_to_2d.
//
// Layout. X[n] is C x H x W. For one image and group the padded buffer is
//   xp[c][q][hp][t]   c < C/g, q < sw (column parity), hp < Hp, t < Wq
// holding padded-input pixel (hp, q + sw * t), i.e. input pixel
// (hp - pad_top, q + sw * t - pad_left), or 0 outside the input. Output pixel
// (oh, ow) under tap (kh, kw) reads padded column ow * sw + kw * dw, which lies
// in plane q = (kw * dw) % sw at t = ow + (kw * dw) / sw: consecutive ow are
// consecutive t, so one output row under one tap is a contiguous run. Hence
//   B[k = (c, kh, kw)][oh * OW + ow] = xp[k_offset[k] + oh * (sh * Wq) + ow]
//   k_offset[k] = ((c * sw + q) * Hp + kh * dh) * Wq + (kw * dw) / sw
// which is gemm::ImplicitB with rows = OH, row_len = OW, row_stride = sh * Wq.
//
// Why: im2col writes C*KH*KW*OH*OW floats (29 MB for a 64-channel 3x3 conv on
// 112x112) that the GEMM then reads back and packs again; here the only copy is
// the padded input (C*Hp*Wq floats, ~1.03x the input), the micro-kernel loads
// its B rows from it directly, and a fused BatchNormalization in front of the
// Conv (InputAffine) is applied during that copy for free.
#include "kernels/nn/conv_implicit.h"

#include <algorithm>
#include <cstring>

#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {

bool implicit_conv_applies(const ConvGeom& g) {
  if ((g.win.rank != 1 && g.win.rank != 2) || !padded_input_near(g.win)) return false;  // it copies a padded plane
  bool one_by_one = g.win.kernel_size() == 1;
  for (size_t d = 0; d < g.win.rank; ++d) one_by_one = one_by_one && g.win.pad_begin[d] == 0 && g.win.pad_end[d] == 0;
  return !one_by_one;
}

// A 1-D window as the 2-D window of a 1-row image (input, kernel and output height
// 1, no vertical padding): the same memory layout, so the 2-D code runs it as is.
Window lift_to_2d(const Window& w) {
  if (w.rank != 1) return w;
  Window l;
  l.rank = 2;
  l.in = {1, w.in[0]}, l.kernel = {1, w.kernel[0]}, l.stride = {1, w.stride[0]}, l.dilation = {1, w.dilation[0]};
  l.pad_begin = {0, w.pad_begin[0]}, l.pad_end = {0, w.pad_end[0]}, l.out = {1, w.out[0]};
  return l;
}

PaddedLayout padded_layout(const Window& win) {
  PaddedLayout L;
  L.sw = win.stride[1];
  L.Hp = win.in[0] + win.pad_begin[0] + win.pad_end[0];
  const int64_t Wp = win.in[1] + win.pad_begin[1] + win.pad_end[1];
  L.Wq = (Wp + L.sw - 1) / L.sw;
  return L;
}

namespace {

// Channel c of X (H x W) into its sw planes of the padded buffer, applying the
// input affine to real pixels only.
void pad_channel(const Window& win, const PaddedLayout& L, const float* xc, float* dst, float scale, float shift,
                 bool affine) {
  const int64_t H = win.in[0], W = win.in[1], pt = win.pad_begin[0], pl = win.pad_begin[1];
  for (int64_t q = 0; q < L.sw; ++q) {
    float* plane = dst + q * L.plane();
    for (int64_t hp = 0; hp < L.Hp; ++hp) {
      float* row = plane + hp * L.Wq;
      const int64_t ih = hp - pt;
      if (ih < 0 || ih >= H) {
        std::memset(row, 0, sizeof(float) * L.Wq);
        continue;
      }
      const float* src = xc + ih * W;
      if (L.sw == 1) {  // [pad_left zeros][W pixels][zeros]
        std::memset(row, 0, sizeof(float) * pl);
        if (affine)
          for (int64_t i = 0; i < W; ++i) row[pl + i] = src[i] * scale + shift;
        else
          std::memcpy(row + pl, src, sizeof(float) * W);
        std::memset(row + pl + W, 0, sizeof(float) * (L.Wq - pl - W));
        continue;
      }
      // Strided: t in [lo, hi) reads input column iw = q + sw * t - pl in [0, W);
      // the rest is padding. No per-pixel bounds test inside the copy loop.
      const int64_t lo = std::clamp<int64_t>((pl - q + L.sw - 1) / L.sw, 0, L.Wq);
      const int64_t hi = std::clamp<int64_t>(W - 1 + pl - q < 0 ? 0 : (W - 1 + pl - q) / L.sw + 1, lo, L.Wq);
      const float* s0 = src + q - pl;
      std::memset(row, 0, sizeof(float) * lo);
      if (affine)
        for (int64_t t = lo; t < hi; ++t) row[t] = s0[L.sw * t] * scale + shift;
      else
        for (int64_t t = lo; t < hi; ++t) row[t] = s0[L.sw * t];
      std::memset(row + hi, 0, sizeof(float) * (L.Wq - hi));
    }
  }
}

}  // namespace

void pad_input(const Window& win, const PaddedLayout& L, const float* xg, int64_t c0, int64_t channels,
               const InputAffine& affine, float* xp, ThreadPool* pool) {
  const int64_t IP = win.in_size();
  parallel_for(pool, channels, 4, [&](int64_t a, int64_t e) {
    for (int64_t c = a; c < e; ++c)
      pad_channel(win, L, xg + c * IP, xp + c * L.channel(), affine ? affine.scale[c0 + c] : 1.0f,
                  affine ? affine.shift[c0 + c] : 0.0f, static_cast<bool>(affine));
  });
}

void conv2d_implicit(KernelContext& ctx, const ConvGeom& g, const float* x, const float* w,
                     const std::vector<std::shared_ptr<gemm::PackedA>>& packed, const gemm::Epilogue& epi,
                     const InputAffine& affine, float* y) {
  const Window win = lift_to_2d(g.win);  // 1-D: one row of a 2-D image
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const int64_t KH = win.kernel[0], KW = win.kernel[1], K = cg * KH * KW;
  const int64_t OH = win.out[0], OW = win.out[1], P = OH * OW, IP = win.in_size();
  const PaddedLayout L = padded_layout(win);

  // k = (c, kh, kw) -> start of its run for output row 0.
  std::vector<int64_t> k_offset(static_cast<size_t>(K));
  for (int64_t c = 0; c < cg; ++c)
    for (int64_t kh = 0; kh < KH; ++kh)
      for (int64_t kw = 0; kw < KW; ++kw) {
        const int64_t col = kw * win.dilation[1];
        k_offset[(c * KH + kh) * KW + kw] =
            (c * L.sw + col % L.sw) * L.plane() + kh * win.dilation[0] * L.Wq + col / L.sw;
      }
  gemm::ImplicitB b;
  b.base = nullptr;
  b.k_offset = k_offset.data();
  b.rows = OH, b.row_len = OW, b.row_stride = win.stride[0] * L.Wq;

  Tensor xp_t = ctx.scratch(DType::Float32, {cg * L.channel()});
  float* xp = xp_t.mutable_data<float>();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      const int64_t c0 = grp * cg;
      const float* xg = x + (n * g.C + c0) * IP;
      pad_input(win, L, xg, c0, cg, affine, xp, ctx.threads());
      b.base = xp;
      gemm::SgemmArgs a;
      a.M = mg, a.K = K, a.N = P;
      a.A = w + grp * mg * K, a.lda = K;
      a.C = y + (n * g.M + grp * mg) * P, a.ldc = P;
      a.epilogue = epi;
      if (epi.bias) a.epilogue.bias = epi.bias + grp * mg;
      if (epi.prelu_slope) a.epilogue.prelu_slope = epi.prelu_slope + grp * mg;
      if (epi.residual) a.epilogue.residual = epi.residual + (n * g.M + grp * mg) * P;  // laid out as Y
      ctx.gemm().sgemm_implicit(a, packed.empty() ? nullptr : packed[grp].get(), b, ctx.threads());
    }
}

}  // namespace nn
}  // namespace onnxmini
