// What the profiler stores while a run executes: raw numbers only, formatted at
// write time (profiler/trace_writer.cc). Internal to profiler/.
#pragma once
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "profiler/profiler.h"
#include "core/thread_pool.h"

namespace onnxmini {

// One tensor in a node's input_type_shape / output_type_shape list.
struct TensorRecord {
  DType dtype = DType::Undefined;
  uint32_t rank = 0;
  uint32_t dims_offset = 0;  // into RunTrace::dims
};

// A node's share of the intra-op pool (deltas of ThreadPool::Stats around the node).
struct ThreadStatsRecord {
  int core = -1;  // core of the run's thread after the node
  int64_t distribute_ns = 0, enqueue_ns = 0, run_ns = 0, wait_ns = 0;
  uint32_t blocks_offset = 0, num_blocks = 0;  // into RunTrace::blocks
  uint32_t workers_offset = 0;                 // into RunTrace::worker_runs / worker_cores (num_threads-1 each)
};

// One node execution, or (node == null) one subgraph execution: an If branch, a Loop
// iteration or a Scan step, written as onnxruntime does, a "SequentialExecutor::Execute"
// Session event spanning times.begin_ns..end_ns, after the body's node events.
struct NodeRecord {
  const ProfiledNode* node = nullptr;  // null: a subgraph execution
  NodeTimes times;
  uint32_t tensors_offset = 0;  // inputs then outputs, into RunTrace::tensors
  uint16_t num_inputs = 0, num_outputs = 0;
  int64_t activation_size = 0, parameter_size = 0, output_size = 0;
  double flops = 0, bytes_read = 0, bytes_written = 0;
  const char* variant = nullptr;  // never null once recorded (the kernel name by default)
  const char* isa = nullptr;      // never null once recorded ("portable" by default)
  size_t live_after = 0;
  int32_t thread_stats = -1;  // index into RunTrace::thread_stats, -1 without a pool
  bool done = false;          // node_done() was called
};

class RunTrace {
 public:
  int64_t tid = 0;
  std::thread::id thread_id;
  std::vector<NodeRecord> nodes;
  size_t subgraph_executions = 0;  // records in `nodes` with node == null
  std::vector<TensorRecord> tensors;
  std::vector<int64_t> dims;
  std::vector<ThreadStatsRecord> thread_stats;
  std::vector<int64_t> blocks;
  std::vector<int64_t> worker_runs;
  std::vector<int> worker_cores;
  ThreadPool::Stats last;  // pool snapshot after the previous node
  bool has_pool_stats = false;
  int64_t execute_begin_ns = 0, execute_end_ns = 0, run_begin_ns = 0, run_end_ns = 0;
  size_t peak_bytes = 0;
};

// A finished Session event.
struct SessionRecord {
  std::string name;
  int64_t tid = 0;
  int64_t begin_ns = 0, end_ns = 0;
};

// Everything the writer needs.
struct TraceData {
  ProfileLayout layout = ProfileLayout::Fences;
  bool memory_counters = false;
  int64_t pid = 0;
  int64_t origin_ns = 0;  // steady clock at ts = 0
  std::string pool_name;  // "session-<k>-intra-op", empty without a pool
  std::vector<std::thread::id> worker_ids;
  std::vector<SessionRecord> session_events;
  const std::vector<std::unique_ptr<RunTrace, RunTraceDeleter>>* runs = nullptr;
};

// The whole file text: "[\n" ... "]\n" in onnxruntime's byte layout.
std::string format_trace(const TraceData& data);
// Number of events one recorded node produces in a layout.
int events_per_node(ProfileLayout layout, bool memory_counters);
// Appends `s` as JSON string content (no quotes): escapes ", \ and control characters.
void append_json_escaped(std::string& out, const std::string& s);

}  // namespace onnxmini
