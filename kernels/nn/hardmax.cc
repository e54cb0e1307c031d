// Hardmax (opsets 1-13): 1 at the first maximum of each vector, 0 elsewhere.
// Opsets before 13 flatten the input to 2-D at `axis` (default 1) and take the
// maximum over each whole row; opset 13 works along the single axis `axis`
// (default -1), like Softmax (nn/softmax.cc). float32, float64, float16,
// bfloat16 (compared as float32: the conversion keeps order and ties).
//
// Layout: (outer, len, inner) around the axis (inner = 1 before opset 13);
// each of the outer * inner vectors is scanned once with stride `inner`.
#include <cstring>

#include "core/float16.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

class HardmaxKernel : public Kernel {
 public:
  explicit HardmaxKernel(const KernelInfo& info)
      : opset_(info.opset), axis_(info.attrs.get_int("axis", info.opset >= 13 ? -1 : 1)) {
    info.require_dtype(0, {DType::Float32, DType::Float64, DType::Float16, DType::BFloat16});
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const DType t = x.dtype();
    if (t != DType::Float32 && t != DType::Float64 && t != DType::Float16 && t != DType::BFloat16)
      ctx.unsupported("input dtype {} is not supported (float32, float64, float16, bfloat16)", dtype_name(t));
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (opset_ >= 13) tensor_ops::normalize_axis(ctx, axis_, rank);
    else if (axis_ < -rank || axis_ > rank) ctx.fail("axis {} is out of range [{}, {}]", axis_, -rank, rank);
    ctx.allocate_output(0, t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const Shape& s = x.shape();
    const int64_t rank = static_cast<int64_t>(s.size());
    int64_t outer, len, inner;
    if (opset_ >= 13) {
      const int64_t a = tensor_ops::normalize_axis(ctx, axis_, rank);
      outer = shape_product(s, 0, a);
      len = s[a];
      inner = shape_product(s, a + 1, rank);
    } else {
      const int64_t a = axis_ < 0 ? axis_ + rank : axis_;
      outer = shape_product(s, 0, a);
      len = shape_product(s, a, rank);
      inner = 1;
    }
    std::memset(y.raw_mut(), 0, y.nbytes());  // all-zero bits are 0 in every float type
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t i = 0; i < inner; ++i) {
        const int64_t base = o * len * inner + i;
        int64_t best = 0;
        double best_v = value(x, base);
        for (int64_t j = 1; j < len; ++j) {
          const double v = value(x, base + j * inner);
          if (v > best_v) best_v = v, best = j;
        }
        set_one(y, base + best * inner);
      }
  }

 private:
  static double value(const Tensor& t, int64_t i) {
    switch (t.dtype()) {
      case DType::Float32: return t.data<float>()[i];
      case DType::Float64: return t.data<double>()[i];
      case DType::Float16: return half_to_float(static_cast<const uint16_t*>(t.raw())[i]);
      default: return bfloat16_to_float(static_cast<const uint16_t*>(t.raw())[i]);
    }
  }
  static void set_one(Tensor& t, int64_t i) {
    switch (t.dtype()) {
      case DType::Float32: t.mutable_data<float>()[i] = 1.f; break;
      case DType::Float64: t.mutable_data<double>()[i] = 1.0; break;
      case DType::Float16: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_half(1.f); break;
      default: static_cast<uint16_t*>(t.raw_mut())[i] = float_to_bfloat16(1.f);
    }
  }

  int opset_;
  int64_t axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("hardmax", "", "Hardmax", 1, INT_MAX, make_kernel<HardmaxKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(nn_hardmax);
