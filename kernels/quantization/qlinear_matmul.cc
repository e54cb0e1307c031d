// QLinearMatMul (ai.onnx 10, 21): uint8 / int8 matmul with requantized output,
//   y = saturate(round_half_even((a - a_zp)(b - b_zp) * (a_scale * b_scale[n] / y_scale)) + y_zp)
// on the int8 GEMM engine (kernels/gemm_engine/qgemm.h), whose output stage rounds and
// saturates in the same float arithmetic as onnxruntime (the multiplier is formed in float,
// a_scale * b_scale / y_scale, then applied to the int32 sum converted to float).
// a_scale, a_zp, y_scale, y_zp per tensor; b_scale / b_zp per tensor or per column.
// Layout: row-major, numpy-batched like MatMul; a constant 2-D b is packed once.
#include "kernels/quantization/qop_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace quant {
namespace {

class QLinearMatMulKernel : public Kernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo& info) {
    const Tensor* b = info.constant_input(3);
    if (b && info.mode == KernelMode::Fast && b->rank() == 2 && is_int8_type(b->dtype()))
      packed_b_ = gemm::qgemm_pack_b(gemm::active_qisa(), b->dim(0), b->dim(1), b->raw(), b->dtype() == DType::Int8,
                                     b->dim(1));
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    require_int8(ctx, a, "a");
    require_int8(ctx, b, "b");
    if (!ctx.has_input(7)) ctx.fail("y_zero_point is required (it gives the output type)");
    const Tensor& yz = ctx.input(7);
    require_int8(ctx, yz, "y_zero_point");
    ctx.allocate_output(0, yz.dtype(), make_matmul_plan(ctx, a.shape(), b.shape()).out_shape);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    Tensor& y = ctx.output(0);
    MatMulPlan p = make_matmul_plan(ctx, a.shape(), b.shape());
    fold_batch_into_rows(p);
    ctx.stats().flops = 2.0 * p.batch * p.M * p.N * p.K;
    ctx.stats().variant = ctx.reference_mode() ? "qgemm_reference" : packed_b_ ? "qgemm_prepacked" : "qgemm";
    const float a_scale = read_scale(ctx, 1, 1, "a_scale")[0];
    const int32_t a_zero = read_zero_point(ctx, 2, a.dtype(), 1, "a_zero_point")[0];
    const std::vector<float> b_scale = read_scale(ctx, 4, p.N, "b_scale");
    const std::vector<int32_t> b_zero = read_zero_point(ctx, 5, b.dtype(), p.N, "b_zero_point");
    const float y_scale = read_scale(ctx, 6, 1, "y_scale")[0];
    const int32_t y_zero = read_zero_point(ctx, 7, y.dtype(), 1, "y_zero_point")[0];
    std::vector<float> scale(b_scale.size());
    for (size_t n = 0; n < scale.size(); ++n) scale[n] = a_scale * b_scale[n] / y_scale;
    if (y.numel() == 0) return;
    for (int64_t i = 0; i < p.batch; ++i) {
      gemm::QgemmArgs g = matmul_args(p, i, a, b, a_zero, b_zero);
      g.out.kind = y.dtype() == DType::UInt8 ? gemm::QgemmOutput::UInt8 : gemm::QgemmOutput::Int8;
      g.out.y = static_cast<uint8_t*>(y.raw_mut()) + i * p.M * p.N;
      g.out.ldy = p.N;
      g.out.scale = scale.data();
      g.out.scale_per_column = scale.size() > 1;
      g.out.y_zero = y_zero;
      run_qgemm(ctx, g, packed_b_.get());
    }
  }

 private:
  std::shared_ptr<gemm::QPackedB> packed_b_;  // constant 2-D b, packed at session creation
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_matmul", "", "QLinearMatMul", 10, INT_MAX, make_kernel<QLinearMatMulKernel>);

}  // namespace quant
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_matmul);
