// If: runs then_branch or else_branch on a one-element bool condition; the
// node's outputs are the branch's outputs, whose shapes may differ between the
// branches (and from run to run). The branch runs through its Subgraph handle in
// the scope of this node, so it reads the enclosing graph's values by name.
#include "kernels/registry.h"

namespace onnxmini {
namespace {

class IfKernel : public Kernel {
 public:
  explicit IfKernel(const KernelInfo& info)
      : then_(info.subgraph("then_branch")), else_(info.subgraph("else_branch")) {
    for (const Subgraph* branch : {&then_, &else_})
      if (branch->num_outputs() != info.num_outputs)
        info.fail("{} has {} outputs, the node has {}", branch == &then_ ? "then_branch" : "else_branch",
                  branch->num_outputs(), info.num_outputs);
  }
  void prepare(KernelContext& ctx) override {
    const Tensor& cond = ctx.input(0);
    if (cond.numel() != 1) ctx.fail("condition must hold one element, got shape {}", shape_to_string(cond.shape()));
    if (cond.dtype() != DType::Bool) ctx.fail("condition must be bool, got {}", dtype_name(cond.dtype()));
  }
  void compute(KernelContext& ctx) override {
    const Subgraph& branch = ctx.input(0).data<bool>()[0] ? then_ : else_;
    std::vector<Value> outputs;
    branch.run(ctx, {}, outputs);
    for (size_t i = 0; i < outputs.size(); ++i) ctx.set_output(i, std::move(outputs[i]));
  }

 private:
  const Subgraph& then_;
  const Subgraph& else_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("if", "", "If", 1, INT_MAX, make_kernel<IfKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(control_flow_if);
