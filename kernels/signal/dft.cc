// DFT (opsets 17, 20): the discrete Fourier transform of a real or complex
// signal along one axis. X has shape [..., n, ..., c] with c = 1 (real) or
// c = 2 (complex, interleaved re/im); the axis is an attribute at opset 17
// (default 1) and an optional scalar input at opset 20 (default -2), never the
// last (re/im) axis. dft_length (input 1) zero-pads or truncates the signal;
// onesided keeps the first L/2 + 1 frequencies of a forward transform; inverse
// divides by L. inverse with onesided is the inverse real FFT, as onnx 1.23's
// reference defines it: the first L/2 + 1 input frequencies are taken as one
// side of a Hermitian spectrum, the output is real ([..., L, ..., 1]) and L
// defaults to 2 * (n - 1). float32, float64, float16 / bfloat16 (through
// float32); all arithmetic is in double.
//
// Layout: X is viewed as [outer, n, inner, c]. Every (outer, inner) line is
// gathered into a complex buffer of length L, transformed and scattered to
// Y [outer, n_out, inner, c_out]; lines are split across threads. Fast path:
// the FFT plan of length L (kernels/signal/fft.h: radix-2 or Bluestein),
// cached per length; a real forward transform of even length goes through
// the half-length real plan (half the work). Reference: the O(L^2) definition.
#include <algorithm>

#include "core/checked_math.h"
#include "core/shape_util.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/signal/fft.h"
#include "kernels/signal/signal_util.h"

namespace onnxmini {
namespace signal {
namespace {

class DftKernel : public Kernel {
 public:
  explicit DftKernel(const KernelInfo& info)
      : axis_attr_(info.opset < 20 ? info.attrs.get_int("axis", 1) : -2),
        inverse_(info.attrs.get_int("inverse", 0) != 0),
        onesided_(info.attrs.get_int("onesided", 0) != 0),
        axis_is_input_(info.opset >= 20) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Geometry g = geometry(ctx);
    Shape out = ctx.input(0).shape();
    out[g.axis] = g.n_out;
    out.back() = g.c_out;
    ctx.allocate_output(0, ctx.input(0).dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Geometry g = geometry(ctx);
    const int64_t lines = g.outer * g.inner;
    ctx.stats().flops = 5.0 * static_cast<double>(lines) * g.length * std::max(1.0, std::log2(double(g.length)));
    if (ctx.output(0).numel() == 0) return;
    const bool reference = ctx.reference_mode();
    const bool irfft = inverse_ && onesided_;
    // Real forward transforms of even length: the half-length real plan.
    const bool real_path = !reference && g.c_in == 1 && !inverse_ && g.length % 2 == 0;
    ctx.stats().variant = reference ? "dft_naive" : real_path ? "dft_real_fft" : "dft_fft";
    std::shared_ptr<const FftPlan> plan = reference || real_path ? nullptr : plans_.get(g.length);
    std::shared_ptr<const RealFftPlan> real_plan = real_path ? plans_.get_real(g.length) : nullptr;
    FloatInput in(ctx, ctx.input(0));
    FloatOutput out(ctx, ctx.output(0));
    const double scale = inverse_ ? 1.0 / static_cast<double>(g.length) : 1.0;
    const int64_t work_size = reference ? g.length : real_path ? real_plan->work_size() : plan->scratch_size();
    parallel_for(reference ? nullptr : ctx.threads(), lines, std::max<int64_t>(1, 4096 / g.length),
                 [&](int64_t l0, int64_t l1) {
                   std::vector<Complex> buf(g.length), work(std::max<int64_t>(work_size, 1));
                   std::vector<double> real(real_path ? g.length : 0);
                   for (int64_t line = l0; line < l1; ++line) {
                     const int64_t o = line / g.inner, i = line % g.inner;
                     auto at = [&](int64_t j) {  // input element j of this line, as a complex number
                       const int64_t base = ((o * g.n_in + j) * g.inner + i) * g.c_in;
                       return Complex(in.at(base), g.c_in == 2 ? in.at(base + 1) : 0.0);
                     };
                     if (real_path) {
                       const int64_t n = std::min(g.n_in, g.length);
                       for (int64_t j = 0; j < n; ++j) real[j] = in.at((o * g.n_in + j) * g.inner + i);
                       std::fill(real.begin() + n, real.end(), 0.0);
                       real_plan->forward(real.data(), buf.data(), work.data());  // buf[0 .. L/2]
                       for (int64_t k = g.length / 2 + 1; k < g.n_out; ++k) buf[k] = std::conj(buf[g.length - k]);
                     } else {
                       std::fill(buf.begin(), buf.end(), Complex(0, 0));
                       if (irfft) {  // Hermitian spectrum from one side: X[L - k] = conj(X[k])
                         const int64_t side = std::min(g.n_in, g.length / 2 + 1);
                         for (int64_t k = 0; k < side; ++k) {
                           buf[k] = at(k);
                           if (k > 0 && k < g.length) buf[g.length - k] = std::conj(buf[k]);
                         }
                         if (side > 0) buf[0] = Complex(buf[0].real(), 0);
                       } else {
                         for (int64_t j = 0; j < std::min(g.n_in, g.length); ++j) buf[j] = at(j);
                       }
                       if (reference) {
                         naive_dft(buf.data(), work.data(), g.length, inverse_);
                         std::copy(work.begin(), work.begin() + g.length, buf.begin());
                       } else {
                         plan->transform(buf.data(), inverse_, work.data());
                       }
                     }
                     for (int64_t k = 0; k < g.n_out; ++k) {
                       const int64_t base = ((o * g.n_out + k) * g.inner + i) * g.c_out;
                       out.set(base, buf[k].real() * scale);
                       if (g.c_out == 2) out.set(base + 1, buf[k].imag() * scale);
                     }
                   }
                 });
    out.finish();
  }

 private:
  struct Geometry {
    int64_t axis, outer, n_in, inner, c_in, length, n_out, c_out;
  };

  Geometry geometry(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    if (!is_signal_float(x.dtype()))
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(x.dtype()));
    const int64_t r = static_cast<int64_t>(x.rank());
    if (r < 2 || (x.shape().back() != 1 && x.shape().back() != 2))
      ctx.fail("input has shape {}: want rank >= 2 with a last dimension of 1 (real) or 2 (complex)",
               shape_to_string(x.shape()));
    int64_t axis = axis_attr_;
    if (axis_is_input_ && ctx.has_input(2)) axis = scalar_int(ctx, 2, "axis");
    if (axis < -r || axis >= r - 1 || axis == -1)
      ctx.fail("axis {} is out of range for input shape {} (the last axis holds re/im)", axis,
               shape_to_string(x.shape()));
    Geometry g;
    g.axis = axis < 0 ? axis + r : axis;
    g.outer = shape_product(x.shape(), 0, g.axis);
    g.n_in = x.dim(g.axis);
    g.inner = shape_product(x.shape(), g.axis + 1, r - 1);
    g.c_in = x.shape().back();
    const bool irfft = inverse_ && onesided_;
    if (ctx.has_input(1)) {
      g.length = scalar_int(ctx, 1, "dft_length");
      if (g.length < 1) ctx.fail("dft_length must be positive, got {}", g.length);
    } else {
      g.length = irfft ? 2 * (g.n_in - 1) : g.n_in;
      if (g.length < 1)
        ctx.fail("the transform length is {} (axis {} has {} entries{})", g.length, g.axis, g.n_in,
                 irfft ? ", inverse onesided wants 2 * (n - 1)" : "");
    }
    g.n_out = onesided_ && !inverse_ ? g.length / 2 + 1 : g.length;
    g.c_out = irfft ? 1 : 2;
    // The plan and the per-line buffers scale with L, not with the output: refuse a bomb first.
    ctx.check_element_count(DType::Float64, checked_mul(fft_plan_elements(g.length), 4, [&] {
                              return ctx.info().label() + ": dft_length";
                            }),
                            "FFT plan for dft_length");
    return g;
  }

  int64_t axis_attr_;
  bool inverse_, onesided_, axis_is_input_;
  FftPlanCache plans_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("dft", "", "DFT", 17, INT_MAX, make_kernel<DftKernel>);

}  // namespace signal
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(signal_dft);
