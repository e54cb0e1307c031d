// ConvTranspose (opset 1..): the gradient of Conv with respect to its input,
// float32 and float64, N-D, groups, pads / auto_pad / output_shape /
// output_padding, strides, dilations, bias.
//
// Layout: X is N x C x I1..Ik, W is C x M/group x K1..Kk, Y is N x M x O1..Ok.
// Every input pixel i of channel c scatters w[c, m, k] * x[c, i] to output
// position o = i*stride - pad_begin + k*dilation. Fast path, per image and group:
//   col (M/g*Kprod x P_in) = W[g]^T (M/g*Kprod x C/g) * X[n, g] (C/g x P_in)   (one GEMM)
//   Y[n, g] += col2im(col)                                                    (scatter-add)
// Y starts as the bias (or 0). Float32 layers with kernel == stride (1-D / 2-D,
// dilation 1) take conv_transpose_nonoverlap instead (conv_transpose_nonoverlap.cc):
// no two taps share an output, so col is stored into Y without col2im.
#include <algorithm>

#include "core/checked_math.h"
#include "kernels/gemm_engine/gemm.h"
#include "kernels/nn/conv_transpose.h"
#include "kernels/nn/spatial.h"
#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace nn {
namespace {

// Python-style floor division (total padding may be negative with output_shape).
int64_t floor_div2(int64_t v) { return v >= 0 ? v / 2 : -((-v + 1) / 2); }

// Output index of input index i and kernel tap k along one axis, or -1 outside the output.
inline int64_t out_index(const TGeom& g, size_t d, int64_t i, int64_t k) {
  const int64_t o = i * g.stride[d] - g.pad_begin[d] + k * g.dilation[d];
  return (o >= 0 && o < g.out[d]) ? o : -1;
}

// ---- reference: scatter every input pixel through every kernel tap ------------
template <typename T>
void convt_reference(const TGeom& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const int64_t IP = Window::prod(g.in), KP = Window::prod(g.kernel), OP = Window::prod(g.out);
  const auto out_st = row_major_strides(g.out);
  const size_t r = g.in.size();
  std::vector<int64_t> ic(r), kc(r);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m)
      for (int64_t o = 0; o < OP; ++o) y[(n * g.M + m) * OP + o] = bias ? bias[m] : T(0);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t c = 0; c < g.C; ++c) {
      const int64_t grp = c / cg;
      for (int64_t i = 0; i < IP; ++i) {
        unravel_index(i, g.in, ic.data());
        const T xv = x[(n * g.C + c) * IP + i];
        for (int64_t mm = 0; mm < mg; ++mm) {
          const int64_t m = grp * mg + mm;
          for (int64_t k = 0; k < KP; ++k) {
            unravel_index(k, g.kernel, kc.data());
            int64_t off = 0;
            bool inside = true;
            for (size_t d = 0; d < r && inside; ++d) {
              const int64_t o = out_index(g, d, ic[d], kc[d]);
              inside = o >= 0;
              off += o * out_st[d];
            }
            if (inside) y[(n * g.M + m) * OP + off] += xv * w[(c * mg + mm) * KP + k];
          }
        }
      }
    }
}

// ---- col2im: y (channels x out...) += scatter of col (channels*Kprod x P_in) ----
// Rows of one output channel touch the same plane, so threads split by channel.
template <typename T>
void col2im(const TGeom& g, int64_t channels, const T* col, T* y, ThreadPool* pool) {
  const int64_t IP = Window::prod(g.in), KP = Window::prod(g.kernel), OP = Window::prod(g.out);
  const size_t r = g.in.size();
  const int64_t IW = g.in[r - 1], outer = IP / IW;
  const auto out_st = row_major_strides(g.out);
  const std::vector<int64_t> outer_shape(g.in.begin(), g.in.end() - 1);
  parallel_for(pool, channels, 1, [&](int64_t c0, int64_t c1) {
    std::vector<int64_t> kc(r), ic(r > 1 ? r - 1 : 1);
    for (int64_t m = c0; m < c1; ++m)
      for (int64_t k = 0; k < KP; ++k) {
        unravel_index(k, g.kernel, kc.data());
        const T* src = col + (m * KP + k) * IP;
        for (int64_t q = 0; q < outer; ++q, src += IW) {
          unravel_index(q, outer_shape, ic.data());
          int64_t base = 0;
          bool inside = true;
          for (size_t d = 0; d + 1 < r && inside; ++d) {
            const int64_t o = out_index(g, d, ic[d], kc[d]);
            inside = o >= 0;
            base += o * out_st[d];
          }
          if (!inside) continue;
          // The input columns whose output o = iw * s + off lies in [0, OW), found
          // once per row so the loop has no bounds checks (stride 1: a contiguous
          // add the compiler vectorises).
          const int64_t s = g.stride[r - 1], OW = g.out[r - 1];
          const int64_t off = kc[r - 1] * g.dilation[r - 1] - g.pad_begin[r - 1];
          const int64_t lo = std::max<int64_t>(0, off >= 0 ? 0 : (-off + s - 1) / s);
          const int64_t hi = std::min<int64_t>(IW, OW - off <= 0 ? 0 : (OW - off + s - 1) / s);
          T* dst = y + m * OP + base;
          if (s == 1) {
            for (int64_t iw = lo; iw < hi; ++iw) dst[iw + off] += src[iw];
          } else {
            for (int64_t iw = lo; iw < hi; ++iw) dst[iw * s + off] += src[iw];
          }
        }
      }
  });
}

// col (M x N) = A^T * B where A is stored K x M and B is K x N.
inline void gemm_at_b(const KernelContext& ctx, int64_t M, int64_t N, int64_t K, const float* A, const float* B, float* C) {
  gemm::SgemmArgs a;
  a.trans_a = true, a.M = M, a.N = N, a.K = K, a.A = A, a.lda = M, a.B = B, a.ldb = N, a.C = C, a.ldc = N;
  ctx.gemm().sgemm(a, ctx.threads());
}
inline void gemm_at_b(const KernelContext& ctx, int64_t M, int64_t N, int64_t K, const double* A, const double* B, double* C) {
  gemm::DgemmArgs a;
  a.trans_a = true, a.M = M, a.N = N, a.K = K, a.A = A, a.lda = M, a.B = B, a.ldb = N, a.C = C, a.ldc = N;
  ctx.gemm().dgemm(a, ctx.threads());
}

template <typename T>
void convt_fast(KernelContext& ctx, const TGeom& g, const T* x, const T* w, const T* bias, T* y) {
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  const int64_t IP = Window::prod(g.in), KP = Window::prod(g.kernel), OP = Window::prod(g.out);
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t m = 0; m < g.M; ++m) std::fill(y + (n * g.M + m) * OP, y + (n * g.M + m + 1) * OP, bias ? bias[m] : T(0));
  Tensor col = ctx.scratch(dtype_of<T>::value, {mg * KP, IP});
  T* pc = col.mutable_data<T>();
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t grp = 0; grp < g.group; ++grp) {
      gemm_at_b(ctx, mg * KP, IP, cg, w + grp * cg * mg * KP, x + (n * g.C + grp * cg) * IP, pc);
      col2im(g, mg, pc, y + (n * g.M + grp * mg) * OP, ctx.threads());
    }
}

class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info)
      : attrs_(read_window_attrs(info)),
        group_(info.attrs.get_int("group", 1)),
        output_padding_(info.attrs.get_ints("output_padding", {})),
        output_shape_(info.attrs.get_ints("output_shape", {})),
        has_pads_(info.attrs.has("pads")) {
    if (group_ <= 0) info.fail("group must be positive, got {}", group_);
  }

  KernelPlan describe(const KernelInfo& info, const std::vector<const Shape*>& shapes) const override {
    const bool f32 = !info.input_dtypes.empty() && info.input_dtypes[0] == DType::Float32;
    const char* name = f32 && nonoverlap_planned(info, shapes) ? "conv_transpose_nonoverlap" : "convtranspose_gemm_col2im";
    return KernelPlan{name,
                      f32 ? gemm::engine(info.gemm, info.mode).sgemm_path(gemm::SgemmArgs{}, false).isa : "portable", ""};
  }

  void prepare(KernelContext& ctx) override {
    const TGeom g = geometry(ctx);
    if (ctx.has_input(2)) {
      const Tensor& b = ctx.input(2);
      if (b.dtype() != ctx.input(0).dtype() || b.rank() != 1 || b.dim(0) != g.M)
        ctx.fail("bias has shape {} ({}), expected [{}] of the input's dtype", shape_to_string(b.shape()), dtype_name(b.dtype()), g.M);
    }
    Shape out{g.N, g.M};
    out.insert(out.end(), g.out.begin(), g.out.end());
    ctx.allocate_output(0, ctx.input(0).dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const TGeom g = geometry(ctx);
    ctx.stats().flops = 2.0 * g.N * Window::prod(g.in) * g.C * (g.M / g.group) * Window::prod(g.kernel);
    if (ctx.input(0).dtype() == DType::Float32) run<float>(ctx, g);
    else run<double>(ctx, g);
  }

 private:
  template <typename T>
  void run(KernelContext& ctx, const TGeom& g) {
    const T* x = ctx.input(0).data<T>();
    const T* w = ctx.input(1).data<T>();
    const T* b = ctx.has_input(2) ? ctx.input(2).data<T>() : nullptr;
    T* y = ctx.output(0).mutable_data<T>();
    if (ctx.reference_mode()) {
      convt_reference(g, x, w, b, y);
      ctx.stats().variant = "convtranspose_reference";
    } else if (std::is_same_v<T, float> && convt_nonoverlap_fits(g)) {
      convt_nonoverlap(ctx, g, reinterpret_cast<const float*>(x), reinterpret_cast<const float*>(w),
                       reinterpret_cast<const float*>(b), reinterpret_cast<float*>(y));
      ctx.stats().variant = "conv_transpose_nonoverlap";
      ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
    } else {
      convt_fast(ctx, g, x, w, b, y);
      ctx.stats().variant = "convtranspose_gemm_col2im";
      if (std::is_same_v<T, float>) ctx.stats().isa = ctx.gemm().sgemm_path(gemm::SgemmArgs{}, false).isa;
    }
  }

  // Mirrors run(): the non-overlapping path where the weight's kernel equals the
  // strides and dilations are 1 (1-D / 2-D, convt_nonoverlap_fits).
  bool nonoverlap_planned(const KernelInfo&, const std::vector<const Shape*>& shapes) const {
    if (shapes.size() < 2 || !shapes[1] || shapes[1]->size() < 3) return false;
    TGeom g;
    const size_t r = shapes[1]->size() - 2;
    g.in.assign(r, 1);
    g.kernel.assign(shapes[1]->begin() + 2, shapes[1]->end());
    g.stride = attrs_.strides.empty() ? std::vector<int64_t>(r, 1) : attrs_.strides;
    g.dilation = attrs_.dilations.empty() ? std::vector<int64_t>(r, 1) : attrs_.dilations;
    if (g.stride.size() != r || g.dilation.size() != r) return false;
    return convt_nonoverlap_fits(g);
  }

  TGeom geometry(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& w = ctx.input(1);
    if (x.dtype() != DType::Float32 && x.dtype() != DType::Float64) ctx.unsupported("dtype {} is not supported (float, double)", dtype_name(x.dtype()));
    if (w.dtype() != x.dtype()) ctx.fail("weight dtype {} differs from input dtype {}", dtype_name(w.dtype()), dtype_name(x.dtype()));
    if (x.rank() < 3 || w.rank() != x.rank())
      ctx.fail("input {} and weight {} must both be N x C x D1 [x D2 ...] of the same rank", shape_to_string(x.shape()), shape_to_string(w.shape()));
    TGeom g;
    // group, strides, dilations and pads come from the model: products and sums below are checked.
    auto where = [&](const char* what) { return [&ctx, what] { return ctx.info().label() + ": " + what; }; };
    g.N = x.dim(0), g.C = x.dim(1), g.group = group_, g.M = checked_mul(w.dim(1), group_, where("weight channels x group"));
    if (w.dim(0) != g.C) ctx.fail("input has {} channels, weight expects {} (group {})", g.C, w.dim(0), group_);
    if (g.C % group_ != 0) ctx.fail("input channels {} are not divisible by group {}", g.C, group_);
    const size_t r = x.rank() - 2;
    g.in.assign(x.shape().begin() + 2, x.shape().end());
    g.kernel.assign(w.shape().begin() + 2, w.shape().end());
    if (!attrs_.kernel.empty() && attrs_.kernel != g.kernel)
      ctx.fail("kernel_shape [{}] does not match the weight's spatial shape [{}]", fmt::join(attrs_.kernel, ","), fmt::join(g.kernel, ","));
    auto per_axis = [&](const std::vector<int64_t>& v, const char* name, int64_t fill, size_t n) {
      if (v.empty()) return std::vector<int64_t>(n, fill);
      if (v.size() != n) ctx.fail("{} has {} values, expected {}", name, v.size(), n);
      return v;
    };
    g.stride = per_axis(attrs_.strides, "strides", 1, r);
    g.dilation = per_axis(attrs_.dilations, "dilations", 1, r);
    const auto opad = per_axis(output_padding_, "output_padding", 0, r);
    const auto pads = per_axis(attrs_.pads, "pads", 0, 2 * r);
    // output_shape may list only the spatial sizes or the whole shape.
    std::vector<int64_t> oshape;
    if (!output_shape_.empty()) {
      if (output_shape_.size() != r && output_shape_.size() != r + 2)
        ctx.fail("output_shape has {} values, expected {} spatial sizes", output_shape_.size(), r);
      oshape.assign(output_shape_.end() - r, output_shape_.end());
    }
    const bool same = attrs_.auto_pad == AutoPad::SameUpper || attrs_.auto_pad == AutoPad::SameLower;
    g.pad_begin.assign(r, 0);
    g.out.assign(r, 0);
    for (size_t d = 0; d < r; ++d) {
      // full = stride * (in - 1) + output_padding + (kernel - 1) * dilation + 1
      const auto axis = where("output size (stride, output_padding, kernel, dilation)");
      const int64_t full = checked_add(
          checked_add(checked_mul(g.stride[d], g.in[d] - 1, axis), opad[d], axis),
          checked_add(checked_mul(g.kernel[d] - 1, g.dilation[d], axis), 1, axis), axis);
      if (same && !has_pads_) {
        // Spec: the output is output_shape (default in * stride); the padding that makes it so is split.
        g.out[d] = oshape.empty() ? checked_mul(g.in[d], g.stride[d], where("input x stride")) : oshape[d];
        const int64_t total = full - g.out[d];
        g.pad_begin[d] = attrs_.auto_pad == AutoPad::SameUpper ? floor_div2(total) : total - floor_div2(total);
      } else {
        g.pad_begin[d] = attrs_.auto_pad == AutoPad::Valid ? 0 : pads[d];
        const int64_t pad_end = attrs_.auto_pad == AutoPad::Valid ? 0 : pads[d + r];
        g.out[d] = oshape.empty() ? full - g.pad_begin[d] - pad_end : oshape[d];
      }
      if (g.out[d] <= 0) ctx.fail("output size {} on spatial axis {} is not positive (pads too large)", g.out[d], d);
    }
    return g;
  }

  WindowAttrs attrs_;
  int64_t group_;
  std::vector<int64_t> output_padding_, output_shape_;
  bool has_pads_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("conv_transpose", "", "ConvTranspose", 1, INT_MAX, make_kernel<ConvTransposeKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_conv_transpose);
