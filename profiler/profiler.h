// Records per-node timings of session runs and writes them in onnxruntime's
// trace format (see docs/profiler.md and ../shared/docs/ort-trace-format.md).
// The runtime drives it: the executor reports each node with four timestamps
//   begin     - the executor starts the node (gathering inputs)
//   prepared  - the kernel's prepare() returned (shapes inferred, outputs allocated)
//   computed  - the kernel's compute() returned
//   end       - inputs released, bookkeeping done
// giving fence_before = prepared-begin, kernel_time = computed-prepared, fence_after = end-computed.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/kernel_stats.h"
#include "core/logging.h"
#include "onnxmini/session.h"
#include "onnxmini/value.h"

namespace onnxmini {

class ThreadPool;

// Static facts about a node, built once at session creation.
struct ProfiledNode {
  std::string event_name;   // node name, or "<OpType>_<node_index>" when the name is empty
  std::string op_type;
  int node_index = 0;
  std::vector<bool> input_is_parameter;  // constant initializer (not overridable by a feed)
  std::string kernel_name;  // which onnxmini kernel runs it
};

struct NodeTimes {
  int64_t begin_ns = 0, prepared_ns = 0, computed_ns = 0, end_ns = 0;  // steady clock
};

// One run's events, filled by the executor's thread and handed back at end_run.
class RunTrace;
struct RunTraceDeleter {
  void operator()(RunTrace* run) const;
};
using RunTracePtr = std::unique_ptr<RunTrace, RunTraceDeleter>;

class Profiler {
 public:
  // Warnings (event cap reached, trace file not written) go to `log`, which must outlive the profiler.
  Profiler(const SessionOptions& options, ThreadPool* pool, const Logger& log = default_logger());
  ~Profiler();  // writes the file if end_profiling() was not called

  static int64_t now_ns();  // steady clock
  int64_t start_time_ns() const;  // profiling start (ts 0: model loading began), system clock ns since epoch
  bool enabled() const;

  // Session-level events: "model_loading_uri", "model_loading_array", "session_initialization".
  void session_event(const char* name, int64_t begin_ns, int64_t end_ns);

  // Returns null when this run is not recorded (profiling off, warm-up skipped, window over).
  RunTracePtr begin_run();
  // Right after compute(), inputs still alive: the node's shapes, sizes and counters.
  // (This bookkeeping falls inside the node's fence_after.)
  void node(RunTrace& run, const ProfiledNode& node, const std::vector<const Value*>& inputs,
            const std::vector<Value>& outputs, const KernelStats& stats);
  // After the node's inputs were released: its four timestamps and the live
  // intermediate bytes at that point. Completes the event opened by node().
  void node_done(RunTrace& run, const NodeTimes& times, size_t live_bytes_after);
  // execute_* bracket the node loop ("SequentialExecutor::Execute"); run_* the whole call ("model_run").
  void end_run(RunTracePtr run, int64_t execute_begin_ns, int64_t execute_end_ns, int64_t run_begin_ns,
               int64_t run_end_ns, size_t peak_bytes);

  // Writes the trace; returns its path, "" on a second call.
  std::string end_profiling();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace onnxmini
