// MatMulInteger (ai.onnx 10) and onnxruntime's com.microsoft MatMulIntegerToFloat and
// DynamicQuantizeMatMul: numpy-batched matmuls of uint8 / int8 on the int8 GEMM engine
// (kernels/gemm_engine/qgemm.h), with int32 accumulation.
//   MatMulInteger         Y (int32) = (A - a_zp) (B - b_zp)
//   MatMulIntegerToFloat  Y (float) = (A - a_zp) (B - b_zp) * (a_scale * b_scale[n]) + bias[n]
//   DynamicQuantizeMatMul A (float) is quantized to uint8 first, as DynamicQuantizeLinear
//                         does (range including 0, scale = range / 255, zero point rounded
//                         half to even), then as MatMulIntegerToFloat.
// a_zp is per tensor; b_zp and b_scale per tensor or per column (N values). A constant
// 2-D B is packed for the engine once, at session creation. Layout: row-major, A [..., M, K],
// B [..., K, N]; the batch dims broadcast; each output matrix is one engine call.
#include <cmath>

#include "kernels/quantization/qop_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace quant {
namespace {

enum class Flavor { Integer, ToFloat, Dynamic };

// Input slots per flavor.
struct Slots {
  size_t a = 0, b = 1, a_scale = SIZE_MAX, b_scale = SIZE_MAX, a_zero = 2, b_zero = 3, bias = SIZE_MAX;
};
Slots slots_of(Flavor f) {
  Slots s;
  if (f == Flavor::ToFloat) s.a_scale = 2, s.b_scale = 3, s.a_zero = 4, s.b_zero = 5, s.bias = 6;
  if (f == Flavor::Dynamic) s.b_scale = 2, s.a_zero = SIZE_MAX, s.b_zero = 3, s.bias = 4;
  return s;
}

// DynamicQuantizeLinear's parameters for x: the range [min(0, min x), max(0, max x)] over 255
// steps (scale 1 when the range is empty, as onnxruntime does) and the zero point
// round_half_even(clamp(-min / scale, 0, 255)).
void dynamic_params(const float* x, int64_t n, float& scale, int32_t& zero) {
  float lo = 0, hi = 0;
  for (int64_t i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
  }
  scale = hi == lo ? 1.0f : (hi - lo) / 255.0f;
  const float z = std::max(0.0f, std::min(255.0f, 0.0f - lo / scale));
  zero = static_cast<int32_t>(std::nearbyint(z));
}

// q = saturate(round_half_even(x / scale) + zero) into uint8 (onnxruntime divides too).
void quantize_u8(const float* x, int64_t n, float scale, int32_t zero, uint8_t* q) {
  const float lo = -static_cast<float>(zero), hi = 255.0f - static_cast<float>(zero);
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] / scale;
    v = v > lo ? v : lo;  // NaN -> lo
    v = v < hi ? v : hi;
    q[i] = static_cast<uint8_t>(static_cast<int32_t>(std::nearbyint(v)) + zero);
  }
}

class MatMulIntegerKernel : public Kernel {
 public:
  MatMulIntegerKernel(const KernelInfo& info, Flavor f) : flavor_(f), s_(slots_of(f)) {
    const Tensor* b = info.constant_input(s_.b);
    if (b && info.mode == KernelMode::Fast && b->rank() == 2 && is_int8_type(b->dtype()))
      packed_b_ = gemm::qgemm_pack_b(gemm::active_qisa(), b->dim(0), b->dim(1), b->raw(), b->dtype() == DType::Int8,
                                     b->dim(1));
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(s_.a);
    const Tensor& b = ctx.input(s_.b);
    if (flavor_ == Flavor::Dynamic) {
      if (a.dtype() != DType::Float32) ctx.unsupported("A has dtype {}; only float is supported", dtype_name(a.dtype()));
    } else {
      require_int8(ctx, a, "A");
    }
    require_int8(ctx, b, "B");
    const MatMulPlan p = make_matmul_plan(ctx, a.shape(), b.shape());
    ctx.allocate_output(0, flavor_ == Flavor::Integer ? DType::Int32 : DType::Float32, p.out_shape);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a_in = ctx.input(s_.a);
    const Tensor& b = ctx.input(s_.b);
    Tensor& y = ctx.output(0);
    MatMulPlan p = make_matmul_plan(ctx, a_in.shape(), b.shape());
    fold_batch_into_rows(p);
    ctx.stats().flops = 2.0 * p.batch * p.M * p.N * p.K;
    ctx.stats().variant = ctx.reference_mode() ? "qgemm_reference" : packed_b_ ? "qgemm_prepacked" : "qgemm";
    const std::vector<int32_t> b_zero = read_zero_point(ctx, s_.b_zero, b.dtype(), p.N, "b_zero_point");

    // A: the input, or (DynamicQuantizeMatMul) its uint8 quantization.
    Tensor a = a_in;
    Tensor a_q;
    float a_scale = 1;
    int32_t a_zero = 0;
    if (flavor_ == Flavor::Dynamic) {
      dynamic_params(a_in.data<float>(), a_in.numel(), a_scale, a_zero);
      a_q = ctx.scratch(DType::UInt8, a_in.shape());
      quantize_u8(a_in.data<float>(), a_in.numel(), a_scale, a_zero, a_q.mutable_data<uint8_t>());
      a = a_q;
    } else {
      a_zero = read_zero_point(ctx, s_.a_zero, a.dtype(), 1, "a_zero_point")[0];
    }
    if (flavor_ == Flavor::ToFloat) a_scale = read_scale(ctx, s_.a_scale, 1, "a_scale")[0];

    gemm::QgemmOutput out;
    out.ldy = p.N;
    std::vector<float> scale;
    const float* bias = nullptr;
    if (flavor_ == Flavor::Integer) {
      out.kind = gemm::QgemmOutput::Int32;
    } else {
      const std::vector<float> b_scale = read_scale(ctx, s_.b_scale, p.N, "b_scale");
      scale.resize(b_scale.size());
      for (size_t n = 0; n < b_scale.size(); ++n) scale[n] = a_scale * b_scale[n];
      out.kind = gemm::QgemmOutput::Float;
      out.scale = scale.data();
      out.scale_per_column = scale.size() > 1;
      if (ctx.has_input(s_.bias)) {
        const Tensor& bt = ctx.input(s_.bias);
        if (bt.dtype() != DType::Float32 || bt.numel() != p.N)
          ctx.fail("bias must be float with N = {} values, got {} {}", p.N, dtype_name(bt.dtype()), shape_to_string(bt.shape()));
        bias = bt.data<float>();
      }
      out.bias = bias;
    }
    if (y.numel() == 0) return;
    const size_t esize = 4;
    for (int64_t i = 0; i < p.batch; ++i) {
      gemm::QgemmArgs g = matmul_args(p, i, a, b, a_zero, b_zero);
      g.out = out;
      g.out.y = static_cast<uint8_t*>(y.raw_mut()) + i * p.M * p.N * esize;
      run_qgemm(ctx, g, packed_b_.get());
    }
  }

 private:
  Flavor flavor_;
  Slots s_;
  std::shared_ptr<gemm::QPackedB> packed_b_;  // constant 2-D B, packed at session creation
};

template <Flavor F>
std::unique_ptr<Kernel> make(const KernelInfo& info) {
  return std::make_unique<MatMulIntegerKernel>(info, F);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("matmul_integer", "", "MatMulInteger", 10, INT_MAX, make<Flavor::Integer>);
ONNXMINI_REGISTER_KERNEL("matmul_integer", "com.microsoft", "MatMulIntegerToFloat", 1, INT_MAX, make<Flavor::ToFloat>);
ONNXMINI_REGISTER_KERNEL("matmul_integer", "com.microsoft", "DynamicQuantizeMatMul", 1, INT_MAX, make<Flavor::Dynamic>);

}  // namespace quant
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_matmul_integer);
