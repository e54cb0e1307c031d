// com.microsoft QGemm (onnxruntime's quantized Gemm, written by its quantizer for Gemm nodes):
//   acc = (op(A) - a_zp)(op(B) - b_zp) + C            int32; C broadcast to M x N
//   Y   = acc * (alpha * a_scale * b_scale[n] / y_scale) requantized to y_zp's type, or
//   Y   = acc * (alpha * a_scale * b_scale[n])           float, when y_scale is absent.
// C is int32 quantized with scale alpha * a_scale * b_scale and zero point 0 (the op's
// contract). transA / transB as Gemm. A constant B is transposed if needed and packed once.
// Layout: row-major 2-D A (M x K or K x M) and B (K x N or N x K); Y is M x N.
#include "kernels/quantization/qop_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace quant {
namespace {

class QGemmKernel : public Kernel {
 public:
  explicit QGemmKernel(const KernelInfo& info)
      : trans_a_(info.attrs.get_int("transA", 0) != 0),
        trans_b_(info.attrs.get_int("transB", 0) != 0),
        alpha_(info.attrs.get_float("alpha", 1.0f)) {
    const Tensor* b = info.constant_input(3);
    if (b && info.mode == KernelMode::Fast && b->rank() == 2 && is_int8_type(b->dtype())) {
      const int64_t K = trans_b_ ? b->dim(1) : b->dim(0), N = trans_b_ ? b->dim(0) : b->dim(1);
      std::vector<uint8_t> kn;
      const uint8_t* src = static_cast<const uint8_t*>(b->raw());
      if (trans_b_) {
        kn = transposed(src, N, K);
        src = kn.data();
      }
      packed_b_ = gemm::qgemm_pack_b(gemm::active_qisa(), K, N, src, b->dtype() == DType::Int8, N);
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    require_int8(ctx, a, "A");
    require_int8(ctx, b, "B");
    if (a.rank() != 2 || b.rank() != 2)
      ctx.fail("A and B must be 2-D, got {} and {}", shape_to_string(a.shape()), shape_to_string(b.shape()));
    const int64_t M = trans_a_ ? a.dim(1) : a.dim(0), K = trans_a_ ? a.dim(0) : a.dim(1);
    const int64_t KB = trans_b_ ? b.dim(1) : b.dim(0), N = trans_b_ ? b.dim(0) : b.dim(1);
    if (K != KB) ctx.fail("inner dimensions differ: op(A) is {} x {}, op(B) is {} x {}", M, K, KB, N);
    DType yt = DType::Float32;
    if (ctx.has_input(7)) {
      if (!ctx.has_input(8)) ctx.fail("y_scale is given without y_zero_point (it gives the output type)");
      require_int8(ctx, ctx.input(8), "y_zero_point");
      yt = ctx.input(8).dtype();
    }
    ctx.allocate_output(0, yt, {M, N});
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    Tensor& y = ctx.output(0);
    const int64_t M = y.dim(0), N = y.dim(1), K = trans_a_ ? a.dim(0) : a.dim(1);
    ctx.stats().flops = 2.0 * M * N * K;
    ctx.stats().variant = ctx.reference_mode() ? "qgemm_reference" : packed_b_ ? "qgemm_prepacked" : "qgemm";
    const float a_scale = read_scale(ctx, 1, 1, "a_scale")[0];
    const int32_t a_zero = read_zero_point(ctx, 2, a.dtype(), 1, "a_zero_point")[0];
    const std::vector<float> b_scale = read_scale(ctx, 4, N, "b_scale");
    const std::vector<int32_t> b_zero = read_zero_point(ctx, 5, b.dtype(), N, "b_zero_point");

    gemm::QgemmArgs g;
    g.M = M, g.N = N, g.K = K;
    g.A = a.raw(), g.a_signed = a.dtype() == DType::Int8, g.trans_a = trans_a_, g.lda = a.dim(1), g.a_zero = a_zero;
    g.b_signed = b.dtype() == DType::Int8;
    g.b_zero = b_zero.data(), g.b_zero_per_column = b_zero.size() > 1;
    std::vector<uint8_t> kn;
    if (ctx.reference_mode() || !packed_b_) {
      g.B = b.raw(), g.ldb = N;
      if (trans_b_) {
        kn = transposed(static_cast<const uint8_t*>(b.raw()), N, K);
        g.B = kn.data();
      }
    }
    std::vector<float> scale(b_scale.size());
    float y_scale = 1;
    if (ctx.has_input(7)) {
      y_scale = read_scale(ctx, 7, 1, "y_scale")[0];
      g.out.y_zero = read_zero_point(ctx, 8, y.dtype(), 1, "y_zero_point")[0];
      g.out.kind = y.dtype() == DType::UInt8 ? gemm::QgemmOutput::UInt8 : gemm::QgemmOutput::Int8;
    } else {
      g.out.kind = gemm::QgemmOutput::Float;
    }
    for (size_t n = 0; n < scale.size(); ++n) {
      scale[n] = alpha_ * a_scale * b_scale[n];
      if (ctx.has_input(7)) scale[n] /= y_scale;
    }
    g.out.scale = scale.data(), g.out.scale_per_column = scale.size() > 1;
    g.out.y = y.raw_mut(), g.out.ldy = N;
    if (ctx.has_input(6)) {  // C: int32, unidirectionally broadcast to M x N
      const Tensor& c = ctx.input(6);
      if (c.dtype() != DType::Int32) ctx.fail("C has dtype {}; it must be int32", dtype_name(c.dtype()));
      const Shape& cs = c.shape();
      const int64_t cm = cs.size() >= 2 ? cs[cs.size() - 2] : 1, cn = cs.empty() ? 1 : cs.back();
      if (cs.size() > 2 || (cm != 1 && cm != M) || (cn != 1 && cn != N))
        ctx.fail("C {} does not broadcast to {} x {}", shape_to_string(cs), M, N);
      g.out.bias_i32 = c.data<int32_t>();
      g.out.bias_row_stride = cm == 1 ? 0 : cn;
      g.out.bias_col_step = cn == 1 ? 0 : 1;
    }
    if (y.numel() == 0) return;
    run_qgemm(ctx, g, packed_b_.get());
  }

 private:
  // rows x cols bytes -> cols x rows.
  static std::vector<uint8_t> transposed(const uint8_t* src, int64_t rows, int64_t cols) {
    std::vector<uint8_t> t(static_cast<size_t>(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c) t[c * rows + r] = src[r * cols + c];
    return t;
  }

  bool trans_a_, trans_b_;
  float alpha_;
  std::shared_ptr<gemm::QPackedB> packed_b_;  // constant B as K x N, packed at session creation
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qgemm", "com.microsoft", "QGemm", 1, INT_MAX, make_kernel<QGemmKernel>);

}  // namespace quant
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qgemm_op);
