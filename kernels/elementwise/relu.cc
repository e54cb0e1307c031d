// Relu: y = max(x, 0), float and double, contiguous, split across threads.
#include "kernels/registry.h"
#include "runtime/thread_pool.h"

namespace onnxmini {
namespace {

template <typename T>
void relu(const T* x, T* y, int64_t n, ThreadPool* pool) {
  parallel_for(pool, n, 1 << 15, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) y[i] = x[i] > T(0) ? x[i] : T(0);
  });
}

class ReluKernel : public Kernel {
 public:
  explicit ReluKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    ctx.allocate_output(0, x.dtype(), x.shape());
  }
  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    switch (x.dtype()) {
      case DType::Float32: return relu(x.data<float>(), y.mutable_data<float>(), x.numel(), ctx.threads());
      case DType::Float64: return relu(x.data<double>(), y.mutable_data<double>(), x.numel(), ctx.threads());
      case DType::Int32: return relu(x.data<int32_t>(), y.mutable_data<int32_t>(), x.numel(), ctx.threads());
      case DType::Int64: return relu(x.data<int64_t>(), y.mutable_data<int64_t>(), x.numel(), ctx.threads());
      default: ctx.unsupported("dtype {} is not supported", dtype_name(x.dtype()));
    }
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("", "Relu", 6, INT_MAX, make_kernel<ReluKernel>);

}  // namespace onnxmini
