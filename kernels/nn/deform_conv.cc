// DeformConv (opsets 19, 22): 2-D deformable convolution (v1 with offsets, v2 with a
// modulation mask). X (N, C, H, W), W (M, C/group, kH, kW), offset
// (N, offset_group * kH * kW * 2, oH, oW) as (dy, dx) pairs per kernel tap, optional
// B (M) and mask (N, offset_group * kH * kW, oH, oW); float and double.
//
// Each kernel tap (kh, kw) of output (oh, ow) samples X at
//   y = oh * stride_h - pad_top  + kh * dilation_h + dy,
//   x = ow * stride_w - pad_left + kw * dilation_w + dx
// bilinearly (a corner outside the image counts as 0), times the mask. The fast path
// gathers these samples into a column matrix (C/group * kH * kW rows, oH * oW columns)
// per (image, group), like im2col, and multiplies it by the group's filters with the
// GEMM engine (bias in the epilogue); the reference path sums every product in double.
#include <cmath>
#include <vector>

#include "core/checked_math.h"
#include "core/thread_pool.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

struct Geometry {
  int64_t N, C, H, W, M, kh, kw, oh, ow, group, offset_group;
  int64_t sh, sw, dh, dw, pt, pl;
};

// Bilinear sample of plane p (H x W) at (y, x); corners outside the image count as 0.
template <typename T>
double bilinear(const T* p, int64_t H, int64_t W, double y, double x) {
  if (!(y > -1.0 && y < static_cast<double>(H) && x > -1.0 && x < static_cast<double>(W))) return 0.0;
  const double fy = std::floor(y), fx = std::floor(x);
  const int64_t y0 = static_cast<int64_t>(fy), x0 = static_cast<int64_t>(fx);
  const double ly = y - fy, lx = x - fx;
  double v = 0;
  auto at = [&](int64_t yy, int64_t xx, double w) {
    if (yy >= 0 && yy < H && xx >= 0 && xx < W && w != 0.0) v += w * static_cast<double>(p[yy * W + xx]);
  };
  at(y0, x0, (1 - ly) * (1 - lx));
  at(y0, x0 + 1, (1 - ly) * lx);
  at(y0 + 1, x0, ly * (1 - lx));
  at(y0 + 1, x0 + 1, ly * lx);
  return v;
}

class DeformConvKernel : public Kernel {
 public:
  explicit DeformConvKernel(const KernelInfo& info)
      : kernel_(info.attrs.get_ints("kernel_shape", {})),
        strides_(info.attrs.get_ints("strides", {})),
        dilations_(info.attrs.get_ints("dilations", {})),
        pads_(info.attrs.get_ints("pads", {})),
        group_(info.attrs.get_int("group", 1)),
        offset_group_(info.attrs.get_int("offset_group", 1)) {
    if (group_ < 1) info.fail("group {} must be >= 1", group_);
    if (offset_group_ < 1) info.fail("offset_group {} must be >= 1", offset_group_);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor &x = ctx.input(0), &w = ctx.input(1), &off = ctx.input(2);
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64)
      ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(x.dtype()));
    if (x.rank() != 4) ctx.unsupported("input of shape {}: only 2-D deformable convolution (N, C, H, W) is implemented",
                                       shape_to_string(x.shape()));
    for (const Tensor* t : {&w, &off})
      if (t->dtype() != x.dtype() || t->rank() != 4)
        ctx.fail("W / offset must be rank-4 {}, got {} {} / {} {}", dtype_name(x.dtype()), dtype_name(w.dtype()),
                 shape_to_string(w.shape()), dtype_name(off.dtype()), shape_to_string(off.shape()));
    Geometry g{};
    g.N = x.dim(0), g.C = x.dim(1), g.H = x.dim(2), g.W = x.dim(3), g.M = w.dim(0);
    g.group = group_, g.offset_group = offset_group_;
    if (g.C % g.group != 0 || g.M % g.group != 0 || w.dim(1) != g.C / g.group)
      ctx.fail("W has shape {} for {} input channels and group {}: expected (M, C / group, kH, kW) with M a multiple "
               "of group", shape_to_string(w.shape()), g.C, g.group);
    if (g.C % g.offset_group != 0) ctx.fail("{} input channels are not a multiple of offset_group {}", g.C, g.offset_group);
    g.kh = w.dim(2), g.kw = w.dim(3);
    if (!kernel_.empty() && (kernel_.size() != 2 || kernel_[0] != g.kh || kernel_[1] != g.kw))
      ctx.fail("kernel_shape [{}] does not match W's {}x{}", fmt::join(kernel_, ","), g.kh, g.kw);
    auto two = [&](const std::vector<int64_t>& v, int64_t def, const char* what, int64_t min) {
      if (v.empty()) return std::pair<int64_t, int64_t>{def, def};
      if (v.size() != 2) ctx.fail("{} [{}] must have 2 values", what, fmt::join(v, ","));
      if (v[0] < min || v[1] < min) ctx.fail("{} [{}] must be >= {}", what, fmt::join(v, ","), min);
      return std::pair<int64_t, int64_t>{v[0], v[1]};
    };
    std::tie(g.sh, g.sw) = two(strides_, 1, "strides", 1);
    std::tie(g.dh, g.dw) = two(dilations_, 1, "dilations", 1);
    if (!pads_.empty() && pads_.size() != 4) ctx.fail("pads [{}] must have 4 values", fmt::join(pads_, ","));
    for (int64_t p : pads_)
      if (p < 0 || p > (int64_t{1} << 40)) ctx.fail("pads [{}] must be in [0, 2^40]", fmt::join(pads_, ","));
    g.pt = pads_.empty() ? 0 : pads_[0], g.pl = pads_.empty() ? 0 : pads_[1];
    const int64_t pb = pads_.empty() ? 0 : pads_[2], pr = pads_.empty() ? 0 : pads_[3];
    auto out_dim = [&](int64_t in, int64_t k, int64_t s, int64_t d, int64_t p0, int64_t p1, const char* axis) {
      auto where = [&] { return ctx.info().label() + ": " + axis + " kernel span / padded size"; };
      const int64_t span = checked_add(checked_mul(k - 1, d, where), 1, where);
      const int64_t padded = checked_add(in, p0 + p1, where);
      if (padded < span) ctx.fail("the {} axis ({} padded) is shorter than the kernel span {}", axis, padded, span);
      return (padded - span) / s + 1;
    };
    g.oh = out_dim(g.H, g.kh, g.sh, g.dh, g.pt, pb, "height");
    g.ow = out_dim(g.W, g.kw, g.sw, g.dw, g.pl, pr, "width");
    const Shape off_expect{g.N, g.offset_group * g.kh * g.kw * 2, g.oh, g.ow};
    if (off.shape() != off_expect)
      ctx.fail("offset has shape {}, expected {}", shape_to_string(off.shape()), shape_to_string(off_expect));
    if (ctx.has_input(3) && (ctx.input(3).dtype() != x.dtype() || ctx.input(3).shape() != Shape{g.M}))
      ctx.fail("B has shape {}, expected ({})", shape_to_string(ctx.input(3).shape()), g.M);
    const Shape mask_expect{g.N, g.offset_group * g.kh * g.kw, g.oh, g.ow};
    if (ctx.has_input(4) && (ctx.input(4).dtype() != x.dtype() || ctx.input(4).shape() != mask_expect))
      ctx.fail("mask has shape {}, expected {}", shape_to_string(ctx.input(4).shape()), shape_to_string(mask_expect));
    g_ = g;
    ctx.allocate_output(0, x.dtype(), {g.N, g.M, g.oh, g.ow});
  }

  void compute(KernelContext& ctx) override {
    ctx.stats().flops = 2.0 * g_.N * g_.M * g_.oh * g_.ow * (g_.C / g_.group) * g_.kh * g_.kw;
    if (ctx.input(0).dtype() == DType::Float32) run<float>(ctx);
    else run<double>(ctx);
  }

 private:
  // The sample of input channel c (of image n) for tap (i, j) of output position (y, x), times the mask.
  template <typename T>
  double sample(const Tensor& x, const T* off, const T* mask, int64_t n, int64_t c, int64_t i, int64_t j, int64_t y,
                int64_t xo) const {
    const Geometry& g = g_;
    const int64_t og = c / (g.C / g.offset_group), tap = i * g.kw + j, P = g.oh * g.ow, pos = y * g.ow + xo;
    const int64_t off_base = ((n * g.offset_group + og) * g.kh * g.kw + tap) * 2;
    const double sy = static_cast<double>(y * g.sh - g.pt + i * g.dh) + off[off_base * P + pos];
    const double sx = static_cast<double>(xo * g.sw - g.pl + j * g.dw) + off[(off_base + 1) * P + pos];
    const double m = mask ? static_cast<double>(mask[((n * g.offset_group + og) * g.kh * g.kw + tap) * P + pos]) : 1.0;
    if (m == 0.0) return 0.0;
    return m * bilinear(x.data<T>() + (n * g.C + c) * g.H * g.W, g.H, g.W, sy, sx);
  }

  template <typename T>
  void run(KernelContext& ctx) {
    const Geometry& g = g_;
    const Tensor &x = ctx.input(0), &w = ctx.input(1);
    const T* off = ctx.input(2).data<T>();
    const T* bias = ctx.has_input(3) ? ctx.input(3).data<T>() : nullptr;
    const T* mask = ctx.has_input(4) ? ctx.input(4).data<T>() : nullptr;
    T* y = ctx.output(0).template mutable_data<T>();
    const int64_t Cg = g.C / g.group, Mg = g.M / g.group, K = Cg * g.kh * g.kw, P = g.oh * g.ow;
    if (ctx.reference_mode()) {
      ctx.stats().variant = "deform_conv_reference";
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t m = 0; m < g.M; ++m)
          for (int64_t p = 0; p < P; ++p) {
            double acc = bias ? static_cast<double>(bias[m]) : 0.0;
            const int64_t grp = m / Mg;
            for (int64_t c = 0; c < Cg; ++c)
              for (int64_t i = 0; i < g.kh; ++i)
                for (int64_t j = 0; j < g.kw; ++j)
                  acc += static_cast<double>(w.data<T>()[((m * Cg + c) * g.kh + i) * g.kw + j]) *
                         sample<T>(x, off, mask, n, grp * Cg + c, i, j, p / g.ow, p % g.ow);
            y[(n * g.M + m) * P + p] = static_cast<T>(acc);
          }
      return;
    }
    ctx.stats().variant = "deform_conv_columns_gemm";
    Tensor col = ctx.scratch(dtype_of<T>::value, {K, P});
    T* cd = col.template mutable_data<T>();
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t grp = 0; grp < g.group; ++grp) {
        // Columns: row (c, i, j), column p = the masked bilinear sample; rows split across threads.
        parallel_for(ctx.threads(), K, std::max<int64_t>(1, 2048 / std::max<int64_t>(1, P)), [&](int64_t k0, int64_t k1) {
          for (int64_t k = k0; k < k1; ++k) {
            const int64_t c = k / (g.kh * g.kw), i = (k / g.kw) % g.kh, j = k % g.kw;
            for (int64_t p = 0; p < P; ++p)
              cd[k * P + p] = static_cast<T>(sample<T>(x, off, mask, n, grp * Cg + c, i, j, p / g.ow, p % g.ow));
          }
        });
        T* out = y + (n * g.M + grp * Mg) * P;
        const T* wg = w.data<T>() + grp * Mg * K;
        if constexpr (std::is_same_v<T, float>) {
          gemm::SgemmArgs a;
          a.M = Mg, a.N = P, a.K = K, a.A = wg, a.lda = K, a.B = cd, a.ldb = P, a.C = out, a.ldc = P;
          a.epilogue.bias = bias ? bias + grp * Mg : nullptr;
          a.epilogue.bias_per_row = true;
          ctx.gemm().sgemm(a, ctx.threads());
        } else {
          gemm::DgemmArgs a;
          a.M = Mg, a.N = P, a.K = K, a.A = wg, a.lda = K, a.B = cd, a.ldb = P, a.C = out, a.ldc = P;
          ctx.gemm().dgemm(a, ctx.threads());
          if (bias)
            for (int64_t m = 0; m < Mg; ++m)
              for (int64_t p = 0; p < P; ++p) out[m * P + p] += bias[grp * Mg + m];
        }
      }
  }

  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  int64_t group_, offset_group_;
  Geometry g_{};
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("deform_conv", "", "DeformConv", 19, INT_MAX, make_kernel<DeformConvKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_deform_conv);
