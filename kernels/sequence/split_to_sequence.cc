// SplitToSequence (opset 11+): cuts a tensor along `axis` into a sequence.
// `split` absent: pieces of size 1, the axis dropped unless keepdims=1 (default).
// `split` a scalar s: pieces of s (the last may be shorter). `split` 1-D: those
// sizes, which must sum to the axis length. keepdims applies only without split.
#include "kernels/registry.h"
#include "kernels/sequence/sequence_util.h"

namespace onnxmini {
namespace {

class SplitToSequenceKernel : public Kernel {
 public:
  explicit SplitToSequenceKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis", 0)), keepdims_(info.attrs.get_int("keepdims", 1) != 0) {}

  void prepare(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const int64_t r = static_cast<int64_t>(x.rank());
    if (axis_ < -r || axis_ >= r || r == 0)
      ctx.fail("axis {} is out of range for input of shape {}", axis_, shape_to_string(x.shape()));
  }

  void compute(KernelContext& ctx) override {
    const Tensor& x = ctx.input(0);
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + static_cast<int64_t>(x.rank()) : axis_);
    const int64_t len = x.dim(axis);
    const bool has_split = ctx.has_input(1);
    const std::vector<int64_t> sizes = has_split ? split_sizes(ctx, len) : std::vector<int64_t>(len, 1);
    const bool drop_axis = !has_split && !keepdims_;
    const int64_t outer = sequence::product(x.shape(), 0, axis);
    const int64_t inner = sequence::product(x.shape(), axis + 1, x.rank());
    const size_t width = x.dtype() == DType::String ? sizeof(std::string) : dtype_size(x.dtype());

    std::vector<Value> items;
    items.reserve(sizes.size());
    int64_t start = 0;
    for (int64_t size : sizes) {
      Shape shape = x.shape();
      shape[axis] = size;
      if (drop_axis) shape.erase(shape.begin() + static_cast<std::ptrdiff_t>(axis));
      Tensor piece = ctx.scratch(x.dtype(), shape);
      const char* src = static_cast<const char*>(x.raw()) + static_cast<size_t>(start * inner) * width;
      sequence::copy_rows(x.dtype(), src, piece.raw_mut(), outer, size * inner, len * inner, size * inner);
      items.emplace_back(std::move(piece));
      start += size;
    }
    ctx.set_output(0, Value::sequence(std::move(items)));
  }

 private:
  std::vector<int64_t> split_sizes(const KernelContext& ctx, int64_t len) const {
    const Tensor& s = ctx.input(1);
    if (s.dtype() != DType::Int64 && s.dtype() != DType::Int32)
      ctx.fail("split must be int32 or int64, got {}", dtype_name(s.dtype()));
    const std::vector<int64_t> v = s.to_int64_vector();
    if (s.rank() == 0) {
      if (v[0] <= 0) ctx.fail("split {} must be positive", v[0]);
      std::vector<int64_t> sizes;
      for (int64_t left = len; left > 0; left -= v[0]) sizes.push_back(std::min(left, v[0]));
      return sizes;
    }
    if (s.rank() != 1) ctx.fail("split must be a scalar or 1-D, got shape {}", shape_to_string(s.shape()));
    int64_t total = 0;
    for (int64_t x : v) {
      if (x < 0) ctx.fail("split sizes must not be negative, got {}", x);
      total += x;
    }
    if (total != len) ctx.fail("split sizes sum to {} but the axis has length {}", total, len);
    return v;
  }

  int64_t axis_;
  bool keepdims_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("split_to_sequence", "", "SplitToSequence", 11, INT_MAX,
                         make_kernel<SplitToSequenceKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_split_to_sequence);
