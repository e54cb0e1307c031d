// SequenceEmpty and SequenceConstruct (opset 11+): make a sequence. Items share
// the inputs' buffers (tensors are immutable once produced), so no data moves.
#include "kernels/registry.h"
#include "kernels/sequence/sequence_util.h"

namespace onnxmini {
namespace {

class SequenceEmptyKernel : public Kernel {
 public:
  explicit SequenceEmptyKernel(const KernelInfo&) {}
  void prepare(KernelContext& ctx) override { ctx.set_output(0, Value::sequence({})); }
  void compute(KernelContext&) override {}
};

class SequenceConstructKernel : public Kernel {
 public:
  explicit SequenceConstructKernel(const KernelInfo& info) {
    if (info.num_inputs == 0) info.fail("needs at least one input");
  }
  void prepare(KernelContext& ctx) override {
    std::vector<Value> items;
    items.reserve(ctx.num_inputs());
    for (size_t i = 0; i < ctx.num_inputs(); ++i) {
      const Tensor& t = ctx.input(i);
      sequence::check_dtype(ctx, items, t, fmt::format("input {}", i).c_str());
      items.emplace_back(t);
    }
    ctx.set_output(0, Value::sequence(std::move(items)));
  }
  void compute(KernelContext&) override {}
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("sequence_empty", "", "SequenceEmpty", 11, INT_MAX, make_kernel<SequenceEmptyKernel>);
ONNXMINI_REGISTER_KERNEL("sequence_construct", "", "SequenceConstruct", 11, INT_MAX,
                         make_kernel<SequenceConstructKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_construct);
