// The executor: runs an execution plan (runtime/execution_plan.h) in a frame.
// One executor runs every graph: a session's main graph, constant folding (node
// by node), and each If/Loop/Scan body, nested to any depth.
//
// A frame holds the slots of one graph execution and points to the frame of the
// enclosing graph; a subgraph frame starts by reading its outer-scope values from
// there (shared tensors, no copy), then binds its inputs. Per node the executor
// gathers the inputs (constants from the plan, the rest from the frame), runs
// prepare() and compute(), stores the outputs, releases the values whose last
// reader the node was, and reports the node to the profiler when the run is
// recorded. Run-wide services (allocator, thread pool, GEMM engine, profiler
// trace, io binding) travel in RunState.
#pragma once
#include <atomic>
#include <cstddef>
#include <unordered_map>
#include <vector>

#include "runtime/execution_plan.h"

namespace onnxmini {

class BufferPool;
class ProfiledRun;  // runtime/profiler_feed.h

// What every frame of one run shares.
struct RunState {
  const KernelContext::Allocator* allocator = nullptr;
  ThreadPool* threads = nullptr;
  const gemm::GemmEngine* gemm = nullptr;
  ProfiledRun* trace = nullptr;     // null when this run is not recorded
  const BufferPool* pool = nullptr;  // live bytes for the trace's memory counters
  // Io binding of the main graph: value id -> the user's tensor.
  const std::unordered_map<int, Tensor>* bound = nullptr;
  // Values the caller asked for besides the graph outputs (main graph only): kept to the end.
  const std::vector<bool>* keep = nullptr;
  // RunOptions::terminate, or a flag that stays false: read before every node of every
  // frame (one relaxed load), so a long Loop body can be cancelled between its nodes.
  const std::atomic<bool>* terminate = &never_terminate;
  static const std::atomic<bool> never_terminate;
};

// The executor's frame of one graph execution (declared opaque in kernels/kernel.h).
class ExecutionScope {
 public:
  ExecutionScope(const ExecutionPlan& plan, RunState& run, const ExecutionScope* parent = nullptr)
      : plan_(plan), run_(run), parent_(parent), values_(plan.num_values()) {}

  const ExecutionPlan& plan() const { return plan_; }
  RunState& run_state() const { return run_; }
  // The value in slot `id`: a constant of the plan or what the frame holds.
  const Value& value(int id) const { return plan_.is_constant[id] ? plan_.constants[id] : values_[id]; }
  void set(int id, Value v) { values_[id] = std::move(v); }

  // Subgraph frames: reads the outer-scope values from the parent frame.
  void bind_outer_values();
  // Runs every node of the plan in order.
  void run_all();
  // Runs node k: gathers inputs, prepare, compute, stores outputs, releases, profiles.
  void run_node(size_t k);

 private:
  const ExecutionPlan& plan_;
  RunState& run_;
  const ExecutionScope* parent_;
  std::vector<Value> values_;
  std::vector<const Value*> inputs_;  // scratch, reused node to node
  std::vector<Value> outputs_;
};

}  // namespace onnxmini
