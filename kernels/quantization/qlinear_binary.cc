// com.microsoft QLinearAdd and QLinearMul (what onnxruntime's quantizer writes
// for Add / Mul in QOperator format): A, A_scale, A_zero_point, B, B_scale,
// B_zero_point, C_scale, C_zero_point; uint8 or int8, numpy broadcasting,
// per-tensor parameters. Rounded half to even and saturated (quant_common.h):
//   Add: C = sat(round(a * sa/sc + b * sb/sc + (zc - za * sa/sc - zb * sb/sc)))
//        (the affine form onnxruntime's MLAS evaluates; the spec's
//        dequantize-add-quantize up to float rounding);
//   Mul: C = sat(round((a - za) * (b - zb) * (sa * sb / sc)) + zc).
// Data layout: a BroadcastPlan's runs (kernels/elementwise/broadcast.h), each
// input advancing by 0 or 1 along a run; runs split across threads.
#include <vector>

#include "core/thread_pool.h"
#include "kernels/elementwise/broadcast.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

enum class QBinaryOp { Add, Mul };

template <QBinaryOp OP>
class QLinearBinaryKernel : public Kernel {
 public:
  explicit QLinearBinaryKernel(const KernelInfo& info) {
    info.require_dtype(0, {DType::UInt8, DType::Int8});
    info.require_dtype(3, {DType::UInt8, DType::Int8});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    if (a.dtype() != DType::UInt8 && a.dtype() != DType::Int8)
      ctx.unsupported("A dtype {} is not supported (uint8, int8)", dtype_name(a.dtype()));
    if (b.dtype() != a.dtype()) ctx.fail("A is {} but B is {}", dtype_name(a.dtype()), dtype_name(b.dtype()));
    Shape out;
    try {
      out = broadcast_shapes({a.shape(), b.shape()});
    } catch (const Error& e) {
      ctx.fail("{}", e.what());
    }
    ctx.allocate_output(0, a.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(3);
    Tensor& c = ctx.output(0);
    if (c.numel() == 0) return;
    const DType t = a.dtype();
    const float sa = quant::scalar_scale(ctx, 1, "A_scale"), sb = quant::scalar_scale(ctx, 4, "B_scale"),
                sc = quant::scalar_scale(ctx, 6, "C_scale");
    const int32_t za = quant::scalar_zero_point(ctx, 2, t, "A_zero_point"),
                  zb = quant::scalar_zero_point(ctx, 5, t, "B_zero_point"),
                  zc = quant::scalar_zero_point(ctx, 7, t, "C_zero_point");
    const BroadcastPlan plan({a.shape(), b.shape()});
    quant::visit_quant_int(t, [&](auto tag) {
      using Q = decltype(tag);
      if constexpr (sizeof(Q) == 1) {
        const Q* pa = a.data<Q>();
        const Q* pb = b.data<Q>();
        Q* pc = c.mutable_data<Q>();
        const int64_t inner = plan.inner, sa_step = plan.inner_stride(0), sb_step = plan.inner_stride(1);
        const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner));
        parallel_for(ctx.threads(), plan.outer, grain, [&](int64_t begin, int64_t end) {
          std::vector<int64_t> offsets;
          for (int64_t r = begin; r < end; ++r) {
            plan.run_offsets(r, offsets);
            const Q* ra = pa + offsets[0];
            const Q* rb = pb + offsets[1];
            Q* rc = pc + r * inner;
            if constexpr (OP == QBinaryOp::Add) {
              const float ra_c = sa / sc, rb_c = sb / sc;
              const float fixed = static_cast<float>(zc) - (ra_c * static_cast<float>(za) + rb_c * static_cast<float>(zb));
              for (int64_t i = 0; i < inner; ++i) {
                const float v = static_cast<float>(ra[i * sa_step]) * ra_c + static_cast<float>(rb[i * sb_step]) * rb_c;
                rc[i] = quant::saturate_round<Q>(v + fixed);
              }
            } else {
              const float ratio = sa * sb / sc;
              for (int64_t i = 0; i < inner; ++i) {
                const float v = static_cast<float>(int32_t(ra[i * sa_step]) - za) *
                                static_cast<float>(int32_t(rb[i * sb_step]) - zb) * ratio;
                rc[i] = quant::saturate_round<Q>(std::nearbyint(v) + static_cast<float>(zc));
              }
            }
          }
        });
      }
    });
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_binary", "com.microsoft", "QLinearAdd", 1, INT_MAX,
                         make_kernel<QLinearBinaryKernel<QBinaryOp::Add>>);
ONNXMINI_REGISTER_KERNEL("qlinear_binary", "com.microsoft", "QLinearMul", 1, INT_MAX,
                         make_kernel<QLinearBinaryKernel<QBinaryOp::Mul>>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_binary);
