// DequantizeLinear (ai.onnx opsets 10-latest; com.microsoft 1):
// y = (x - x_zero_point) * x_scale, the difference taken in integers and the
// product in float32 (as onnxruntime does), then rounded once to the output
// type: the scale's dtype (float32, float16, bfloat16), or the `output_dtype`
// attribute where the opset has it. x is uint8, int8, uint16, int16, int32
// (the zero point must then be absent or 0, per the spec), int4, uint4, int2, uint2 or a
// float8 type (y = (float(x) - float(zero point)) * scale). Per tensor, per
// axis (`axis`) or blocked (`block_size`).
//
// Data layout: x viewed as [outer, axis_dim, inner]; flat chunks split across
// threads, each walking runs of constant (scale, zero point); float32 output
// of an 8-bit run is a plain loop the compiler vectorises.
#include <algorithm>

#include "core/thread_pool.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

using quant::ParamLayout;

class DequantizeLinearKernel : public Kernel {
 public:
  explicit DequantizeLinearKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", 1)),
        block_size_(info.attrs.get_int("block_size", 0)),
        output_dtype_(info.attrs.get_int("output_dtype", 0)) {
    info.require_dtype(0, {DType::UInt8, DType::Int8, DType::UInt16, DType::Int16, DType::Int32, DType::Int4,
                           DType::UInt4, DType::Int2, DType::UInt2, DType::Float8E4M3FN, DType::Float8E4M3FNUZ, DType::Float8E5M2,
                           DType::Float8E5M2FNUZ, DType::Float4E2M1});
    if (block_size_ < 0) info.fail("block_size must be >= 0, got {}", block_size_);
    if (output_dtype_ != 0 && !quant::is_scale_type(static_cast<DType>(output_dtype_)))
      info.unsupported("output_dtype {} is not supported (float32, float16, bfloat16)", output_dtype_);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale = ctx.input(1);
    if (!quant::is_quant_type(x.dtype()) && x.dtype() != DType::Int32)
      ctx.unsupported("x dtype {} is not supported (uint8, int8, uint16, int16, int32, int4, uint4, int2, uint2, float8, float4e2m1)",
                      dtype_name(x.dtype()));
    if (!quant::is_scale_type(scale.dtype()))
      ctx.fail("x_scale dtype {} is not a float type", dtype_name(scale.dtype()));
    if (ctx.has_input(2) && ctx.input(2).dtype() != x.dtype())
      ctx.fail("x_zero_point dtype {} differs from x dtype {}", dtype_name(ctx.input(2).dtype()),
               dtype_name(x.dtype()));
    quant::param_layout(ctx, x.shape(), scale.shape(), axis_, block_size_);
    quant::check_zero_point_shape(ctx, 2, scale.shape());
    const DType out = output_dtype_ != 0 ? static_cast<DType>(output_dtype_) : scale.dtype();
    ctx.allocate_output(0, out, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& scale_t = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (x.numel() == 0) return;
    const ParamLayout p = quant::param_layout(ctx, x.shape(), scale_t.shape(), axis_, block_size_);
    const int64_t np = std::max<int64_t>(1, scale_t.numel());
    Tensor params = ctx.scratch(DType::Float32, {np}), zps = ctx.scratch(DType::Int32, {np});
    float* scale = params.mutable_data<float>();
    int32_t* zp = zps.mutable_data<int32_t>();
    for (int64_t i = 0; i < np; ++i) {
      scale[i] = quant::float_at(scale_t, i);
      zp[i] = ctx.has_input(2) ? quant::int_at(ctx.input(2), i) : 0;
    }
    const int64_t n = x.numel();
    auto body = [&](auto tag) {
      using Q = decltype(tag);
      const Q* in = x.data<Q>();
      parallel_for(ctx.threads(), n, 16384, [&](int64_t begin, int64_t end) {
        int64_t k = begin;
        while (k < end) {
          const int64_t row = k / p.inner, i = k % p.inner, o = row / p.axis_dim, a = row % p.axis_dim;
          const int64_t pi = p.index(o, a, i);
          int64_t run_end = p.kind == ParamLayout::Kind::Blocked ? k + 1 : std::min(end, (row + 1) * p.inner);
          if (p.kind == ParamLayout::Kind::PerTensor) run_end = end;
          const float s = scale[pi];
          const int64_t z = zp[pi];
          if (y.dtype() == DType::Float32) {
            float* out = y.mutable_data<float>();
            for (int64_t j = k; j < run_end; ++j) out[j] = static_cast<float>(static_cast<int64_t>(in[j]) - z) * s;
          } else {
            for (int64_t j = k; j < run_end; ++j)
              quant::store_float(y, j, static_cast<float>(static_cast<int64_t>(in[j]) - z) * s);
          }
          k = run_end;
        }
      });
    };
    if (x.dtype() == DType::Int32) {
      body(int32_t{});
    } else if (!quant::visit_quant_int(x.dtype(), body)) {  // 4- and 2-bit ints / float8: one scalar rule
      const MiniFloatFormat* f = minifloat_format(x.dtype());
      const Tensor* zp_t = ctx.has_input(2) ? &ctx.input(2) : nullptr;
      const uint8_t* in = static_cast<const uint8_t*>(x.raw());
      parallel_for(ctx.threads(), n, 16384, [&](int64_t begin, int64_t end) {
        for (int64_t k = begin; k < end; ++k) {
          const int64_t row = k / p.inner, i = k % p.inner;
          const int64_t pi = p.index(row / p.axis_dim, row % p.axis_dim, i);
          float v;
          if (f) {
            const float z = zp_t ? minifloat_to_float(static_cast<const uint8_t*>(zp_t->raw())[pi], *f) : 0.f;
            v = minifloat_to_float(in[k], *f) - z;
          } else {
            v = static_cast<float>(quant::int_at(x, k) - zp[pi]);
          }
          quant::store_float(y, k, v * scale[pi]);
        }
      });
    }
  }

 private:
  int64_t axis_, block_size_, output_dtype_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("dequantize_linear", "", "DequantizeLinear", 10, INT_MAX,
                         make_kernel<DequantizeLinearKernel>);
ONNXMINI_REGISTER_KERNEL("dequantize_linear", "com.microsoft", "DequantizeLinear", 1, INT_MAX,
                         make_kernel<DequantizeLinearKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_dequantize_linear);
