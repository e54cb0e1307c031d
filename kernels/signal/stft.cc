// STFT (opset 17): short-time Fourier transform. signal [batch, length, c]
// (c = 1 real, 2 complex), frame_step (scalar), window ([frame_length],
// optional: rectangular when absent), frame_length (scalar, optional: the
// window's length when absent; both given must agree). Output
// [batch, frames, bins, 2] with frames = (length - frame_length) / frame_step
// + 1 and bins = frame_length / 2 + 1 when onesided (default 1), else
// frame_length. float32, float64, float16 / bfloat16 (through float32), in
// double arithmetic.
//
// Layout: one (batch, frame) pair is one line: frame_length samples starting
// at frame * frame_step, multiplied by the window, transformed by the cached
// FFT plan of length frame_length (fft.h) - or the naive DFT in reference
// mode - and the first `bins` frequencies written; a real signal with an even
// frame length uses the half-length real plan. Lines run on threads.
#include <algorithm>

#include "core/checked_math.h"
#include "core/thread_pool.h"
#include "kernels/registry.h"
#include "kernels/signal/fft.h"
#include "kernels/signal/signal_util.h"

namespace onnxmini {
namespace signal {
namespace {

class StftKernel : public Kernel {
 public:
  explicit StftKernel(const KernelInfo& info) : onesided_(info.attrs.get_int("onesided", 1) != 0) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Geometry g = geometry(ctx);
    ctx.allocate_output(0, ctx.input(0).dtype(), {g.batch, g.frames, g.bins, 2});
  }

  void compute(KernelContext& ctx) override {
    const Geometry g = geometry(ctx);
    const int64_t lines = g.batch * g.frames;
    ctx.stats().flops = 5.0 * static_cast<double>(lines) * g.frame_length *
                        std::max(1.0, std::log2(static_cast<double>(g.frame_length)));
    if (ctx.output(0).numel() == 0) return;
    const bool reference = ctx.reference_mode();
    ctx.stats().variant = reference ? "stft_naive" : "stft_fft";
    // A real signal with an even frame length goes through the half-length real plan.
    const bool real_path = !reference && g.c == 1 && g.frame_length % 2 == 0;
    if (real_path) ctx.stats().variant = "stft_real_fft";
    std::shared_ptr<const FftPlan> plan = reference || real_path ? nullptr : plans_.get(g.frame_length);
    std::shared_ptr<const RealFftPlan> real_plan = real_path ? plans_.get_real(g.frame_length) : nullptr;
    FloatInput in(ctx, ctx.input(0));
    std::unique_ptr<FloatInput> window;
    if (ctx.has_input(2)) window = std::make_unique<FloatInput>(ctx, ctx.input(2));
    FloatOutput out(ctx, ctx.output(0));
    const int64_t work_size = reference ? g.frame_length : real_path ? real_plan->work_size() : plan->scratch_size();
    parallel_for(reference ? nullptr : ctx.threads(), lines, std::max<int64_t>(1, 4096 / g.frame_length),
                 [&](int64_t l0, int64_t l1) {
                   std::vector<Complex> buf(g.frame_length), work(std::max<int64_t>(work_size, 1));
                   std::vector<double> real(real_path ? g.frame_length : 0);
                   for (int64_t line = l0; line < l1; ++line) {
                     const int64_t b = line / g.frames, f = line % g.frames;
                     if (real_path) {
                       for (int64_t j = 0; j < g.frame_length; ++j)
                         real[j] = in.at(b * g.length + f * g.step + j) * (window ? window->at(j) : 1.0);
                       real_plan->forward(real.data(), buf.data(), work.data());  // buf[0 .. frame_length/2]
                       for (int64_t k = g.frame_length / 2 + 1; k < g.bins; ++k) buf[k] = std::conj(buf[g.frame_length - k]);
                     } else {
                       for (int64_t j = 0; j < g.frame_length; ++j) {
                         const int64_t at = (b * g.length + f * g.step + j) * g.c;
                         const double w = window ? window->at(j) : 1.0;
                         buf[j] = Complex(in.at(at) * w, g.c == 2 ? in.at(at + 1) * w : 0.0);
                       }
                       if (reference) {
                         naive_dft(buf.data(), work.data(), g.frame_length, false);
                         std::copy(work.begin(), work.begin() + g.frame_length, buf.begin());
                       } else {
                         plan->transform(buf.data(), false, work.data());
                       }
                     }
                     for (int64_t k = 0; k < g.bins; ++k) {
                       out.set((line * g.bins + k) * 2, buf[k].real());
                       out.set((line * g.bins + k) * 2 + 1, buf[k].imag());
                     }
                   }
                 });
    out.finish();
  }

 private:
  struct Geometry {
    int64_t batch, length, c, step, frame_length, frames, bins;
  };

  Geometry geometry(const KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    if (!is_signal_float(x.dtype()))
      ctx.unsupported("signal dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(x.dtype()));
    if (x.rank() != 3 || (x.dim(2) != 1 && x.dim(2) != 2))
      ctx.fail("signal has shape {}: want [batch, length, 1 or 2]", shape_to_string(x.shape()));
    Geometry g{x.dim(0), x.dim(1), x.dim(2), scalar_int(ctx, 1, "frame_step"), 0, 0, 0};
    if (g.step < 1) ctx.fail("frame_step must be positive, got {}", g.step);
    int64_t window_length = -1;
    if (ctx.has_input(2)) {
      const Tensor& w = ctx.input(2);
      if (w.rank() != 1) ctx.fail("window must be 1-D, got shape {}", shape_to_string(w.shape()));
      if (w.dtype() != x.dtype())
        ctx.fail("window has dtype {}, signal has {}", dtype_name(w.dtype()), dtype_name(x.dtype()));
      window_length = w.dim(0);
    }
    if (ctx.has_input(3)) {
      g.frame_length = scalar_int(ctx, 3, "frame_length");
      if (window_length >= 0 && window_length != g.frame_length)
        ctx.fail("frame_length is {} but the window has {} entries", g.frame_length, window_length);
    } else if (window_length >= 0) {
      g.frame_length = window_length;
    } else {
      ctx.fail("needs a window or a frame_length (both are absent)");
    }
    if (g.frame_length < 1 || g.frame_length > g.length)
      ctx.fail("frame_length {} must be in [1, signal length {}]", g.frame_length, g.length);
    g.frames = (g.length - g.frame_length) / g.step + 1;
    g.bins = onesided_ ? g.frame_length / 2 + 1 : g.frame_length;
    ctx.check_element_count(DType::Float64, checked_mul(fft_plan_elements(g.frame_length), 4, [&] {
                              return ctx.info().label() + ": frame_length";
                            }),
                            "FFT plan for frame_length");
    return g;
  }

  bool onesided_;
  FftPlanCache plans_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("stft", "", "STFT", 17, INT_MAX, make_kernel<StftKernel>);

}  // namespace signal
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(signal_stft);
