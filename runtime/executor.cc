#include "runtime/executor.h"

#include <fmt/format.h>

#include <cstring>
#include <exception>
#include <new>

#include "runtime/buffer_pool.h"
#include "runtime/profiler_feed.h"

namespace onnxmini {

void ExecutionScope::bind_outer_values() {
  for (const auto& [id, parent_id] : plan_.outer_bindings) values_[id] = parent_->value(parent_id);
}

void ExecutionScope::run_all() {
  for (size_t k = 0; k < plan_.kernels.size(); ++k) run_node(k);
}

const std::atomic<bool> RunState::never_terminate{false};

void ExecutionScope::run_node(size_t k) {
  if (run_.terminate->load(std::memory_order_relaxed))
    throw Error(ErrorCode::Terminated, "Exiting due to terminate flag being set to true.");
  const Graph& g = *plan_.graph;
  const GraphNode& node = g.nodes[k];
  ProfiledRun* trace = run_.trace;
  NodeTimes times;
  times.begin_ns = trace ? Profiler::now_ns() : 0;
  inputs_.clear();
  for (int id : node.inputs) inputs_.push_back(id >= 0 ? &value(id) : nullptr);
  outputs_.assign(node.outputs.size(), Value());

  // Io binding (main graph only): the kernel writes straight into the user's tensor.
  const auto* bound = parent_ ? nullptr : run_.bound;
  KernelContext::BoundOutput bind;
  if (bound && !bound->empty())
    bind = [&](size_t i, DType dt, const Shape& shape) -> Tensor {
      auto it = bound->find(node.outputs[i]);
      if (it == bound->end()) return Tensor();
      const Tensor& t = it->second;
      if (t.dtype() != dt || t.shape() != shape)
        throw Error(ErrorCode::InvalidArgument,
                    fmt::format("bound output '{}' is {} {}, the model produces {} {}", g.value_names[node.outputs[i]],
                                dtype_name(t.dtype()), shape_to_string(t.shape()), dtype_name(dt),
                                shape_to_string(shape)));
      return t;
    };
  const Kernel* kernel_ptr = plan_.kernels[k].get();
  if (!kernel_ptr) throw Error(ErrorCode::RuntimeError, fmt::format("node '{}' ({}) has no kernel", node.name, node.op_type));
  Kernel& kernel = *plan_.kernels[k];
  KernelContext ctx(plan_.infos[k], inputs_, outputs_, *run_.allocator, run_.threads, run_.gemm, bind, this);
  try {
    kernel.prepare(ctx);
    if (trace) times.prepared_ns = Profiler::now_ns();
    kernel.compute(ctx);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    // A kernel's scratch or table beyond the memory there is (tensors are checked against
    // max_tensor_bytes first): the node's error, not a bare std::bad_alloc.
    ctx.fail("ran out of memory (std::bad_alloc) while running");
  } catch (const std::exception& e) {
    ctx.fail("failed: {}", e.what());  // std::length_error from a vector, ...: named like every other error
  }
  if (trace) {
    times.computed_ns = Profiler::now_ns();
    trace->node(plan_.profiled[k], inputs_, outputs_, ctx.stats(), ctx.reference_mode());
  }

  for (size_t i = 0; i < node.outputs.size(); ++i) {
    const int id = node.outputs[i];
    if (id < 0) continue;
    if (outputs_[i].is_none()) ctx.fail("produced no value for output {} '{}'", i, g.value_names[id]);
    if (bound) {
      auto b = bound->find(id);
      if (b != bound->end() && outputs_[i].tensor().raw() != b->second.raw()) {
        // A view (Reshape, Identity...) of another buffer: copy into the bound one.
        const Tensor& src = outputs_[i].tensor();
        if (src.dtype() != b->second.dtype() || src.shape() != b->second.shape())
          ctx.fail("bound output '{}' is {}, the model produces {}", g.value_names[id],
                   shape_to_string(b->second.shape()), shape_to_string(src.shape()));
        std::memcpy(b->second.raw_mut(), src.raw(), src.nbytes());
        outputs_[i] = Value(b->second);
      }
    }
    values_[id] = std::move(outputs_[i]);
  }
  const std::vector<bool>* keep = parent_ ? nullptr : run_.keep;
  for (int id : plan_.release_after[k])
    if (!keep || !(*keep)[id]) values_[id] = Value();
  if (trace) {
    times.end_ns = Profiler::now_ns();
    trace->node_done(times, run_.pool ? run_.pool->live_bytes() : 0);
  }
}

}  // namespace onnxmini
