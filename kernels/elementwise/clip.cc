// Clip: y = min(max(x, lo), hi).
// Opsets 1 and 6 read lo/hi from the float attributes min/max; from opset 11
// they are optional scalar inputs 1 and 2 of x's dtype (absent = no bound);
// opset 12 added the integer types. When lo > hi every element becomes hi (as
// the spec says), and NaN stays NaN.
// Data layout: dense input and output of one shape; a flat loop split across threads.
#include <limits>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

template <class C>
struct ClipFn {
  C lo, hi;
  C operator()(C x) const {
    const C above = x < lo ? lo : x;  // x when x is NaN
    return hi < above ? hi : above;
  }
};

class ClipKernel : public Kernel {
 public:
  using Types = NumericTypes;

  explicit ClipKernel(const KernelInfo& info) : legacy_(info.opset < 11) {
    if (legacy_) {
      min_attr_ = info.attrs.get_float("min", std::numeric_limits<float>::lowest());
      max_attr_ = info.attrs.get_float("max", std::numeric_limits<float>::max());
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (!visit(Types{}, x.dtype(), [](auto) {}))
      ctx.unsupported("input has dtype {}; supported: {}", dtype_name(x.dtype()), type_names(Types{}));
    if (legacy_ && x.dtype() != DType::Float32 && x.dtype() != DType::Float64 && x.dtype() != DType::Float16)
      ctx.unsupported("opset {} Clip takes float types only, got {}", ctx.info().opset, dtype_name(x.dtype()));
    for (size_t i = 1; i <= 2 && !legacy_; ++i) {
      if (!ctx.has_input(i)) continue;
      const Tensor& b = ctx.input(i);
      const char* name = i == 1 ? "min" : "max";
      if (b.dtype() != x.dtype())
        ctx.fail("{} has dtype {} but the input has {}", name, dtype_name(b.dtype()), dtype_name(x.dtype()));
      if (b.numel() != 1) ctx.fail("{} must be a scalar, got shape {}", name, shape_to_string(b.shape()));
    }
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    visit(Types{}, x.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      using C = compute_t<T>;
      ClipFn<C> f{std::numeric_limits<C>::lowest(), std::numeric_limits<C>::max()};
      if (legacy_) {
        f.lo = static_cast<C>(min_attr_);
        f.hi = static_cast<C>(max_attr_);
      } else {
        if (ctx.has_input(1)) f.lo = Num<T>::load(cdata<T>(ctx.input(1))[0]);
        if (ctx.has_input(2)) f.hi = Num<T>::load(cdata<T>(ctx.input(2))[0]);
      }
      if (ctx.reference_mode()) unary_reference(cdata<T>(x), mdata<T>(y), x.numel(), f);
      else unary_fast(cdata<T>(x), mdata<T>(y), x.numel(), f, ctx.threads());
    });
  }

 private:
  bool legacy_;
  float min_attr_ = 0, max_attr_ = 0;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("clip", "", "Clip", 1, INT_MAX, make_kernel<ClipKernel>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_clip);
