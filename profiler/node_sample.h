// What the profiler is told about nodes, as plain records (no Value, no kernel):
//   ProfiledNode - static facts, built once per node when the session is created;
//   NodeSample   - one execution of a node: tensors, work counters, pool counters;
//   NodeTimes    - its four timestamps.
// The runtime fills them (runtime/profiler_feed.cc); nothing here owns tensor data.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/kernel_stats.h"
#include "core/thread_pool.h"
#include "onnxmini/dtype.h"

namespace onnxmini {

// Static facts about a node. Node indices are unique only within one graph: a
// subgraph's nodes (If/Loop/Scan bodies) carry their own graph number.
struct ProfiledNode {
  std::string event_name;  // node name, or "<OpType>_<node_index>" when the name is empty
  std::string op_type;
  int node_index = 0;                    // index in its graph
  std::vector<bool> input_is_parameter;  // per input slot: constant initializer (not overridable by a feed)
  std::string kernel_name;               // which onnxmini kernel runs it
  int graph = 0;                         // 0: the model's main graph; subgraphs: numbered by the runtime
};

// Steady-clock timestamps of one node execution:
//   begin     - the executor starts the node (gathering inputs)
//   prepared  - the kernel's prepare() returned (shapes inferred, outputs allocated)
//   computed  - the kernel's compute() returned
//   end       - inputs released, bookkeeping done
struct NodeTimes {
  int64_t begin_ns = 0, prepared_ns = 0, computed_ns = 0, end_ns = 0;
};

// One tensor a node read or wrote. `dims` points into the caller's tensor and
// needs to stay valid only during Profiler::node(), which copies it.
struct TensorSample {
  DType dtype = DType::Undefined;
  const int64_t* dims = nullptr;
  uint32_t rank = 0;
  int64_t bytes = 0;
  int input_slot = -1;  // inputs: the node's input index (ProfiledNode::input_is_parameter); outputs: -1
};

// One execution of a node, taken right after compute() while its inputs are alive.
// The caller keeps one NodeSample and refills it for every node (clear() keeps
// the vectors' capacity, so a warmed-up run does not allocate).
struct NodeSample {
  std::vector<TensorSample> inputs;   // tensor inputs present in this run (absent optionals, sequences, maps left out)
  std::vector<TensorSample> outputs;  // tensor outputs, same rule
  KernelStats counters;               // what the kernel reported (flops, bytes, variant)
  // The intra-op pool's counters right after the node; the profiler turns consecutive
  // snapshots into per-node deltas. Null: no pool statistics for this node.
  const ThreadPool::Stats* pool_stats = nullptr;

  void clear() {
    inputs.clear();
    outputs.clear();
    counters = KernelStats{};
    pool_stats = nullptr;
  }
};

}  // namespace onnxmini
