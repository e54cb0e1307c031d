// QuantizeLinear (ai.onnx opsets 10-latest; com.microsoft 1, which onnxruntime's
// quantizer writes for 16-bit types): y = saturate(round(x / y_scale) + y_zero_point),
// rounding half to even (quant_common.h). x is float32, float16 or bfloat16;
// y is uint8 (default), int8, uint16, int16, int4, uint4, int2, uint2, a float8 type or float4e2m1: the
// zero point's dtype, else the `output_dtype` attribute (opset 21). Parameters
// are per tensor, per axis (`axis`, 1-D scale) or blocked (`block_size`).
// 4- and 2-bit outputs are computed as 8-bit and clamped to [-8, 7] / [0, 15] /
// [-2, 1] / [0, 3]. Float8
// outputs are y = float8(x / y_scale + y_zero_point) with no integer rounding,
// rounded to nearest even, clamped to the type's range when `saturate` (default 1)
// and otherwise inf / NaN on overflow (core/minifloat.h).
//
// Data layout: x is viewed as [outer, axis_dim, inner]; each run of elements
// sharing one (scale, zero point) - the whole tensor, or one `inner` row per
// axis index - goes to the per-ISA quantize lanes (float32 -> 8-bit) or to the
// scalar rule; chunks of the flat index range are split across threads.
#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/quantization/quantize_lanes.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

using quant::ParamLayout;

class QuantizeLinearKernel : public Kernel {
 public:
  explicit QuantizeLinearKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", 1)),
        block_size_(info.attrs.get_int("block_size", 0)),
        output_dtype_(info.attrs.get_int("output_dtype", 0)),
        saturate_(info.attrs.get_int("saturate", 1) != 0) {
    info.require_dtype(0, {DType::Float32, DType::Float16, DType::BFloat16});
    if (block_size_ < 0) info.fail("block_size must be >= 0, got {}", block_size_);
    if (output_dtype_ != 0 && !quant::is_quant_type(static_cast<DType>(output_dtype_)))
      info.unsupported("output_dtype {} is not supported (uint8, int8, uint16, int16, int4, uint4, int2, uint2, float8, float4e2m1)",
                       output_dtype_);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    if (!quant::is_scale_type(x.dtype()))
      ctx.unsupported("x dtype {} is not supported (float32, float16, bfloat16)", dtype_name(x.dtype()));
    if (!quant::is_scale_type(scale.dtype()))
      ctx.fail("y_scale dtype {} is not a float type", dtype_name(scale.dtype()));
    DType out = output_dtype_ != 0 ? static_cast<DType>(output_dtype_) : DType::UInt8;
    if (ctx.has_input(2)) {
      const DType zp = ctx.input(2).dtype();
      if (!quant::is_quant_type(zp))
        ctx.unsupported("y_zero_point dtype {} is not supported (uint8, int8, uint16, int16, int4, uint4, int2, uint2, float8, float4e2m1)",
                        dtype_name(zp));
      if (output_dtype_ != 0 && zp != out)
        ctx.fail("output_dtype {} differs from y_zero_point dtype {}", dtype_name(out), dtype_name(zp));
      out = zp;
    }
    quant::param_layout(ctx, x.shape(), scale.shape(), axis_, block_size_);
    quant::check_zero_point_shape(ctx, 2, scale.shape());
    ctx.allocate_output(0, out, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale_t = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (x.numel() == 0) return;
    const ParamLayout p = quant::param_layout(ctx, x.shape(), scale_t.shape(), axis_, block_size_);
    // Parameters as float / int32 arrays (scratch only when a conversion is needed).
    const int64_t np = std::max<int64_t>(1, scale_t.numel());
    Tensor scale_buf, zp_buf = ctx.scratch(DType::Int32, {np});
    const float* scale = nullptr;
    if (scale_t.dtype() == DType::Float32) {
      scale = scale_t.data<float>();
    } else {
      scale_buf = ctx.scratch(DType::Float32, {np});
      for (int64_t i = 0; i < np; ++i) scale_buf.mutable_data<float>()[i] = quant::float_at(scale_t, i);
      scale = scale_buf.data<float>();
    }
    int32_t* zp = zp_buf.mutable_data<int32_t>();
    if (const MiniFloatFormat* f = minifloat_format(y.dtype()))
      return quantize_float8(ctx, x, scale, p, *f, y);
    for (int64_t i = 0; i < np; ++i) zp[i] = ctx.has_input(2) ? quant::int_at(ctx.input(2), i) : 0;

    const quant::QuantizeLanes& lanes = quant::quantize_lanes();
    const bool reference = ctx.reference_mode();
    const bool low_bit = quant::is_low_bit_int(y.dtype());
    const DType compute = low_bit ? quant::low_bit_compute_type(y.dtype()) : y.dtype();
    quant::visit_quant_int(compute, [&](auto tag) {
      using Q = decltype(tag);
      Q* out = static_cast<Q*>(y.raw_mut());
      const int64_t n = x.numel();
      parallel_for(ctx.threads(), n, 16384, [&](int64_t begin, int64_t end) {
        // Walk [begin, end) in runs of constant parameters.
        int64_t k = begin;
        while (k < end) {
          const int64_t row = k / p.inner, i = k % p.inner, o = row / p.axis_dim, a = row % p.axis_dim;
          const int64_t pi = p.index(o, a, i);
          int64_t run_end = p.kind == ParamLayout::Kind::Blocked ? k + 1 : std::min(end, (row + 1) * p.inner);
          if (p.kind == ParamLayout::Kind::PerTensor) run_end = end;
          run(x, k, run_end - k, out + k, scale[pi], zp[pi], lanes, reference);
          k = run_end;
        }
        if (low_bit) quant::clamp_to_low_bits(static_cast<uint8_t*>(y.raw_mut()) + begin, end - begin, y.dtype());
      });
    });
  }

 private:
  // Quantizes elements [k, k + len) of x with one (scale, zp).
  template <class Q>
  static void run(const Tensor& x, int64_t k, int64_t len, Q* out, float scale, int32_t zp,
                  const quant::QuantizeLanes& lanes, bool reference) {
    if (x.dtype() == DType::Float32 && !reference && len >= 16) {
      if constexpr (std::is_same<Q, uint8_t>::value) return lanes.to_u8(x.data<float>() + k, out, len, scale, zp);
      if constexpr (std::is_same<Q, int8_t>::value) return lanes.to_s8(x.data<float>() + k, out, len, scale, zp);
    }
    for (int64_t j = 0; j < len; ++j) out[j] = quant::quantize_value<Q>(quant::float_at(x, k + j), scale, zp);
  }

  // Float8 output: y = float8(x / scale + zero point), no integer rounding.
  void quantize_float8(KernelContext& ctx, const Tensor& x, const float* scale, const ParamLayout& p,
                       const MiniFloatFormat& f, Tensor& y) const {
    const Tensor* zp_t = ctx.has_input(2) ? &ctx.input(2) : nullptr;
    uint8_t* out = static_cast<uint8_t*>(y.raw_mut());
    const bool saturate = saturate_;
    parallel_for(ctx.threads(), x.numel(), 16384, [&](int64_t begin, int64_t end) {
      for (int64_t k = begin; k < end; ++k) {
        const int64_t row = k / p.inner, i = k % p.inner;
        const int64_t pi = p.index(row / p.axis_dim, row % p.axis_dim, i);
        const float z = zp_t ? minifloat_to_float(static_cast<const uint8_t*>(zp_t->raw())[pi], f) : 0.f;
        out[k] = float_to_minifloat(quant::float_at(x, k) / scale[pi] + z, f, saturate);
      }
    });
  }

  int64_t axis_, block_size_, output_dtype_;
  bool saturate_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("quantize_linear", "", "QuantizeLinear", 10, INT_MAX, make_kernel<QuantizeLinearKernel>);
ONNXMINI_REGISTER_KERNEL("quantize_linear", "com.microsoft", "QuantizeLinear", 1, INT_MAX,
                         make_kernel<QuantizeLinearKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_quantize_linear);
