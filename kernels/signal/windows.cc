// HannWindow, HammingWindow, BlackmanWindow (opset 17): size (int32 / int64
// scalar) -> a 1-D window of `size` values in output_datatype (default
// float32; any numeric type, converted as numpy's astype: truncation for
// integers). With N = size when periodic (default 1) and size - 1 when
// symmetric, value n is
//   Hann:     0.5 - 0.5 cos(2 pi n / N)
//   Hamming:  25/46 - 21/46 cos(2 pi n / N)
//   Blackman: 0.42 - 0.5 cos(2 pi n / N) + 0.08 cos(4 pi n / N)
// computed in double. A symmetric window of size 1 (N = 0) is [1], numpy's
// convention (the bare formula divides by zero).
#include <cmath>

#include "kernels/registry.h"
#include "kernels/signal/signal_util.h"
#include "kernels/typed_store.h"

namespace onnxmini {
namespace signal {
namespace {

constexpr double kPi = 3.14159265358979323846;

enum class WindowKind { Hann, Hamming, Blackman };

double window_value(WindowKind kind, int64_t n, int64_t N) {
  if (N == 0) return 1.0;
  const double a = 2 * kPi * static_cast<double>(n) / static_cast<double>(N);
  switch (kind) {
    case WindowKind::Hann: return 0.5 - 0.5 * std::cos(a);
    case WindowKind::Hamming: return 25.0 / 46.0 - 21.0 / 46.0 * std::cos(a);
    case WindowKind::Blackman: return 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
  }
  return 0;
}

class WindowKernel : public Kernel {
 public:
  WindowKernel(const KernelInfo& info, WindowKind kind)
      : kind_(kind),
        periodic_(info.attrs.get_int("periodic", 1) != 0),
        out_dtype_(output_dtype(info, info.attrs.get_int("output_datatype", 1))) {}

  void prepare(KernelContext& ctx) override {
    const int64_t size = scalar_int(ctx, 0, "size");
    if (size < 0) ctx.fail("size must be non-negative, got {}", size);
    ctx.allocate_output(0, out_dtype_, {size});
  }

  void compute(KernelContext& ctx) override {
    Tensor& y = ctx.output(0);
    const int64_t size = y.numel(), N = periodic_ ? size : size - 1;
    ctx.stats().variant = "window";
    for (int64_t n = 0; n < size; ++n) store_number(y, n, window_value(kind_, n, N));
  }

 private:
  WindowKind kind_;
  bool periodic_;
  DType out_dtype_;
};

template <WindowKind kKind>
std::unique_ptr<Kernel> make_window(const KernelInfo& info) {
  return std::make_unique<WindowKernel>(info, kKind);
}

}  // namespace

ONNXMINI_REGISTER_KERNEL("windows", "", "HannWindow", 17, INT_MAX, make_window<WindowKind::Hann>);
ONNXMINI_REGISTER_KERNEL("windows", "", "HammingWindow", 17, INT_MAX, make_window<WindowKind::Hamming>);
ONNXMINI_REGISTER_KERNEL("windows", "", "BlackmanWindow", 17, INT_MAX, make_window<WindowKind::Blackman>);

}  // namespace signal
}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(signal_windows);
