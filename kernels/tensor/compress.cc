// Compress (opsets 9-28): keeps the slices of the input along `axis` (or the
// elements of the flattened input when `axis` is absent) whose entry in the
// 1-D bool condition is true. A condition shorter than the axis drops the
// slices past its end; a longer one is an error naming both lengths. Any dtype.
//
// Layout: the input is (outer, len, inner) around the axis (outer = inner = 1
// when flattened); each kept slice index copies one `inner` block per outer.
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class CompressKernel : public Kernel {
 public:
  explicit CompressKernel(const KernelInfo& info)
      : has_axis_(info.attrs.has("axis")), axis_(info.attrs.get_int("axis", 0)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& cond = ctx.input(1);
    if (cond.dtype() != DType::Bool || cond.rank() != 1)
      ctx.fail("condition must be a 1-D bool tensor, got {} of shape {}", dtype_name(cond.dtype()),
               shape_to_string(cond.shape()));
    const int64_t len = has_axis_ ? x.dim(normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()))) : x.numel();
    if (cond.numel() > len)
      ctx.fail("condition has {} entries but the {} has {}", cond.numel(), has_axis_ ? "axis" : "flattened input", len);
    int64_t kept = 0;
    for (int64_t i = 0; i < cond.numel(); ++i) kept += cond.data<bool>()[i] ? 1 : 0;
    Shape out = {kept};
    if (has_axis_) {
      out = x.shape();
      out[normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()))] = kept;
    }
    ctx.allocate_output(0, x.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& cond = ctx.input(1);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    int64_t outer = 1, len = x.numel(), inner = 1;
    if (has_axis_) {
      const int64_t a = normalize_axis(ctx, axis_, static_cast<int64_t>(x.rank()));
      outer = shape_product(x.shape(), 0, a);
      len = x.dim(a);
      inner = shape_product(x.shape(), a + 1, x.rank());
    }
    const bool* c = cond.data<bool>();
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(x);
      T* out = elems_mut<T>(y);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t j = 0; j < cond.numel(); ++j)
          if (c[j]) out = std::copy(in + (o * len + j) * inner, in + (o * len + j + 1) * inner, out);
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("compress", "", "Compress", 9, INT_MAX, make_kernel<CompressKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_compress);
