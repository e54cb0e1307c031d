// EyeLike (opsets 9-22): a 2-D tensor shaped like the input with ones on the
// k-th diagonal (k > 0 above the main one) and zeros elsewhere; the element
// type is the `dtype` attribute, else the input's. Numeric types and bool.
#include <cstring>

#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

class EyeLikeKernel : public Kernel {
 public:
  explicit EyeLikeKernel(const KernelInfo& info) : k_(info.attrs.get_int("k", 0)) {
    if (info.attrs.has("dtype")) {
      const int64_t code = info.attrs.get_int("dtype");
      if (code < INT32_MIN || code > INT32_MAX || !dtype_is_valid(static_cast<int32_t>(code)) || !allowed(DType(code)))
        info.fail("dtype {} is not a supported output type (numeric or bool)", code);
      dtype_ = static_cast<DType>(code);
    }
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.rank() != 2) ctx.fail("input must be 2-D, got shape {}", shape_to_string(x.shape()));
    const DType t = dtype_ == DType::Undefined ? x.dtype() : dtype_;
    if (!allowed(t)) ctx.unsupported("output dtype {} is not supported (numeric or bool)", dtype_name(t));
    ctx.allocate_output(0, t, x.shape());
  }

  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    std::memset(y.raw_mut(), 0, y.nbytes());  // all-zero bits: 0 / false in every allowed type
    const int64_t rows = y.dim(0), cols = y.dim(1);
    ew::visit(ew::concat_t<ew::NumericTypes, ew::BoolTypes>{}, y.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(y.raw_mut());
      const T one = ew::Num<T>::store(1);
      // Row i has its one at column i + k when that column exists.
      for (int64_t i = std::max<int64_t>(0, -k_); i < rows && i + k_ < cols; ++i) out[i * cols + i + k_] = one;
    });
  }

 private:
  static bool allowed(DType t) {
    return t != DType::String && t != DType::Complex64 && t != DType::Complex128 && t != DType::Undefined;
  }

  int64_t k_;
  DType dtype_ = DType::Undefined;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("eye_like", "", "EyeLike", 9, INT_MAX, make_kernel<EyeLikeKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_eye_like);
