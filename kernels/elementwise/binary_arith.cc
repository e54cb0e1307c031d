// Add, Sub, Mul, Div with numpy broadcasting (float, double, int32, int64).
// Data layout: the BroadcastPlan merges axes so the work is a sequence of
// contiguous runs; each run is vector-vector, vector-scalar or scalar-vector,
// written as plain loops the compiler vectorises. Runs are split across threads.
#include "kernels/elementwise/broadcast.h"
#include "kernels/registry.h"
#include "runtime/thread_pool.h"

namespace onnxmini {

namespace {

struct AddOp { template <typename T> static T apply(T a, T b) { return a + b; } };
struct SubOp { template <typename T> static T apply(T a, T b) { return a - b; } };
struct MulOp { template <typename T> static T apply(T a, T b) { return a * b; } };
struct DivOp {
  template <typename T> static T apply(T a, T b) { return a / b; }
};

template <typename Op, typename T>
void binary_runs(const BroadcastPlan& plan, const T* a, const T* b, T* out, ThreadPool* pool) {
  const int64_t inner = plan.inner;
  const bool va = plan.inner_stride(0) != 0, vb = plan.inner_stride(1) != 0;
  const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner));
  parallel_for(pool, plan.outer, grain, [&](int64_t r0, int64_t r1) {
    std::vector<int64_t> off;
    for (int64_t r = r0; r < r1; ++r) {
      plan.run_offsets(r, off);
      const T* pa = a + off[0];
      const T* pb = b + off[1];
      T* po = out + r * inner;
      if (va && vb) for (int64_t i = 0; i < inner; ++i) po[i] = Op::apply(pa[i], pb[i]);
      else if (va) { const T s = pb[0]; for (int64_t i = 0; i < inner; ++i) po[i] = Op::apply(pa[i], s); }
      else if (vb) { const T s = pa[0]; for (int64_t i = 0; i < inner; ++i) po[i] = Op::apply(s, pb[i]); }
      else { const T v = Op::apply(pa[0], pb[0]); for (int64_t i = 0; i < inner; ++i) po[i] = v; }
    }
  });
}

template <typename Op>
class BinaryArithKernel : public Kernel {
 public:
  explicit BinaryArithKernel(const KernelInfo& info) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    if (a.dtype() != b.dtype())
      ctx.fail("inputs have different dtypes ({} and {})", dtype_name(a.dtype()), dtype_name(b.dtype()));
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
    const Tensor& b = ctx.input(1);
    Tensor& y = ctx.output(0);
    BroadcastPlan plan({a.shape(), b.shape()});
    ctx.stats().flops = static_cast<double>(y.numel());
    switch (a.dtype()) {
      case DType::Float32: return binary_runs<Op>(plan, a.data<float>(), b.data<float>(), y.mutable_data<float>(), ctx.threads());
      case DType::Float64: return binary_runs<Op>(plan, a.data<double>(), b.data<double>(), y.mutable_data<double>(), ctx.threads());
      case DType::Int32: return int_run<int32_t>(ctx, plan, a, b, y);
      case DType::Int64: return int_run<int64_t>(ctx, plan, a, b, y);
      default: ctx.unsupported("dtype {} is not supported", dtype_name(a.dtype()));
    }
  }

 private:
  template <typename T>
  void int_run(KernelContext& ctx, const BroadcastPlan& plan, const Tensor& a, const Tensor& b, Tensor& y) {
    if (std::is_same<Op, DivOp>::value) {  // integer division by zero is undefined behaviour: report it
      const T* pb = b.data<T>();
      for (int64_t i = 0; i < b.numel(); ++i)
        if (pb[i] == 0) ctx.fail("integer division by zero (divisor element {})", i);
    }
    binary_runs<Op>(plan, a.data<T>(), b.data<T>(), y.mutable_data<T>(), ctx.threads());
  }
};

}  // namespace

// Opset 7 introduced numpy broadcasting; 13 and 14 only widened the type lists.
ONNXMINI_REGISTER_KERNEL("", "Add", 7, INT_MAX, make_kernel<BinaryArithKernel<AddOp>>);
ONNXMINI_REGISTER_KERNEL("", "Sub", 7, INT_MAX, make_kernel<BinaryArithKernel<SubOp>>);
ONNXMINI_REGISTER_KERNEL("", "Mul", 7, INT_MAX, make_kernel<BinaryArithKernel<MulOp>>);
ONNXMINI_REGISTER_KERNEL("", "Div", 7, INT_MAX, make_kernel<BinaryArithKernel<DivOp>>);

}  // namespace onnxmini
