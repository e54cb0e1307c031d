// OneHot (opsets 9-11): output = indices' shape with a new axis of length
// `depth` inserted at `axis` (default -1, the last); position j along it holds
// values[1] (on) where j == index, values[0] (off) elsewhere. Negative indices
// count from depth (opset 11); an index outside [-depth, depth) gives an all-off
// row, as the schema says. indices and depth: any numeric type (float values
// are truncated); values: any type.
//
// Layout: the output is (outer, depth, inner) around `axis`, the indices
// (outer, inner); it is filled with off, then one element per index set to on.
#include <cmath>

#include "core/checked_math.h"
#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

// Element i of a numeric tensor as int64 (floats truncated toward zero; NaN and
// values beyond int64 fail naming `what`).
int64_t numeric_as_int64(const KernelContext& ctx, const Tensor& t, int64_t i, const char* what) {
  double v = 0;
  int64_t out = 0;
  bool is_int = false;
  ew::visit(ew::NumericTypes{}, t.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const auto x = ew::Num<T>::load(static_cast<const T*>(t.raw())[i]);
    if constexpr (std::is_integral_v<decltype(x)>) {
      if constexpr (std::is_unsigned_v<decltype(x)>)
        if (x > static_cast<uint64_t>(INT64_MAX)) ctx.fail("{} {} does not fit int64", what, x);
      out = static_cast<int64_t>(x);
      is_int = true;
    } else {
      v = static_cast<double>(x);
    }
  });
  if (is_int) return out;
  if (!(std::fabs(v) < 9.2e18)) ctx.fail("{} {} is not a finite value within int64", what, v);
  return static_cast<int64_t>(v);
}

class OneHotKernel : public Kernel {
 public:
  explicit OneHotKernel(const KernelInfo& info) : axis_(info.attrs.get_int("axis", -1)) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& depth_t = ctx.input(1);
    const Tensor& values = ctx.input(2);
    if (dtype_size(indices.dtype()) == 0 || indices.dtype() == DType::String || indices.dtype() == DType::Bool)
      ctx.fail("indices must be numeric, got {}", dtype_name(indices.dtype()));
    if (depth_t.numel() != 1) ctx.fail("depth must be a scalar, got shape {}", shape_to_string(depth_t.shape()));
    if (values.numel() != 2) ctx.fail("values must hold 2 elements [off, on], got shape {}", shape_to_string(values.shape()));
    const int64_t depth = numeric_as_int64(ctx, depth_t, 0, "depth");
    if (depth < 1) ctx.fail("depth {} must be positive", depth);
    const int64_t r = static_cast<int64_t>(indices.rank());
    if (axis_ < -r - 1 || axis_ > r) ctx.fail("axis {} is out of range [{}, {}]", axis_, -r - 1, r);
    const int64_t axis = axis_ < 0 ? axis_ + r + 1 : axis_;
    Shape out = indices.shape();
    out.insert(out.begin() + axis, depth);
    ctx.check_tensor_size(values.dtype(), out, "output");
    ctx.allocate_output(0, values.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& indices = ctx.input(0);
    const Tensor& values = ctx.input(2);
    Tensor& y = ctx.output(0);
    const int64_t depth = numeric_as_int64(ctx, ctx.input(1), 0, "depth");
    const int64_t r = static_cast<int64_t>(indices.rank());
    const int64_t axis = axis_ < 0 ? axis_ + r + 1 : axis_;
    const int64_t outer = shape_product(indices.shape(), 0, axis), inner = shape_product(indices.shape(), axis, r);
    dispatch_by_width(ctx, values.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T off = elems<T>(values)[0], on = elems<T>(values)[1];
      T* out = elems_mut<T>(y);
      std::fill(out, out + y.numel(), off);
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) {
          int64_t v = numeric_as_int64(ctx, indices, o * inner + i, "index");
          if (v < 0) v += depth;
          if (v >= 0 && v < depth) out[(o * depth + v) * inner + i] = on;
        }
    });
  }

 private:
  int64_t axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("one_hot", "", "OneHot", 9, INT_MAX, make_kernel<OneHotKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_one_hot);
