// ai.onnx.ml ArrayFeatureExtractor: picks columns of the last dimension.
//   Z[..., j] = X[..., Y[j]]
//
// Layout: X is viewed as outer x stride (stride = last dimension), row-major;
// Y is a flat list of int64 column indices (any shape). Z has X's shape with
// the last dimension replaced by len(Y); a 1-D X gives Z of shape [1, len(Y)]
// (onnxruntime's behaviour, kept for compatibility). Elements are copied by
// size (1, 2, 4, 8 bytes) or as std::string, so every dtype works.
#include <cstring>

#include "kernels/registry.h"
#include "core/thread_pool.h"

namespace onnxmini {
namespace ml {
namespace {

template <typename T>
void gather_columns(const T* x, T* z, int64_t row_begin, int64_t row_end, int64_t stride, const int64_t* idx,
                    int64_t n) {
  for (int64_t r = row_begin; r < row_end; ++r)
    for (int64_t j = 0; j < n; ++j) z[r * n + j] = x[r * stride + idx[j]];
}

class ArrayFeatureExtractorKernel : public Kernel {
 public:
  explicit ArrayFeatureExtractorKernel(const KernelInfo&) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    if (x.rank() == 0) ctx.fail("X is a scalar; expected at least one dimension");
    if (y.dtype() != DType::Int64) ctx.fail("Y (indices) has dtype {}; expected int64", dtype_name(y.dtype()));
    if (y.numel() == 0) ctx.fail("Y (indices) is empty");
    const int64_t stride = x.dim(x.rank() - 1);
    const int64_t* idx = y.data<int64_t>();
    for (int64_t j = 0; j < y.numel(); ++j)
      if (idx[j] < 0 || idx[j] >= stride) ctx.fail("index Y[{}] = {} is out of range [0, {})", j, idx[j], stride);
    Shape z = x.rank() == 1 ? Shape{1, y.numel()} : x.shape();
    z.back() = y.numel();
    ctx.allocate_output(0, x.dtype(), z);
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    switch (x.dtype() == DType::String ? 0 : dtype_size(x.dtype())) {
      case 0: run<std::string>(ctx); break;
      case 1: run<uint8_t>(ctx); break;
      case 2: run<uint16_t>(ctx); break;
      case 4: run<uint32_t>(ctx); break;
      case 8: run<uint64_t>(ctx); break;
      default: ctx.fail("dtype {} is not supported", dtype_name(x.dtype()));
    }
  }

 private:
  // T is the element's storage type (same size), not necessarily its dtype.
  template <typename T>
  void run(KernelContext& ctx) const {
    const Tensor& x = ctx.input(0);
    const Tensor& y = ctx.input(1);
    const int64_t stride = x.dim(x.rank() - 1), n = y.numel();
    const int64_t rows = stride == 0 ? 0 : x.numel() / stride;
    const T* xs = static_cast<const T*>(x.raw());
    T* zs = static_cast<T*>(ctx.output(0).raw_mut());
    const int64_t* idx = y.data<int64_t>();
    if (ctx.reference_mode() || std::is_same_v<T, std::string>) {
      gather_columns(xs, zs, 0, rows, stride, idx, n);
      return;
    }
    const int64_t grain = std::max<int64_t>(1, 16384 / n);
    parallel_for(ctx.threads(), rows, grain, [&](int64_t r0, int64_t r1) { gather_columns(xs, zs, r0, r1, stride, idx, n); });
  }
};

ONNXMINI_REGISTER_KERNEL("array_feature_extractor", "ai.onnx.ml", "ArrayFeatureExtractor", 1, INT_MAX, make_kernel<ArrayFeatureExtractorKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_array_feature_extractor);
