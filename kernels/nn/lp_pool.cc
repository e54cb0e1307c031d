// LpPool (opsets 1, 2, 11, 18) and GlobalLpPool (1, 2): y = (sum |x|^p)^(1/p)
// over each window (padding taps count as 0); float32, float64, and float16 /
// bfloat16 through float32. p is a float attribute at opset 1, an int from 2.
// Window geometry (kernel_shape, strides, dilations, pads, auto_pad,
// ceil_mode) is the pools' shared one (spatial.h).
//
// Layout: N x C x D1..Dk; each (n, c) plane is independent and the planes are
// split across threads. Within a plane the valid tap range along every axis is
// computed once per output position (clamped to the input), so the inner loop
// walks only real taps, without bounds checks. p = 1 and p = 2 avoid pow().
#include <cmath>

#include "core/thread_pool.h"
#include "kernels/nn/spatial.h"
#include "kernels/registry.h"
#include "kernels/vision/half_float.h"

namespace onnxmini {
namespace nn {
namespace {

// sum |v|^p, and its p-th root, with the common p special-cased.
inline double lp_term(double v, double p) { return p == 1 ? std::fabs(v) : p == 2 ? v * v : std::pow(std::fabs(v), p); }
inline double lp_root(double s, double p) { return p == 1 ? s : p == 2 ? std::sqrt(s) : std::pow(s, 1.0 / p); }

double read_p(const KernelInfo& info) {
  const double p = info.opset < 2 ? info.attrs.get_float("p", 2.f) : static_cast<double>(info.attrs.get_int("p", 2));
  if (!(p > 0) || !std::isfinite(p)) info.fail("p must be positive and finite, got {}", p);
  return p;
}

void check_float(const KernelContext& ctx, DType t) {
  if (t != DType::Float32 && t != DType::Float64 && !vision::is_half(t))
    ctx.unsupported("dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
}

// Runs `fn(x, y)` on float / double data, or on float32 copies of half data.
template <typename Fn>
void with_float_data(KernelContext& ctx, Fn&& fn) {
  const Tensor& x = ctx.input(0);
  Tensor& y = ctx.output(0);
  if (x.dtype() == DType::Float32) return fn(x.data<float>(), y.mutable_data<float>());
  if (x.dtype() == DType::Float64) return fn(x.data<double>(), y.mutable_data<double>());
  Tensor xf = ctx.scratch(DType::Float32, x.shape()), yf = ctx.scratch(DType::Float32, y.shape());
  vision::widen_half(x, xf.mutable_data<float>());
  fn(static_cast<const float*>(xf.data<float>()), yf.mutable_data<float>());
  vision::narrow_to_half(yf.data<float>(), y);
}

class LpPoolKernel : public Kernel {
 public:
  explicit LpPoolKernel(const KernelInfo& info) : attrs_(read_window_attrs(info)), p_(read_p(info)) {
    if (attrs_.kernel.empty()) info.fail("kernel_shape is required");
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_float(ctx, x.dtype());
    if (x.rank() != attrs_.kernel.size() + 2)
      ctx.fail("input has shape {}, expected N x C and {} spatial axes (kernel_shape [{}])", shape_to_string(x.shape()),
               attrs_.kernel.size(), fmt::join(attrs_.kernel, ","));
    const Window w = window(ctx);
    Shape out = {x.dim(0), x.dim(1)};
    out.insert(out.end(), w.out.begin(), w.out.end());
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Window w = window(ctx);
    const Tensor& x = ctx.input(0);
    const int64_t planes = x.dim(0) * x.dim(1);
    ctx.stats().flops = 2.0 * static_cast<double>(planes) * w.out_size() * w.kernel_size();
    ctx.stats().variant = "lppool_ranges";
    if (ctx.output(0).numel() == 0) return;
    with_float_data(ctx, [&](const auto* px, auto* py) { run(ctx, w, planes, px, py); });
  }

 private:
  Window window(const KernelContext& ctx) const {
    const Shape& s = ctx.input(0).shape();
    return resolve_window(ctx, attrs_, std::vector<int64_t>(s.begin() + 2, s.end()), attrs_.kernel);
  }

  template <typename T>
  void run(KernelContext& ctx, const Window& w, int64_t planes, const T* x, T* y) const {
    const size_t r = w.rank;
    const int64_t IP = w.in_size(), OP = w.out_size();
    const std::vector<int64_t> in_strides = row_major_strides(w.in);
    parallel_for(ctx.reference_mode() ? nullptr : ctx.threads(), planes, 1, [&](int64_t p0, int64_t p1) {
      std::vector<int64_t> oc(r), lo(r), hi(r), kc(r);
      for (int64_t pl = p0; pl < p1; ++pl) {
        const T* xp = x + pl * IP;
        for (int64_t o = 0; o < OP; ++o) {
          unravel_index(o, w.out, oc.data());
          bool empty = false;
          for (size_t d = 0; d < r; ++d) {  // taps k with 0 <= start + k * dil < in
            const WindowTaps t = window_taps(w, d, oc[d]);
            lo[d] = t.lo, hi[d] = t.hi;
            empty = empty || lo[d] >= hi[d];
            kc[d] = lo[d];
          }
          double sum = 0;
          while (!empty) {
            int64_t off = 0;
            for (size_t d = 0; d < r; ++d)
              off += (oc[d] * w.stride[d] - w.pad_begin[d] + kc[d] * w.dilation[d]) * in_strides[d];
            sum += lp_term(xp[off], p_);
            size_t d = r;
            while (d-- > 0 && ++kc[d] == hi[d]) kc[d] = lo[d];
            if (d == static_cast<size_t>(-1)) break;
          }
          y[pl * OP + o] = static_cast<T>(lp_root(sum, p_));
        }
      }
    });
  }

  WindowAttrs attrs_;
  double p_;
};

// GlobalLpPool: one window over each whole plane; output N x C x 1 x .. x 1.
class GlobalLpPoolKernel : public Kernel {
 public:
  explicit GlobalLpPoolKernel(const KernelInfo& info) : p_(read_p(info)) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    check_float(ctx, x.dtype());
    if (x.rank() < 3) ctx.fail("input has shape {}, expected N x C x D1 [x D2 ...]", shape_to_string(x.shape()));
    Shape out(x.rank(), 1);
    out[0] = x.dim(0), out[1] = x.dim(1);
    ctx.allocate_output(0, x.dtype(), out);
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t planes = x.dim(0) * x.dim(1), size = shape_product(x.shape(), 2, x.rank());
    ctx.stats().flops = 2.0 * x.numel();
    ctx.stats().variant = "global_lppool";
    with_float_data(ctx, [&](const auto* px, auto* py) {
      parallel_for(ctx.reference_mode() ? nullptr : ctx.threads(), planes, 1, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          double sum = 0;
          for (int64_t i = 0; i < size; ++i) sum += lp_term(px[p * size + i], p_);
          py[p] = static_cast<std::remove_reference_t<decltype(*py)>>(lp_root(sum, p_));
        }
      });
    });
  }

 private:
  double p_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("lp_pool", "", "LpPool", 1, INT_MAX, make_kernel<LpPoolKernel>);
ONNXMINI_REGISTER_KERNEL("lp_pool", "", "GlobalLpPool", 1, INT_MAX, make_kernel<GlobalLpPoolKernel>);

}  // namespace nn
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_lp_pool);
