// com.microsoft QLinearSoftmax: X, X_scale, x_zero_point, y_scale, y_zero_point;
// attributes axis and opset (the ai.onnx Softmax version the node replaces:
// below 13 the softmax runs over the flattened axes [axis, rank), default axis
// 1; from 13 over `axis` alone, default -1). uint8 or int8.
// Per row: p_i = exp((x_i - max x) * x_scale) / sum_j exp((x_j - max x) * x_scale)
// (the zero point cancels), y_i = sat(round(p_i / y_scale) + y_zero_point).
// The 256 possible exp values of a row are one table indexed by max x - x_i,
// built once per run in double precision.
// Data layout: the softmax axis is made innermost by viewing X as
// [outer, D, inner] and walking a row with stride `inner`; rows across threads.
#include <cmath>
#include <vector>

#include "core/thread_pool.h"
#include "kernels/quantization/quant_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

class QLinearSoftmaxKernel : public Kernel {
 public:
  explicit QLinearSoftmaxKernel(const KernelInfo& info)
      : opset_(info.attrs.get_int("opset", 13)), axis_(info.attrs.get_int("axis", opset_ < 13 ? 1 : -1)) {
    info.require_dtype(0, {DType::UInt8, DType::Int8});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.dtype() != DType::UInt8 && x.dtype() != DType::Int8)
      ctx.unsupported("X dtype {} is not supported (uint8, int8)", dtype_name(x.dtype()));
    const int64_t rank = static_cast<int64_t>(x.rank()), axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) ctx.fail("axis {} is out of range for rank {}", axis_, rank);
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (x.numel() == 0) return;
    const float sx = quant::scalar_scale(ctx, 1, "X_scale"), sy = quant::scalar_scale(ctx, 3, "y_scale");
    const int32_t zy = quant::scalar_zero_point(ctx, 4, x.dtype(), "y_zero_point");
    quant::scalar_zero_point(ctx, 2, x.dtype(), "x_zero_point");  // checked; cancels in the softmax
    const int64_t rank = static_cast<int64_t>(x.rank()), axis = axis_ < 0 ? axis_ + rank : axis_;
    int64_t outer = 1, d = 1, inner = 1;
    for (int64_t k = 0; k < axis; ++k) outer *= x.dim(k);
    if (opset_ < 13) {
      for (int64_t k = axis; k < rank; ++k) d *= x.dim(k);
    } else {
      d = x.dim(axis);
      for (int64_t k = axis + 1; k < rank; ++k) inner *= x.dim(k);
    }
    // exp_of_gap[g] = exp(-g * x_scale) for the gap g = max - x_i in 0..255.
    double exp_of_gap[256];
    for (int g = 0; g < 256; ++g) exp_of_gap[g] = std::exp(-static_cast<double>(g) * static_cast<double>(sx));
    quant::visit_quant_int(x.dtype(), [&](auto tag) {
      using Q = decltype(tag);
      if constexpr (sizeof(Q) == 1) {
        const Q* in = x.data<Q>();
        Q* out = y.mutable_data<Q>();
        parallel_for(ctx.threads(), outer * inner, std::max<int64_t>(1, 4096 / d), [&](int64_t b, int64_t e) {
          for (int64_t r = b; r < e; ++r) {
            const int64_t base = (r / inner) * d * inner + r % inner;
            int32_t mx = in[base];
            for (int64_t i = 1; i < d; ++i) mx = std::max<int32_t>(mx, in[base + i * inner]);
            double sum = 0;
            for (int64_t i = 0; i < d; ++i) sum += exp_of_gap[mx - in[base + i * inner]];
            for (int64_t i = 0; i < d; ++i) {
              const float p = static_cast<float>(exp_of_gap[mx - in[base + i * inner]] / sum);
              out[base + i * inner] = quant::quantize_value<Q>(p, sy, zy);
            }
          }
        });
      }
    });
  }

 private:
  int64_t opset_, axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_softmax", "com.microsoft", "QLinearSoftmax", 1, INT_MAX,
                         make_kernel<QLinearSoftmaxKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_softmax);
