// NonZero (opsets 9-13): the coordinates of the non-zero elements as int64
// [rank, count], in row-major order (numpy.nonzero). A scalar counts as rank
// 1 (output [1, count], coordinate 0). Numeric types, bool (true), strings
// (non-empty); -0.0 is zero, NaN is non-zero. Data-dependent output shape:
// prepare counts, compute writes.
#include "kernels/elementwise/elementwise.h"
#include "kernels/registry.h"

namespace onnxmini {

namespace {

// Calls fn(i) for each non-zero element i of x, in order.
template <typename Fn>
void for_each_nonzero(const KernelContext& ctx, const Tensor& x, Fn&& fn) {
  const bool known = ew::visit(ew::AllTypes{}, x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* p = static_cast<const T*>(x.raw());
    for (int64_t i = 0; i < x.numel(); ++i) {
      if constexpr (std::is_same_v<T, std::string>) {
        if (!p[i].empty()) fn(i);
      } else {
        if (ew::Num<T>::load(p[i]) != 0) fn(i);
      }
    }
  });
  if (!known) ctx.unsupported("input dtype {} is not supported", dtype_name(x.dtype()));
}

class NonZeroKernel : public Kernel {
 public:
  explicit NonZeroKernel(const KernelInfo&) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    int64_t count = 0;
    for_each_nonzero(ctx, x, [&](int64_t) { ++count; });
    ctx.allocate_output(0, DType::Int64, {std::max<int64_t>(1, static_cast<int64_t>(x.rank())), count});
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    const int64_t count = y.dim(1), rank = static_cast<int64_t>(x.rank());
    int64_t* out = y.mutable_data<int64_t>();
    if (rank == 0) {
      std::fill(out, out + count, 0);
      return;
    }
    std::vector<int64_t> coord(static_cast<size_t>(rank));
    int64_t j = 0;
    for_each_nonzero(ctx, x, [&](int64_t i) {
      unravel_index(i, x.shape(), coord.data());
      for (int64_t d = 0; d < rank; ++d) out[d * count + j] = coord[d];
      ++j;
    });
  }
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("non_zero", "", "NonZero", 9, INT_MAX, make_kernel<NonZeroKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_non_zero);
