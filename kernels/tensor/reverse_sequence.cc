// ReverseSequence (opsets 10-28): for each batch entry b, the first
// sequence_lens[b] slices along time_axis are reversed, the rest copied.
// time_axis and batch_axis are 0 and 1 in either order; sequence_lens is int64
// [batch], each in [0, max_len]. Any dtype.
//
// Layout: the input is [T, B, inner] (time_axis 0) or [B, T, inner]; every
// (t, b) pair copies one contiguous `inner` block from its source time index.
#include "kernels/registry.h"
#include "kernels/tensor/tensor_utils.h"

namespace onnxmini {

namespace {

using namespace tensor_ops;

class ReverseSequenceKernel : public Kernel {
 public:
  explicit ReverseSequenceKernel(const KernelInfo& info)
      : time_axis_(info.attrs.get_int("time_axis", 0)), batch_axis_(info.attrs.get_int("batch_axis", 1)) {
    if (!((time_axis_ == 0 && batch_axis_ == 1) || (time_axis_ == 1 && batch_axis_ == 0)))
      info.fail("time_axis {} and batch_axis {} must be 0 and 1 (in either order)", time_axis_, batch_axis_);
  }

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const Tensor& lens = ctx.input(1);
    if (x.rank() < 2) ctx.fail("input must have rank >= 2, got shape {}", shape_to_string(x.shape()));
    if (lens.dtype() != DType::Int64 || lens.rank() != 1 || lens.dim(0) != x.dim(batch_axis_))
      ctx.fail("sequence_lens must be int64 [{}] (the batch size), got {} of shape {}", x.dim(batch_axis_),
               dtype_name(lens.dtype()), shape_to_string(lens.shape()));
    const int64_t max_len = x.dim(time_axis_);
    for (int64_t b = 0; b < lens.numel(); ++b) {
      const int64_t l = lens.data<int64_t>()[b];
      if (l < 0 || l > max_len) ctx.fail("sequence_lens[{}] = {} is out of range [0, {}]", b, l, max_len);
    }
    ctx.allocate_output(0, x.dtype(), x.shape());
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    Tensor& y = ctx.output(0);
    if (y.numel() == 0) return;
    const int64_t* lens = ctx.input(1).data<int64_t>();
    const int64_t steps = x.dim(time_axis_), batch = x.dim(batch_axis_);
    const int64_t inner = shape_product(x.shape(), 2, x.rank());
    // Element offset of block (t, b) in the [T, B] or [B, T] layout.
    auto block = [&](int64_t t, int64_t b) { return (time_axis_ == 0 ? t * batch + b : b * steps + t) * inner; };
    dispatch_by_width(ctx, x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = elems<T>(x);
      T* out = elems_mut<T>(y);
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t src_t = t < lens[b] ? lens[b] - 1 - t : t;
          const T* src = in + block(src_t, b);
          std::copy(src, src + inner, out + block(t, b));
        }
    });
  }

 private:
  int64_t time_axis_, batch_axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("reverse_sequence", "", "ReverseSequence", 10, INT_MAX, make_kernel<ReverseSequenceKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(tensor_reverse_sequence);
