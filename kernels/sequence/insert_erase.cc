// SequenceInsert and SequenceErase (opset 11+): a new sequence with one tensor
// added or removed. The input sequence is shared and immutable, so the output
// is a fresh list of the same (shared) tensors.
#include "kernels/registry.h"
#include "kernels/sequence/sequence_util.h"

namespace onnxmini {
namespace {

class SequenceInsertKernel : public Kernel {
 public:
  explicit SequenceInsertKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const std::vector<Value>& items = sequence::input_items(ctx, 0);
    const Tensor& t = ctx.input(1);
    sequence::check_dtype(ctx, items, t, "the inserted tensor");
    // Default: append.
    const int64_t at = ctx.has_input(2) ? sequence::position(ctx, 2, items.size(), true)
                                        : static_cast<int64_t>(items.size());
    std::vector<Value> out(items);
    out.insert(out.begin() + at, Value(t));
    ctx.set_output(0, Value::sequence(std::move(out)));
  }
  void compute(KernelContext&) override {}
};

class SequenceEraseKernel : public Kernel {
 public:
  explicit SequenceEraseKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override {
    const std::vector<Value>& items = sequence::input_items(ctx, 0);
    if (items.empty()) ctx.fail("cannot erase from an empty sequence");
    // Default: the last tensor.
    const int64_t at = ctx.has_input(1) ? sequence::position(ctx, 1, items.size(), false)
                                        : static_cast<int64_t>(items.size()) - 1;
    std::vector<Value> out(items);
    out.erase(out.begin() + at);
    ctx.set_output(0, Value::sequence(std::move(out)));
  }
  void compute(KernelContext&) override {}
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("sequence_insert", "", "SequenceInsert", 11, INT_MAX, make_kernel<SequenceInsertKernel>);
ONNXMINI_REGISTER_KERNEL("sequence_erase", "", "SequenceErase", 11, INT_MAX, make_kernel<SequenceEraseKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_insert_erase);
