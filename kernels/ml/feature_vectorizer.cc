// ai.onnx.ml FeatureVectorizer: concatenates its inputs column-wise into one
// float matrix, input i contributing exactly inputdimensions[i] columns
// (cut short, or zero-padded when the input has fewer).
//
// Layout: each input is [C] (one row) or [N, C] (N rows; every input must
// have the same N); higher ranks are read as [N, prod(rest)]. Y is
// [N, sum(inputdimensions)] float32, filled row by row.
#include <algorithm>

#include "core/checked_math.h"
#include "kernels/registry.h"

namespace onnxmini {
namespace ml {
namespace {

class FeatureVectorizerKernel : public Kernel {
 public:
  explicit FeatureVectorizerKernel(const KernelInfo& info) : dims_(info.attrs.get_ints("inputdimensions", {})) {
    for (size_t i = 0; i < dims_.size(); ++i) {
      if (dims_[i] < 0) info.fail("inputdimensions[{}] is {}; expected >= 0", i, dims_[i]);
      // Sizes come from the model: the sum is checked, not wrapped.
      const auto sum = try_add(total_, dims_[i]);
      if (!sum) info.fail("inputdimensions sum overflows int64 at index {} ({})", i, dims_[i]);
      total_ = *sum;
    }
    if (info.num_inputs != dims_.size())
      info.fail("has {} inputs but inputdimensions has {} values; they must be equal", info.num_inputs, dims_.size());
  }

  void prepare(KernelContext& ctx) override { ctx.allocate_output(0, DType::Float32, {rows(ctx), total_}); }

  void compute(KernelContext& ctx) override {
    const int64_t n = rows(ctx);
    float* y = ctx.output(0).mutable_data<float>();
    int64_t col = 0;
    for (size_t i = 0; i < dims_.size(); ++i) {
      const Tensor& x = ctx.input(i);
      const int64_t cols = n == 0 ? 0 : x.numel() / n;
      const int64_t take = std::min(cols, dims_[i]);
      for (int64_t r = 0; r < n; ++r) {
        float* dst = y + r * total_ + col;
        for (int64_t c = 0; c < take; ++c) dst[c] = value(x, r * cols + c);
        std::fill(dst + take, dst + dims_[i], 0.0f);
      }
      col += dims_[i];
    }
  }

 private:
  static float value(const Tensor& x, int64_t i) {
    switch (x.dtype()) {
      case DType::Float32: return x.data<float>()[i];
      case DType::Float64: return static_cast<float>(x.data<double>()[i]);
      case DType::Int64: return static_cast<float>(x.data<int64_t>()[i]);
      default: return static_cast<float>(x.data<int32_t>()[i]);
    }
  }

  // The common row count; checks dtypes and agreement.
  int64_t rows(const KernelContext& ctx) const {
    int64_t n = -1;
    for (size_t i = 0; i < dims_.size(); ++i) {
      const Tensor& x = ctx.input(i);
      const DType t = x.dtype();
      if (t != DType::Float32 && t != DType::Float64 && t != DType::Int64 && t != DType::Int32)
        ctx.fail("input {} has dtype {}; expected float, double, int64 or int32", i, dtype_name(t));
      const int64_t r = x.rank() <= 1 ? 1 : x.dim(0);
      if (n >= 0 && r != n) ctx.fail("input {} has {} rows but input 0 has {}", i, r, n);
      n = r;
    }
    return std::max<int64_t>(n, 0);
  }

  std::vector<int64_t> dims_;
  int64_t total_ = 0;
};

ONNXMINI_REGISTER_KERNEL("feature_vectorizer", "ai.onnx.ml", "FeatureVectorizer", 1, INT_MAX,
                         make_kernel<FeatureVectorizerKernel>);

}  // namespace
}  // namespace ml
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(ml_feature_vectorizer);
