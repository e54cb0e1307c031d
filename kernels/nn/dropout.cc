// Dropout (opsets 1-22). Inference (the default, and every opset before 12):
// the output is the input itself (a view, no copy) and the optional mask is all
// true (bool from opset 10, ones of the input type before). Training mode
// (opset 12+, training_mode input true): each element is dropped with
// probability `ratio` (input, default 0.5, in [0, 1]); kept elements are scaled
// by 1 / (1 - ratio), the mask marks them. ratio 0 keeps everything; ratio 1
// drops everything (output zeros, no division). Element i is kept when the
// i-th uniform draw in [0, 1) is >= ratio; the draws are those of numpy's
// RandomState(seed).uniform (MT19937 seeded with the `seed` attribute, 53-bit
// doubles from two 32-bit outputs), so a seeded node gives the same mask on
// every run and matches onnx's reference implementation; without `seed` each
// run is seeded from std::random_device.
// float32, float64, float16, bfloat16 (halves scaled in float32).
#include <random>

#include "core/float16.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

class DropoutKernel : public Kernel {
 public:
  explicit DropoutKernel(const KernelInfo& info)
      : opset_(info.opset), has_seed_(info.attrs.has("seed")), seed_(info.attrs.get_int("seed", 0)) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    const bool training = training_mode(ctx);
    if (training) {
      const double r = ratio(ctx);
      if (!(r >= 0.0 && r <= 1.0)) ctx.fail("ratio {} is outside [0, 1]", r);
      ctx.allocate_output(0, t, x.shape());
    } else {
      ctx.set_output(0, ctx.input_value(0));
    }
    if (ctx.output_wanted(1)) ctx.allocate_output(1, opset_ >= 10 ? DType::Bool : t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t n = x.numel();
    if (!training_mode(ctx)) {
      if (ctx.output_wanted(1)) fill_ones(ctx.output(1));
      return;
    }
    const double r = ratio(ctx);
    const double scale = r < 1.0 ? 1.0 / (1.0 - r) : 0.0;
    std::mt19937 gen(has_seed_ ? static_cast<uint32_t>(seed_) : std::random_device{}());
    Tensor& y = ctx.output(0);
    bool* mask = ctx.output_wanted(1) ? ctx.output(1).mutable_data<bool>() : nullptr;
    for (int64_t i = 0; i < n; ++i) {
      const bool keep = r < 1.0 && (r == 0.0 || uniform53(gen) >= r);
      if (mask) mask[i] = keep;
      const double v = keep ? read(x, i) * scale : 0.0;
      write(y, i, v);
    }
  }

 private:
  bool training_mode(const KernelContext& ctx) const {
    if (opset_ < 12 || !ctx.has_input(2)) return false;
    const Tensor& t = ctx.input(2);
    if (t.dtype() != DType::Bool || t.numel() != 1)
      ctx.fail("training_mode must be a bool scalar, got {} of shape {}", dtype_name(t.dtype()),
               shape_to_string(t.shape()));
    return t.data<bool>()[0];
  }

  double ratio(const KernelContext& ctx) const {
    if (opset_ < 12 || !ctx.has_input(1)) return 0.5;
    const Tensor& t = ctx.input(1);
    if (t.numel() != 1) ctx.fail("ratio must be a scalar, got shape {}", shape_to_string(t.shape()));
    switch (t.dtype()) {
      case DType::Float32: case DType::Float64: case DType::Float16: case DType::BFloat16: return read(t, 0);
      default: ctx.fail("ratio must be a float tensor, got {}", dtype_name(t.dtype()));
    }
  }

  // numpy's random_sample: (a >> 5) * 2^26 + (b >> 6), over 2^53.
  static double uniform53(std::mt19937& gen) {
    const uint32_t a = gen() >> 5, b = gen() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

  static double read(const Tensor& t, int64_t i) {
    switch (t.dtype()) {
      case DType::Float32: return t.data<float>()[i];
      case DType::Float64: return t.data<double>()[i];
      case DType::Float16: return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
      default: return bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    }
  }

  static void write(Tensor& t, int64_t i, double v) {
    switch (t.dtype()) {
      case DType::Float32: t.mutable_data<float>()[i] = static_cast<float>(v); break;
      case DType::Float64: t.mutable_data<double>()[i] = v; break;
      case DType::Float16: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_half(static_cast<float>(v)); break;
      default: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_bfloat16(static_cast<float>(v));
    }
  }

  // The inference mask: true (bool) or 1 (the input type, opsets before 10).
  static void fill_ones(Tensor& m) {
    if (m.dtype() == DType::Bool) {
      std::fill(m.mutable_data<bool>(), m.mutable_data<bool>() + m.numel(), true);
      return;
    }
    for (int64_t i = 0; i < m.numel(); ++i) write(m, i, 1.0);
  }

  int opset_;
  bool has_seed_;
  int64_t seed_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("dropout", "", "Dropout", 1, INT_MAX, make_kernel<DropoutKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_dropout);
