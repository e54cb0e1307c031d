// Max, Min, Sum, Mean over 1..N inputs with numpy broadcasting (opset 8+;
// opsets 1 and 6 required equal shapes, which broadcasting also covers).
// Data layout: the output (dense, broadcast shape of all inputs) is first
// filled from input 0, then combined in place with inputs 1..N-1 one at a time:
// each step is a two-input BroadcastPlan (output, input k) walked in contiguous
// runs, so no input is ever materialised at the output's shape. Mean divides
// at the end. The reference path folds the same way per output element, with
// the same rounding to the storage type after each step (matters for float16).
#include <type_traits>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ew {
namespace {

// Max/Min propagate NaN like numpy's maximum/minimum.
struct MaxOp {
  using Types = NumericTypes;
  static constexpr bool kMean = false;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point<C>::value) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return a < b ? b : a;
  }
};
struct MinOp {
  using Types = NumericTypes;
  static constexpr bool kMean = false;
  template <class C> C operator()(C a, C b) const {
    if constexpr (std::is_floating_point<C>::value) {
      if (a != a) return a;
      if (b != b) return b;
    }
    return b < a ? b : a;
  }
};
struct SumOp {
  using Types = FloatTypes;
  static constexpr bool kMean = false;
  template <class C> C operator()(C a, C b) const { return a + b; }
};
struct MeanOp : SumOp {
  static constexpr bool kMean = true;
};

// Returns the second operand: fills the output from input 0.
struct TakeSecond {
  template <class C> C operator()(C, C b) const { return b; }
};

template <typename Op>
class VariadicKernel : public Kernel {
 public:
  explicit VariadicKernel(const KernelInfo&) {}

  void prepare(KernelContext& ctx) override {
    const size_t n = ctx.num_inputs();
    if (n == 0) ctx.fail("needs at least one input");
    std::vector<Shape> shapes;
    const DType dt = ctx.input(0).dtype();
    for (size_t i = 0; i < n; ++i) {
      const Tensor& t = ctx.input(i);
      if (t.dtype() != dt)
        ctx.fail("input {} has dtype {} but input 0 has {}", i, dtype_name(t.dtype()), dtype_name(dt));
      shapes.push_back(t.shape());
    }
    if (!visit(typename Op::Types{}, dt, [](auto) {}))
      ctx.unsupported("inputs have dtype {}; supported: {}", dtype_name(dt), type_names(typename Op::Types{}));
    ctx.allocate_output(0, dt, broadcast_or_fail(ctx, shapes));
  }

  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    ctx.stats().flops = static_cast<double>(y.numel()) * static_cast<double>(ctx.num_inputs());
    visit(typename Op::Types{}, y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      if (ctx.reference_mode()) reference<T>(ctx, y);
      else fast<T>(ctx, y);
    });
  }

 private:
  template <typename T>
  void fast(KernelContext& ctx, Tensor& y) const {
    T* py = mdata<T>(y);
    for (size_t k = 0; k < ctx.num_inputs(); ++k) {
      const Tensor& x = ctx.input(k);
      BroadcastPlan plan({y.shape(), x.shape()});  // operand 0: the output itself (never broadcast)
      if (k == 0) binary_fast(plan, py, cdata<T>(x), py, TakeSecond{}, ctx.threads());
      else binary_fast(plan, py, cdata<T>(x), py, Op{}, ctx.threads());
    }
    if constexpr (Op::kMean) scale<T>(py, y.numel(), ctx.num_inputs(), ctx.threads());
  }

  // For each output element: fold the broadcast input elements left to right.
  template <typename T>
  void reference(KernelContext& ctx, Tensor& y) const {
    using N = Num<T>;
    T* py = mdata<T>(y);
    for (int64_t i = 0; i < y.numel(); ++i) {
      const Tensor& x0 = ctx.input(0);
      T acc = cdata<T>(x0)[broadcast_offset(y.shape(), x0.shape(), i)];
      for (size_t k = 1; k < ctx.num_inputs(); ++k) {
        const Tensor& x = ctx.input(k);
        const T& v = cdata<T>(x)[broadcast_offset(y.shape(), x.shape(), i)];
        acc = N::store(Op{}(N::load(acc), N::load(v)));
      }
      py[i] = acc;
    }
    if constexpr (Op::kMean) scale<T>(py, y.numel(), ctx.num_inputs(), nullptr);
  }

  // Mean: the sum divided by the number of inputs.
  template <typename T>
  static void scale(T* y, int64_t n, size_t count, ThreadPool* pool) {
    using C = compute_t<T>;
    const C divisor = static_cast<C>(count);
    unary_fast(y, y, n, [divisor](C v) { return v / divisor; }, pool);
  }
};

template <typename Op>
std::unique_ptr<Kernel> make_variadic(const KernelInfo& info) {
  return std::make_unique<VariadicKernel<Op>>(info);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("variadic", "", "Max", 1, INT_MAX, make_variadic<MaxOp>);
ONNXMINI_REGISTER_KERNEL("variadic", "", "Min", 1, INT_MAX, make_variadic<MinOp>);
ONNXMINI_REGISTER_KERNEL("variadic", "", "Sum", 1, INT_MAX, make_variadic<SumOp>);
ONNXMINI_REGISTER_KERNEL("variadic", "", "Mean", 1, INT_MAX, make_variadic<MeanOp>);

}  // namespace ew
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(elementwise_variadic);
