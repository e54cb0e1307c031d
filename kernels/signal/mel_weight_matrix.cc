// MelWeightMatrix (opset 17): the [dft_length / 2 + 1, num_mel_bins] matrix
// that maps a one-sided magnitude spectrum to mel bands, as the ONNX
// reference defines it: num_mel_bins + 2 points equally spaced on the mel
// scale (mel = 2595 log10(1 + hz / 700)) from lower_edge_hertz, with step
// (mel(upper) - mel(lower)) / (num_mel_bins + 2), mapped to spectrogram bins
// floor((dft_length + 1) * hz / sample_rate); band i is the triangle rising
// from point i to point i + 1 and falling to point i + 2 (a zero-width rise
// puts 1 at the centre). Computed in double, stored in output_datatype
// (default float32; any numeric type).
#include <cmath>

#include "core/checked_math.h"
#include "kernels/registry.h"
#include "kernels/signal/signal_util.h"
#include "kernels/typed_store.h"

namespace onnxmini {
namespace signal {
namespace {

class MelWeightMatrixKernel : public Kernel {
 public:
  explicit MelWeightMatrixKernel(const KernelInfo& info)
      : out_dtype_(output_dtype(info, info.attrs.get_int("output_datatype", 1))) {}

  void prepare(KernelContext& ctx) override {
    const Params p = params(ctx);
    ctx.allocate_output(0, out_dtype_, {p.dft_length / 2 + 1, p.mel_bins});
  }

  void compute(KernelContext& ctx) override {
    const Params p = params(ctx);
    Tensor& y = ctx.output(0);
    ctx.stats().variant = "mel_weight_matrix";
    const int64_t spectrogram_bins = p.dft_length / 2 + 1, M = p.mel_bins;
    for (int64_t i = 0; i < y.numel(); ++i) store_number(y, i, 0.0);
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low = mel(p.lower), high = mel(p.upper), step = (high - low) / static_cast<double>(M + 2);
    std::vector<int64_t> point(M + 2);
    for (int64_t i = 0; i < M + 2; ++i) {
      const double hz = 700.0 * (std::pow(10.0, (low + step * static_cast<double>(i)) / 2595.0) - 1.0);
      const double bin = std::floor(static_cast<double>(p.dft_length + 1) * hz / p.sample_rate);
      if (!(bin >= 0) || bin >= static_cast<double>(spectrogram_bins))
        ctx.fail("mel point {} ({} Hz) falls on spectrogram bin {}, outside [0, {}): lower_edge_hertz {}, "
                 "upper_edge_hertz {}, sample_rate {}, dft_length {}",
                 i, hz, bin, spectrogram_bins, p.lower, p.upper, p.sample_rate, p.dft_length);
      point[i] = static_cast<int64_t>(bin);
    }
    for (int64_t i = 0; i < M; ++i) {
      const int64_t left = point[i], centre = point[i + 1], right = point[i + 2];
      if (centre == left) {
        store_number(y, centre * M + i, 1.0);
      } else {
        for (int64_t j = left; j <= centre; ++j)
          store_number(y, j * M + i, static_cast<double>(j - left) / static_cast<double>(centre - left));
      }
      for (int64_t j = centre; j < right; ++j)
        store_number(y, j * M + i, static_cast<double>(right - j) / static_cast<double>(right - centre));
    }
  }

 private:
  struct Params {
    int64_t mel_bins, dft_length;
    double sample_rate, lower, upper;
  };
  Params params(const KernelContext& ctx) const {
    Params p{scalar_int(ctx, 0, "num_mel_bins"), scalar_int(ctx, 1, "dft_length"),
             static_cast<double>(scalar_int(ctx, 2, "sample_rate")), scalar_number(ctx, 3, "lower_edge_hertz"),
             scalar_number(ctx, 4, "upper_edge_hertz")};
    if (p.mel_bins < 1 || p.dft_length < 1 || p.sample_rate <= 0)
      ctx.fail("num_mel_bins ({}), dft_length ({}) and sample_rate ({}) must be positive", p.mel_bins, p.dft_length,
               p.sample_rate);
    if (!(p.lower >= 0) || !(p.upper > p.lower) || !std::isfinite(p.upper))
      ctx.fail("want 0 <= lower_edge_hertz < upper_edge_hertz, got {} and {}", p.lower, p.upper);
    return p;
  }
  DType out_dtype_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("mel_weight_matrix", "", "MelWeightMatrix", 17, INT_MAX, make_kernel<MelWeightMatrixKernel>);

}  // namespace signal
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(signal_mel_weight_matrix);
