// SequenceMap (opset 17+): runs `body` once per item of the first input. Body
// input j gets item i of node input j when that input is a sequence (all
// sequences must have the same length) or node input j whole when it is a
// tensor. Body output k of every iteration becomes item i of node output k,
// which is a sequence. The body runs through its Subgraph handle in this node's
// scope, as Loop's does.
#include "kernels/registry.h"
#include "kernels/sequence/sequence_util.h"

namespace onnxmini {
namespace {

class SequenceMapKernel : public Kernel {
 public:
  explicit SequenceMapKernel(const KernelInfo& info) : body_(info.subgraph("body")) {
    if (body_.num_inputs() != info.num_inputs)
      info.fail("body takes {} inputs, the node has {}", body_.num_inputs(), info.num_inputs);
    if (body_.num_outputs() != info.num_outputs)
      info.fail("body has {} outputs, the node has {}", body_.num_outputs(), info.num_outputs);
  }

  void prepare(KernelContext& ctx) override {
    const size_t n = sequence::input_items(ctx, 0).size();
    for (size_t j = 1; j < ctx.num_inputs(); ++j) {
      const Value& v = ctx.input_value(j);
      if (v.is_sequence() && v.sequence_items().size() != n)
        ctx.fail("input {} is a sequence of {} tensors, input 0 of {}: they must have the same length", j,
                 v.sequence_items().size(), n);
    }
  }

  void compute(KernelContext& ctx) override {
    const size_t n = ctx.input_value(0).sequence_items().size();
    std::vector<std::vector<Value>> results(ctx.num_outputs());
    for (auto& r : results) r.reserve(n);
    std::vector<Value> body_in(ctx.num_inputs()), body_out;
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = 0; j < body_in.size(); ++j) {
        const Value& v = ctx.input_value(j);
        body_in[j] = v.is_sequence() ? v.sequence_items()[i] : v;
      }
      body_.run(ctx, body_in, body_out);
      for (size_t k = 0; k < results.size(); ++k) {
        if (!body_out[k].is_tensor())
          ctx.fail("body output '{}' is {} at item {}, expected a tensor", body_.output_name(k),
                   body_out[k].type_string(), i);
        if (!results[k].empty() && results[k].front().tensor().dtype() != body_out[k].tensor().dtype())
          ctx.fail("body output '{}' is {} at item {} but {} at item 0: a sequence has one element type",
                   body_.output_name(k), body_out[k].type_string(), i, results[k].front().type_string());
        results[k].push_back(std::move(body_out[k]));
      }
    }
    for (size_t k = 0; k < results.size(); ++k) ctx.set_output(k, Value::sequence(std::move(results[k])));
  }

 private:
  const Subgraph& body_;
};

}  // namespace

ONNXMINI_REGISTER_KERNEL("sequence_map", "", "SequenceMap", 17, INT_MAX, make_kernel<SequenceMapKernel>);

}  // namespace onnxmini

ONNXMINI_KERNEL_FILE(sequence_sequence_map);
