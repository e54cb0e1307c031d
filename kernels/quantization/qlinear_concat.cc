// com.microsoft QLinearConcat: inputs Y_scale, Y_zero_point, then one
// (X, X_scale, X_zero_point) triple per tensor; attribute axis. uint8 or int8,
// per-tensor parameters. An input with the output's scale and zero point is
// copied; any other is requantized through a 256-entry table
// q -> sat(round((q - zx) * sx / sy) + zy) (quant::build_lookup, the same
// float expression as DequantizeLinear followed by QuantizeLinear).
// Data layout: the output viewed as [outer, sum of the inputs' axis * inner];
// each input contributes one contiguous block per outer index.
#include <cstring>
#include <vector>

#include "kernels/quantization/quant_common.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace {

class QLinearConcatKernel : public Kernel {
 public:
  explicit QLinearConcatKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis")) {
    if (info.num_inputs < 5 || (info.num_inputs - 2) % 3 != 0)
      info.fail("expects Y_scale, Y_zero_point and (X, X_scale, X_zero_point) triples, got {} inputs",
                info.num_inputs);
  }

  void prepare(KernelContext& ctx) override {
    const size_t n = (ctx.num_inputs() - 2) / 3;
    const Tensor& first = ctx.input(2);
    const DType t = first.dtype();
    if (t != DType::UInt8 && t != DType::Int8)
      ctx.unsupported("X dtype {} is not supported (uint8, int8)", dtype_name(t));
    const int64_t rank = static_cast<int64_t>(first.rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) ctx.fail("axis {} is out of range for inputs of rank {}", axis_, rank);
    Shape out = first.shape();
    for (size_t k = 1; k < n; ++k) {
      const Tensor& x = ctx.input(2 + 3 * k);
      if (x.dtype() != t) ctx.fail("input {} is {} but input 2 is {}", 2 + 3 * k, dtype_name(x.dtype()), dtype_name(t));
      if (static_cast<int64_t>(x.rank()) != rank)
        ctx.fail("input {} has rank {}, want {}", 2 + 3 * k, x.rank(), rank);
      for (int64_t d = 0; d < rank; ++d)
        if (d != axis && x.dim(d) != out[d])
          ctx.fail("input {} has shape {}, which differs from {} outside axis {}", 2 + 3 * k,
                   shape_to_string(x.shape()), shape_to_string(first.shape()), axis);
      out[axis] += x.dim(axis);
    }
    ctx.allocate_output(0, t, out);
  }

  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const DType t = y.dtype();
    const size_t n = (ctx.num_inputs() - 2) / 3;
    const int64_t rank = static_cast<int64_t>(y.rank()), axis = axis_ < 0 ? axis_ + rank : axis_;
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= y.dim(d);
    for (int64_t d = axis + 1; d < rank; ++d) inner *= y.dim(d);
    const float sy = quant::scalar_scale(ctx, 0, "Y_scale");
    const int32_t zy = quant::scalar_zero_point(ctx, 1, t, "Y_zero_point");
    uint8_t* out = static_cast<uint8_t*>(y.raw_mut());
    const int64_t out_row = y.dim(axis) * inner;
    int64_t col = 0;
    uint8_t table[256];
    for (size_t k = 0; k < n; ++k) {
      const Tensor& x = ctx.input(2 + 3 * k);
      const float sx = quant::scalar_scale(ctx, 3 + 3 * k, "X_scale");
      const int32_t zx = quant::scalar_zero_point(ctx, 4 + 3 * k, t, "X_zero_point");
      const bool copy = sx == sy && zx == zy;
      if (!copy) {
        auto identity = [](float v) { return v; };
        if (t == DType::UInt8) quant::build_lookup(table, sx, zx, sy, zy, identity);
        else quant::build_lookup(reinterpret_cast<int8_t*>(table), sx, zx, sy, zy, identity);
      }
      const int64_t row = x.dim(axis) * inner;
      const uint8_t* in = static_cast<const uint8_t*>(x.raw());
      for (int64_t o = 0; o < outer; ++o) {
        const uint8_t* src = in + o * row;
        uint8_t* dst = out + o * out_row + col;
        if (copy) std::memcpy(dst, src, static_cast<size_t>(row));
        else
          for (int64_t i = 0; i < row; ++i) dst[i] = table[src[i]];
      }
      col += row;
    }
  }

 private:
  int64_t axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("qlinear_concat", "com.microsoft", "QLinearConcat", 1, INT_MAX,
                         make_kernel<QLinearConcatKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(quantization_qlinear_concat);
