// SequenceAt and SequenceLength (opset 11+): read one tensor (shared, no copy)
// or the number of tensors (an int64 scalar).
#include "kernels/registry.h"
#include "kernels/sequence/sequence_util.h"

namespace onnxmini {
namespace {

class SequenceAtKernel : public Kernel {
 public:
  explicit SequenceAtKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const std::vector<Value>& items = sequence::input_items(ctx, 0);
    if (items.empty()) ctx.fail("cannot read from an empty sequence");
    ctx.set_output(0, items[sequence::position(ctx, 1, items.size(), false)]);
  }
  void compute(KernelContext&) override {}
};

class SequenceLengthKernel : public Kernel {
 public:
  explicit SequenceLengthKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const int64_t n = static_cast<int64_t>(sequence::input_items(ctx, 0).size());
    ctx.allocate_output(0, DType::Int64, {}).mutable_data<int64_t>()[0] = n;
  }
  void compute(KernelContext&) override {}
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("sequence_at", "", "SequenceAt", 11, INT_MAX, make_kernel<SequenceAtKernel>);
ONNXMINI_REGISTER_KERNEL("sequence_length", "", "SequenceLength", 11, INT_MAX, make_kernel<SequenceLengthKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_at_length);
