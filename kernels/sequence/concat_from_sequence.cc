// ConcatFromSequence (opset 11+): joins a sequence's tensors along `axis`
// (new_axis=0: an existing axis, the other dims must match) or stacks them
// along a new axis inserted at `axis` (new_axis=1: all shapes must match; axis
// may then be -rank-1..rank).
#include "kernels/registry.h"
#include "kernels/sequence/sequence_util.h"

namespace onnxmini {
namespace {

class ConcatFromSequenceKernel : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const KernelInfo& info)
      : axis_(info.attrs.get_int("axis")), new_axis_(info.attrs.get_int("new_axis", 0) != 0) {}

  void prepare(KernelContext& ctx) override {
    const std::vector<Value>& items = sequence::input_items(ctx, 0);
    if (items.empty()) ctx.fail("cannot concatenate an empty sequence");
    const Tensor& first = items.front().tensor();
    const int64_t r = static_cast<int64_t>(first.rank()) + (new_axis_ ? 1 : 0);
    if (axis_ < -r || axis_ >= r)
      ctx.fail("axis {} is out of range [{}, {}] for tensors of shape {}{}", axis_, -r, r - 1,
               shape_to_string(first.shape()), new_axis_ ? " with new_axis" : "");
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
    Shape out = first.shape();
    if (new_axis_) out.insert(out.begin() + static_cast<std::ptrdiff_t>(axis), 0);
    else out[axis] = 0;  // the sum of the items' lengths, below
    for (size_t k = 0; k < items.size(); ++k) {
      const Tensor& t = items[k].tensor();
      if (t.dtype() != first.dtype())
        ctx.fail("tensor {} is {} but tensor 0 is {}", k, dtype_name(t.dtype()), dtype_name(first.dtype()));
      bool same = t.rank() == first.rank();
      for (size_t d = 0; same && d < t.rank(); ++d)
        same = t.dim(d) == first.dim(d) || (!new_axis_ && d == axis);  // concat lets the axis differ
      if (!same)
        ctx.fail("tensor {} has shape {}, incompatible with tensor 0's {} along axis {}", k,
                 shape_to_string(t.shape()), shape_to_string(first.shape()), axis);
      out[axis] += new_axis_ ? 1 : t.dim(axis);
    }
    ctx.allocate_output(0, first.dtype(), out);
  }

  void compute(KernelContext& ctx) override {
    const std::vector<Value>& items = ctx.input_value(0).sequence_items();
    Tensor& y = ctx.output(0);
    const int64_t r = static_cast<int64_t>(y.rank());
    const size_t axis = static_cast<size_t>(axis_ < 0 ? axis_ + r : axis_);
    // y is `outer` rows of y.dim(axis) * inner elements; each item fills a slab of every row.
    const int64_t outer = sequence::product(y.shape(), 0, axis);
    const int64_t inner = sequence::product(y.shape(), axis + 1, y.rank());
    const int64_t row = y.dim(axis) * inner;
    const size_t width = y.dtype() == DType::String ? sizeof(std::string) : dtype_size(y.dtype());
    int64_t at = 0;
    for (const Value& v : items) {
      const Tensor& t = v.tensor();
      const int64_t slab = (new_axis_ ? 1 : t.dim(axis)) * inner;
      char* dst = static_cast<char*>(y.raw_mut()) + static_cast<size_t>(at) * width;
      sequence::copy_rows(t.dtype(), t.raw(), dst, outer, slab, slab, row);
      at += slab;
    }
  }

 private:
  int64_t axis_;
  bool new_axis_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("concat_from_sequence", "", "ConcatFromSequence", 11, INT_MAX,
                         make_kernel<ConcatFromSequenceKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_concat_from_sequence);
