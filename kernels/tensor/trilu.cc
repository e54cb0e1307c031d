// Trilu (opset 14): keeps the upper (upper=1) or lower triangle of the last two
// axes, shifted by the optional scalar k (positive: above the main diagonal),
// and zeroes the rest. Any dtype (data movement by element width; strings
// become empty strings).
//
// Layout: the input is a stack of [rows, cols] matrices; row i keeps columns
// j >= i + k (upper) or j <= i + k (lower), so each row is one contiguous kept
// run and one or two zero runs. Matrices are split across threads.
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class TriluKernel : public Kernel {
 public:
  explicit TriluKernel(const KernelInfo& info) : upper_(info.attrs.get_int("upper", 1) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2, got shape {}", shape_to_string(x.shape()));
    if (ctx.has_input(1)) {
      const Tensor& k = ctx.input(1);
      if (k.dtype() != DType::Int64 || k.numel() != 1)
        ctx.fail("k must be an int64 scalar, got {} of shape {}", dtype_name(k.dtype()), shape_to_string(k.shape()));
    }
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const int64_t k = ctx.has_input(1) ? ctx.input(1).data<int64_t>()[0] : 0;
    const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1), mats = x.numel() / (rows * cols);
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(x);
      T* out = elems_mut<T>(y);
      parallel_for(ctx.threads(), mats, std::max<int64_t>(1, 16384 / (rows * cols)), [&](int64_t m0, int64_t m1) {
        for (int64_t m = m0; m < m1; ++m)
          for (int64_t i = 0; i < rows; ++i) {
            const T* src = in + (m * rows + i) * cols;
            T* dst = out + (m * rows + i) * cols;
            // Kept columns [lo, hi): the diagonal i + k clamped to the row, k may be huge.
            const int64_t diag = std::clamp<int64_t>(k >= 0 ? std::min(k, cols) + i : std::max(k, -rows) + i,
                                                     -1, cols + 1);
            const int64_t lo = upper_ ? std::clamp<int64_t>(diag, 0, cols) : 0;
            const int64_t hi = upper_ ? cols : std::clamp<int64_t>(diag + 1, 0, cols);
            for (int64_t j = 0; j < cols; ++j) dst[j] = (j >= lo && j < hi) ? src[j] : T();
          }
      });
    });
  }

 private:
  bool upper_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("trilu", "", "Trilu", 14, INT_MAX, make_kernel<TriluKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_trilu);
